"""Tests of the checks a Device makes when it is built (iobound/device_spec.py).

A device no GPU could be is refused where it is made, naming the field: a blank name
(a tune measured everything, then could not log it), an arch that is not ``sm_<digits>``
of its compute capability, a compute capability below 1.0, a block larger than an SM
(threads or static shared memory), a warp that is not a power of two. Looking a preset
up by something that is not a string is refused as canonical_device_name refuses it.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iobound.device_spec import Device

from iobound.devices import DEVICES, canonical_device_name, get_device
from iobound.errors import InvalidInputError

V100 = get_device("v100")


@pytest.mark.parametrize("changes, needle", [
    ({"name": ""}, "device name must be a printable, not blank string"),
    ({"name": "  "}, "device name must be a printable, not blank string"),
    ({"name": "a\nb"}, "device name must be a printable, not blank string"),
    ({"arch": ""}, r"arch must be spelled sm_<digits>"),
    ({"arch": "sm_xx"}, r"arch must be spelled sm_<digits>"),
    ({"arch": "sm_80"}, r"arch 'sm_80' is not that of compute capability \(7, 0\)"),
    ({"compute_capability": (0, 0), "arch": "sm_00"}, r"compute_capability must be at least \(1, 0\)"),
    ({"max_threads_per_block": 4096}, "max_threads_per_block=4096 is above max_threads_per_sm=2048"),
    ({"shared_mem_per_block_bytes": 10 ** 6}, "shared_mem_per_block_bytes=1000000 is above"),
    ({"warp_size": 7}, "warp_size=7 must be a power of two"),
    ({"warp_size": 2048}, "warp_size=2048 must be a power of two .* of at most max_threads_per_block"),
    ({"aliases": None}, "aliases must be a tuple of strings"),
    ({"aliases": "v100"}, "aliases must be a tuple of strings"),
    ({"sm_count": 1}, r"fp32_peak_gflops=15700 is more than twice .* = 195\.84"),
    ({"clock_mhz": 700}, r"fp32_peak_gflops=15700 is more than twice"),
])
def test_a_device_no_gpu_could_be_is_refused(changes, needle):
    """Were all accepted (aliases=None: TypeError)."""
    with pytest.raises(InvalidInputError, match=needle):
        dataclasses.replace(V100, **changes)


def test_every_preset_passes_the_checks():
    for dev in DEVICES.values():
        assert Device.from_dict(dev.to_dict()) == dev


def test_a_feature_arch_and_a_gpu_of_another_vendor_are_devices():
    """sm_90a is an arch of (9, 0); a 64-thread warp (AMD's) is a power of two."""
    h100 = get_device("h100")
    assert dataclasses.replace(h100, arch="sm_90a").arch == "sm_90a"
    assert dataclasses.replace(V100, warp_size=64).warp_size == 64


@given(threads=st.integers(1, 1 << 14), warp=st.integers(1, 1 << 11))
def test_threads_and_warp_are_accepted_exactly_when_consistent(threads, warp):
    """Property: a block of ``threads`` on an SM of 2048 threads with warps of ``warp``
    is a device iff the block fits the SM and the warp is a power of two that fits the block."""
    ok = threads <= V100.max_threads_per_sm and warp & (warp - 1) == 0 and warp <= threads
    if ok:
        dataclasses.replace(V100, max_threads_per_block=threads, warp_size=warp)
    else:
        with pytest.raises(InvalidInputError):
            dataclasses.replace(V100, max_threads_per_block=threads, warp_size=warp)


@pytest.mark.parametrize("name", [["v100"], ("v100",), 5, None])
def test_a_preset_is_looked_up_by_a_string_only(name):
    """Was: get_device(["v100"]) gave the V100 (through str()); canonical_device_name
    refused the same."""
    for look_up in (get_device, canonical_device_name):
        with pytest.raises(InvalidInputError, match="device name must be a string"):
            look_up(name)


def test_a_new_device_name_is_held_to_a_length_a_stored_one_is_not(tmp_path):
    """A 10,000-character --device was stored and then widened every table and error line;
    a device built or a file imported under such a name is refused, while a database that
    already holds one is still read (its records stay removable)."""
    import dataclasses

    from iobound.device_checks import DEVICE_NAME_CHARS, check_device_name
    from iobound.devices import get_device
    from search.db.file_import import file_device
    long = "g" * (DEVICE_NAME_CHARS + 1)
    with pytest.raises(InvalidInputError, match=f"at most {DEVICE_NAME_CHARS} characters"):
        dataclasses.replace(get_device("v100"), name=long)
    with pytest.raises(InvalidInputError, match=f"at most {DEVICE_NAME_CHARS} characters"):
        file_device(tmp_path / "k.json", "", long)
    assert file_device(tmp_path / "k.json", "", long[:DEVICE_NAME_CHARS]) == long[:-1]
    assert check_device_name(long) == long


def test_a_peak_within_twice_its_clock_figure_is_a_device():
    """A datasheet's boost-clock peak beside a base clock is a GPU; the peak lowered with
    the SMs is too."""
    v100 = get_device("v100")
    dataclasses.replace(v100, clock_mhz=1245)  # the V100's base clock
    dataclasses.replace(v100, sm_count=1, fp32_peak_gflops=v100.fp32_peak_gflops / 80)
