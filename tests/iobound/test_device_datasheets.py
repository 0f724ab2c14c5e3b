"""Every device preset's numbers against the sources cited in iobound/devices.py.

References, written out here independently of the code:

* per compute capability: the CUDA C++ Programming Guide table "Technical Specifications
  per Compute Capability" (shared memory per SM, opt-in shared memory per block, resident
  threads and blocks per SM, 64 K 32-bit registers per SM);
* per product: the NVIDIA datasheets / whitepapers cited in each preset's ``source``
  (SMs, CUDA cores, boost clock, DRAM bandwidth, L2, FP32 peak); for GDDR boards the
  bandwidth is also derived from the memory interface, ``bus bits * Gbps per pin / 8``.
"""

import re

import pytest

from iobound.devices import DEVICES, get_device

KIB, MIB = 1024, 1024 * 1024

#: CC -> (shared/SM KiB, opt-in shared/block KiB, threads/SM, blocks/SM, registers/SM)
CUDA_GUIDE = {
    (5, 2): (96, 48, 2048, 32, 65536),
    (6, 1): (96, 48, 2048, 32, 65536),
    (7, 0): (96, 96, 2048, 32, 65536),
    (7, 5): (64, 64, 1024, 16, 65536),
    (8, 0): (164, 163, 2048, 32, 65536),
    (8, 6): (100, 99, 1536, 16, 65536),
    (9, 0): (228, 227, 2048, 32, 65536),
}

#: name -> (CC, SMs, CUDA cores, boost MHz, DRAM GB/s, L2 bytes, FP32 GFLOP/s), datasheets.
DATASHEETS = {
    "V100-SXM2": ((7, 0), 80, 5120, 1530, 900, 6 * MIB, 15_700),
    "A100-SXM4-40GB": ((8, 0), 108, 6912, 1410, 1555, 40 * MIB, 19_500),
    "A100-PCIE-40GB": ((8, 0), 108, 6912, 1410, 1555, 40 * MIB, 19_500),
    "H100-SXM5-80GB": ((9, 0), 132, 16896, 1980, 3350, 50 * MIB, 67_000),
    "RTX-A4000": ((8, 6), 48, 6144, 1560, 448, 4 * MIB, 19_200),
    "RTX-A6000": ((8, 6), 84, 10752, 1800, 768, 6 * MIB, 38_700),
    "RTX-3090": ((8, 6), 82, 10496, 1695, 936, 6 * MIB, 35_580),
    "T4": ((7, 5), 40, 2560, 1590, 320, 4 * MIB, 8_100),
    "GTX-1080-Ti": ((6, 1), 28, 3584, 1582, 484, 2816 * KIB, 11_340),
    "TITAN-X-Maxwell": ((5, 2), 24, 3072, 1075, 336.5, 3 * MIB, 6_605),
}

#: GDDR boards: (bus width in bits, data rate in Gbps per pin) from the datasheets.
GDDR_INTERFACE = {
    "RTX-A4000": (256, 14), "RTX-A6000": (384, 16), "RTX-3090": (384, 19.5),
    "T4": (256, 10), "GTX-1080-Ti": (352, 11), "TITAN-X-Maxwell": (384, 7.01),
}


def test_every_preset_has_a_datasheet_row():
    assert set(DATASHEETS) == set(DEVICES)


@pytest.mark.parametrize("name", sorted(DEVICES))
def test_per_compute_capability_limits_follow_the_cuda_guide(name):
    """Shared memory, threads, blocks and registers per SM are the guide's for the CC."""
    d = get_device(name)
    smem, optin, threads, blocks, regs = CUDA_GUIDE[d.compute_capability]
    assert (d.shared_mem_per_sm_bytes, d.shared_mem_per_block_optin_bytes,
            d.max_threads_per_sm, d.max_blocks_per_sm, d.registers_per_sm) == (
        smem * KIB, optin * KIB, threads, blocks, regs)


@pytest.mark.parametrize("name", sorted(DEVICES))
def test_product_numbers_follow_the_datasheets(name):
    """SMs, cores, clock, bandwidth, L2 and FP32 peak are the cited datasheet's."""
    d = get_device(name)
    cc, sms, cores, mhz, bw, l2, peak = DATASHEETS[name]
    assert (d.compute_capability, d.sm_count, d.sm_count * d.fp32_cores_per_sm, d.clock_mhz,
            d.dram_bandwidth_gbs, d.l2_bytes, d.fp32_peak_gflops) == (
        cc, sms, cores, mhz, bw, l2, peak)


@pytest.mark.parametrize("name", sorted(GDDR_INTERFACE))
def test_gddr_bandwidth_is_bus_width_times_data_rate(name):
    """Peak DRAM bandwidth = bus bits x Gbps per pin / 8, within 1%."""
    bits, gbps = GDDR_INTERFACE[name]
    assert get_device(name).dram_bandwidth_gbs == pytest.approx(bits * gbps / 8, rel=0.01)


@pytest.mark.parametrize("name", sorted(DEVICES))
def test_core_counts_quoted_in_the_source_match(name):
    """Where a preset's source quotes 'N CUDA cores', SMs x cores per SM is N."""
    d = get_device(name)
    for quoted in re.findall(r"(\d+) CUDA cores", d.source):
        assert d.sm_count * d.fp32_cores_per_sm == int(quoted)


@pytest.mark.parametrize("name", sorted(DEVICES))
def test_machine_balance_is_flops_per_byte(name):
    """The ridge point is FLOP/s over bytes/s (not its inverse): > 1 on every preset."""
    d = get_device(name)
    assert d.machine_balance_flop_per_byte == pytest.approx(d.fp32_peak_gflops / d.dram_bandwidth_gbs)
    assert d.machine_balance_flop_per_byte > 1


def test_device_names_follow_the_preset_table_not_the_alphabet():
    """device_names() is in table order: the DEVICES mapping's, which is not sorted."""
    from iobound.devices import device_names
    assert device_names() == [d.name for d in DEVICES.values()]
    assert device_names() != sorted(device_names())
