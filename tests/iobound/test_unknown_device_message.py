"""An unknown device name is echoed cut short, as other messages cut what the user typed."""
import pytest

from iobound.devices import get_device
from iobound.errors import UnknownPresetError


def test_a_long_unknown_device_name_is_cut_short():
    with pytest.raises(UnknownPresetError) as exc:
        get_device("x" * 100_000)
    assert len(str(exc.value)) < 1000 and "unknown device 'xxxx" in str(exc.value)
