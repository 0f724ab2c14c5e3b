"""Resident blocks per SM against the CUDA Occupancy Calculator's rules, and the
occupancy the features predict against ptxas' real resource use.

Ground truth (not the project's model): the CUDA Occupancy Calculator allocates a warp's
registers in units of 256 and counts the warps a register file holds in multiples of 4;
shared memory is allocated in units of 256 B (CC < 8.0) or 128 B (CC >= 8.0), and from
CC 8.0 on every block also takes 1 KiB of shared memory reserved for the system (CUDA
C++ Programming Guide: an A100 SM has 164 KiB, a block gets at most 163 KiB;
``cudaDevAttrReservedSharedMemoryPerBlock``).

Model v4 ignored the allocation units and estimated registers as a flat overhead (direct
kernels use about twice that); model v5 on follows the Calculator exactly and estimates
registers by a fit to ptxas (``kernels.limits.COMPILED_REGISTERS``), so the blocks per SM
it gives are the Calculator's from the estimated registers, and the estimate is within the
fit's spread of ptxas' count.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from hypothesis import given, strategies as st

from iobound.devices import get_device
from iobound.layer import ConvLayer
from benchmarks.register_estimate import calculator_blocks  # the Calculator's rules
from kernels.limits import fits_register_file, resident_blocks_per_sm


@pytest.mark.parametrize("device, threads, shared, regs, expected", [
    # 33 registers: a warp takes 1280 (not 1056), the file holds 51 -> 48 warps: 6 blocks, not 7
    ("v100", 256, 0, 33, 6),
    # 200 registers: 6400 a warp, 10 warps -> 8: 8 one-warp blocks, not 10
    ("v100", 32, 0, 200, 8),
    # 19600 B of shared memory take 19712 B: 4 blocks in 96 KiB, not 5
    ("v100", 32, 19600, 32, 4),
    # A100: 32 KiB + the 1 KiB reserved per block: 4 blocks in 164 KiB, not 5
    ("a100", 32, 32768, 32, 4),
    # H100: 57600 B + 1 KiB: 3 blocks in 228 KiB, not 4
    ("h100", 32, 57600, 32, 3),
])
def test_resident_blocks_follow_the_allocation_rules(device, threads, shared, regs, expected):
    d = get_device(device)
    assert calculator_blocks(d, threads, shared, regs) == expected
    assert int(resident_blocks_per_sm(d, threads, shared, regs)) == expected


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc (ptxas' register count)")
@pytest.mark.parametrize("algorithm, config, spread", [
    # direct 3x3, 64 accumulators a thread: v4 estimated 88 registers, ptxas uses ~160
    ("direct", dict(x=8, y=2, z=16, alpha=2, tx=4, ty=1, tz=1), 40),
    # Winograd F(2x2,3x3), one tile and one channel a thread: v4 estimated 72, ptxas ~56-64
    ("winograd", dict(e=2, x=2, y=14, z=16, tx=1, ty=7, tz=16), 8),
])
def test_model_occupancy_matches_the_compiled_kernel(algorithm, config, spread, tmp_path):
    """The features' registers are within the fit's spread of ptxas' count, and their
    blocks per SM are the calculator's from those registers and ptxas' shared memory
    (A100, sm_80)."""
    from kernels.analytic import FEATURE_NAMES, analytic_features
    from kernels.config import config_from_dict
    from kernels.generate import generate
    from kernels.nvcc import compile_cubin

    layer = ConvLayer(n=1, c_in=64, h_in=56, w_in=56, c_out=64, k_h=3, k_w=3, padding=1)
    a100 = get_device("a100")
    cfg = config_from_dict(config, algorithm)
    built = compile_cubin(generate(layer, cfg), "sm_80", cache_root=tmp_path)
    assert built.ok, built.log[-500:]
    knobs = np.array([[config[p] for p in type(cfg).params]])
    f = dict(zip(FEATURE_NAMES, analytic_features(layer, a100, algorithm, knobs)[0]))
    assert abs(f["regs_per_thread"] - built.registers) <= spread, (f["regs_per_thread"], built.registers)
    assert f["shared_bytes"] == built.shared_bytes
    assert int(f["blocks_per_sm"]) == calculator_blocks(a100, cfg.threads, built.shared_bytes,
                                                        int(f["regs_per_thread"]))


@given(st.sampled_from(["v100", "a100", "h100", "t4"]),
       st.lists(st.integers(1, 1024), min_size=1, max_size=5), st.integers(0, 48 * 1024),
       st.integers(1, 255))  # the reference divides by the registers
def test_resident_blocks_broadcast_a_scalar_beside_an_array(device, threads, shared, regs):
    """Documented as vectorised: an array of block sizes with one shared size and one
    register count is each block size's answer (it raised numpy's inhomogeneous-shape
    ValueError: the limits' terms were not broadcast before their minimum)."""
    d = get_device(device)
    together = resident_blocks_per_sm(d, np.array(threads), shared, regs)
    assert together.tolist() == [float(resident_blocks_per_sm(d, t, shared, regs))
                                 for t in threads]
    assert together.tolist() == [float(calculator_blocks(d, t, shared, regs)) for t in threads]


@given(st.lists(st.integers(1, 4096), min_size=1, max_size=5), st.integers(1, 64))
def test_a_list_of_threads_is_read_as_an_array(threads, words):
    """fits_register_file took a Python list of threads and multiplied it by a numpy
    integer, which repeats a list (then failed comparing a list): a list is its array."""
    assert fits_register_file(words, threads, "direct", 65536).tolist() == \
        fits_register_file(words, np.array(threads), "direct", 65536).tolist()
