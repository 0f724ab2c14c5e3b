"""Device presets: look-ups, limits per compute capability, vendor numbers."""

import gzip
import json
import re

import pytest

from iobound.device_spec import Device

from iobound.devices import DEVICES, device_names, get_device
from iobound.errors import UnknownPresetError


@pytest.mark.parametrize("alias, name", [
    ("v100", "V100-SXM2"), ("Tesla V100-SXM2-32GB", "V100-SXM2"),
    ("a100", "A100-SXM4-40GB"), ("a100-pcie-40gb", "A100-PCIE-40GB"),
    ("NVIDIA A100-PCIE-40GB", "A100-PCIE-40GB"), ("h100", "H100-SXM5-80GB"),
    ("gtx1080ti", "GTX-1080-Ti"), ("1080ti", "GTX-1080-Ti"),
    ("NVIDIA GeForce GTX 1080 Ti", "GTX-1080-Ti"), ("NVIDIA RTX A4000", "RTX-A4000"),
    ("rtx a6000", "RTX-A6000"), ("Tesla T4", "T4"), ("GeForce GTX TITAN X", "TITAN-X-Maxwell"),
])
def test_aliases_resolve(alias, name):
    """Aliases and CUDA-reported names find the intended preset, case-insensitively."""
    assert get_device(alias).name == name
    assert get_device(alias.upper()).name == name


def test_every_name_and_alias_resolves_to_itself():
    """Each preset's own name and aliases map back to that preset."""
    for dev in DEVICES.values():
        for label in (dev.name, *dev.aliases):
            assert get_device(label) is dev


def test_unknown_device_lists_names():
    """An unknown name raises UnknownPresetError (a KeyError) naming the presets."""
    with pytest.raises(UnknownPresetError, match="A100-PCIE-40GB") as info:
        get_device("rtx9090")
    assert isinstance(info.value, KeyError)
    assert "rtx9090" in str(info.value)


@pytest.mark.shared_data
def test_recorded_tuning_space_devices_resolve(shared_data):
    """The device names in the recorded tuning spaces are all presets."""
    names = set()
    for path in sorted((shared_data / "tuning-spaces").glob("*.json*")):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as fh:
            m = re.search(r'"device_name"\s*:\s*"([^"]+)"', fh.read(4096))
        if m:
            names.add(m.group(1))
    assert {"NVIDIA A100-PCIE-40GB", "NVIDIA RTX A4000", "NVIDIA RTX A6000"} <= names
    for name in names:
        get_device(name)


def test_names_listed_in_table_order():
    """device_names() lists every preset once."""
    names = device_names()
    assert len(names) == len(set(names)) == len(DEVICES) >= 10


@pytest.mark.parametrize("name", list(DEVICES))
def test_fp32_peak_matches_cores_times_clock(name):
    """The published FP32 peak equals SMs x cores x 2 FLOP x boost clock within 1%."""
    dev = get_device(name)
    assert dev.fp32_peak_gflops == pytest.approx(dev.fp32_peak_from_clock_gflops, rel=0.01)


@pytest.mark.parametrize("name", list(DEVICES))
def test_limits_are_consistent(name):
    """Static <= opt-in <= per-SM shared memory; threads fit; arch matches CC."""
    d = get_device(name)
    assert d.shared_mem_per_block_bytes <= d.shared_mem_per_block_optin_bytes <= d.shared_mem_per_sm_bytes
    assert d.max_threads_per_block <= d.max_threads_per_sm
    assert d.max_threads_per_sm % d.warp_size == 0
    assert d.arch == "sm_%d%d" % d.compute_capability
    assert "CUDA C++ Programming Guide" in d.source


@pytest.mark.parametrize("name, sms, smem_sm_kib, optin_kib, threads, bw, l2_mib", [
    ("V100-SXM2", 80, 96, 96, 2048, 900, 6),
    ("A100-PCIE-40GB", 108, 164, 163, 2048, 1555, 40),
    ("H100-SXM5-80GB", 132, 228, 227, 2048, 3350, 50),
    ("RTX-A4000", 48, 100, 99, 1536, 448, 4),
    ("RTX-A6000", 84, 100, 99, 1536, 768, 6),
    ("T4", 40, 64, 64, 1024, 320, 4),
    ("GTX-1080-Ti", 28, 96, 48, 2048, 484, 2.75),
])
def test_spot_values(name, sms, smem_sm_kib, optin_kib, threads, bw, l2_mib):
    """Key numbers agree with the whitepapers and the CUDA guide table."""
    d = get_device(name)
    assert (d.sm_count, d.shared_mem_per_sm_bytes, d.shared_mem_per_block_optin_bytes,
            d.max_threads_per_sm, d.dram_bandwidth_gbs, d.l2_bytes) == (
        sms, smem_sm_kib * 1024, optin_kib * 1024, threads, bw, int(l2_mib * 1024 * 1024))


def test_shared_mem_words():
    """Words per block follow the dtype width and the opt-in switch."""
    d = get_device("a100")
    assert d.shared_mem_per_block_words() == 12288
    assert d.shared_mem_per_block_words("fp16") == 24576
    assert d.shared_mem_per_block_words("fp32", opt_in=True) == 163 * 256
    with pytest.raises(ValueError, match="dtype"):
        d.shared_mem_per_block_words("fp12")


def test_to_dict_round_trips_through_json():
    """to_dict is JSON-ready and from_dict rebuilds an equal, frozen Device."""
    for dev in DEVICES.values():
        d = json.loads(json.dumps(dev.to_dict()))
        assert d["compute_capability"] == list(dev.compute_capability)
        assert Device.from_dict(d) == dev


def test_device_is_frozen():
    """Presets cannot be modified in place."""
    with pytest.raises(AttributeError):
        get_device("v100").sm_count = 1


def test_machine_balance():
    """The roofline ridge point is peak FLOP/s over bytes/s."""
    assert get_device("v100").machine_balance_flop_per_byte == pytest.approx(15700 / 900)


@pytest.mark.parametrize("given, stored", [
    ("v100", "V100-SXM2"), ("V100", "V100-SXM2"), ("v100-sxm2-32gb", "V100-SXM2"),
    ("V100-SXM2", "V100-SXM2"), ("a100", "A100-SXM4-40GB"), ("1080ti", "GTX-1080-Ti"),
    ("NVIDIA RTX A4000", "RTX-A4000"),
    ("My lab GPU", "My lab GPU"), ("v200", "v200"),  # not a preset: kept as given
])
def test_canonical_device_name(given, stored):
    """A preset named by an alias is stored under the preset's name, the one `tune --device`
    records, so one device has one name in the tuning database; other names are kept."""
    from iobound.devices import canonical_device_name
    assert canonical_device_name(given) == stored


def test_canonical_name_is_what_tune_records_for_every_alias():
    from iobound.devices import canonical_device_name
    for dev in DEVICES.values():
        for label in (dev.name, *dev.aliases):
            assert canonical_device_name(label) == get_device(label).name == dev.name
