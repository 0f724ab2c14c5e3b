"""An unknown network or layer preset name is echoed cut short, as an unknown device name
and the layer spec's key=value errors are (the CLI prints it as one stderr line)."""
import pytest

from iobound.errors import UnknownPresetError
from iobound.layer_spec import parse_layer_spec
from iobound.networks import get_layer, network_layers

LONG = "x" * 100_000


@pytest.mark.parametrize("call, arg, start", [
    (network_layers, LONG, "unknown network 'xxxx"),
    (get_layer, LONG + ".conv1", "unknown network 'xxxx"),
    (get_layer, "alexnet." + LONG, "unknown layer 'alexnet.xxxx"),
    (get_layer, "resnet50.conv3_1" + LONG, "unknown layer 'resnet50.conv3_1xxxx"),
    (parse_layer_spec, "alexnet." + LONG, "unknown layer 'alexnet.xxxx"),
])
def test_a_long_unknown_preset_name_is_cut_short(call, arg, start):
    with pytest.raises(UnknownPresetError) as exc:
        call(arg)
    msg = str(exc.value)
    assert len(msg) < 1000 and msg.startswith(start)
    assert any(f"{c}," in msg for c in ("alexnet", "conv1"))   # the choices are still listed


def test_a_short_unknown_name_is_echoed_whole():
    with pytest.raises(UnknownPresetError, match=r"unknown layer 'alexnet\.conv9'; alexnet has conv1"):
        get_layer("alexnet.conv9")
    with pytest.raises(UnknownPresetError, match=r"unknown network 'resnet51'; choose one of"):
        network_layers("resnet51")
