"""Numeric edges of kernels' vectorised functions found by probing (session 45): a bool
inside a list was read as 1 (numpy makes [True, 64] integers), and arrays that do not
broadcast or ragged rows were numpy's raw ValueError; the contract is one
InvalidInputError naming the argument, and equal answers for a list and its array."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from iobound.devices import get_device
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from kernels import limits as L
from kernels.analytic import analytic_features, knob_matrix
from kernels.perf_model import estimate_ms

V100 = get_device("v100")


@pytest.mark.parametrize("call", [
    lambda: L.check_counts("threads", [True, 64], 1),
    lambda: L.resident_blocks_per_sm(V100, [True, 64], 0, 32),
    lambda: L.thread_registers([True, 3], "direct"),
    lambda: knob_matrix([True, 4, 2, 1, 2, 2, 1]),
    lambda: analytic_features(ConvLayer(1, 1, 6, 6, 2, 3, 3), V100, "direct",
                              [[4, 4, 2, True, 2, 2, 1]]),
    lambda: estimate_ms(1e6, 0, 16, 8, [False, 1.0], V100),
    lambda: L.block_fits([[True, 1, 1], [2, 2, 2]]),
], ids=["check_counts", "resident_blocks", "thread_registers", "knob_matrix",
        "analytic_features", "estimate_ms", "block_fits"])
def test_a_bool_in_a_list_is_no_number(call):
    with pytest.raises(InvalidInputError, match="bool|finite numbers|triple"):
        call()


@pytest.mark.parametrize("call, names", [
    (lambda: L.resident_blocks_per_sm(V100, [128, 256], [0, 0, 0], 32),
     "threads, shared_bytes, regs_per_thread"),
    (lambda: L.compiled_registers([16, 32], "direct", V100, [32, 64, 128]),
     "words_per_thread, tile_elements, threads"),
    (lambda: L.fits_register_file([16, 32], [32, 64, 128], "direct", 65536),
     "words_per_thread, threads, registers_per_sm"),
    (lambda: L.thread_registers([16, 32], "direct", [100, 200, 255]),
     "words_per_thread, max_per_thread"),
    (lambda: estimate_ms(1e6, 1e6, [1, 2], [1, 2, 3], 1.0, V100), "active_warps, ilp"),
])
def test_arrays_that_do_not_broadcast_are_named(call, names):
    with pytest.raises(InvalidInputError, match=f"{names}.* must broadcast together"):
        call()


@pytest.mark.parametrize("rows", [[[32, 8, 1], [1, 1]], (np.array([32]), 8, 1)])
def test_ragged_block_rows_are_named(rows):
    with pytest.raises(InvalidInputError, match="block must be a triple"):
        L.block_fits(rows)


@given(st.lists(st.integers(1, 1024), min_size=1, max_size=4), st.integers(1, 64),
       st.integers(0, 1024))
def test_lists_are_their_arrays_and_one_call_per_element(threads, words, tile):
    """Element-wise answers: a list is its array, a number beside it broadcasts."""
    regs = L.compiled_registers(words, "direct", V100, threads, tile)
    assert regs.tolist() == L.compiled_registers(words, "direct", V100, np.array(threads),
                                                 tile).tolist()
    assert regs.tolist() == [float(L.compiled_registers(words, "direct", V100, t, tile))
                             for t in threads]
    times = estimate_ms(1e6, 1e6, threads, 4, 1.0, V100)
    assert times.tolist() == [float(estimate_ms(1e6, 1e6, t, 4, 1.0, V100)) for t in threads]


@given(st.sampled_from(["v100", "a100", "t4"]), st.integers(1, 4096), st.integers(1, 400))
def test_a_block_past_the_per_block_limits_never_launches(device, threads, regs):
    """resident_blocks_per_sm: "0 means the block cannot be launched"; a 2048-thread block
    was 1 per SM and a thread of 300 registers 4 blocks, where CUDA launches none."""
    d = get_device(device)
    blocks = float(L.resident_blocks_per_sm(d, threads, 0, regs))
    if threads > d.max_threads_per_block or regs > d.registers_per_thread_max:
        assert blocks == 0.0
    else:
        assert blocks >= 0.0
        assert blocks == float(L.resident_blocks_per_sm(d, [threads], 0, regs)[0])


@given(st.integers(1, 2**31), st.integers(1, 70000), st.integers(1, 70000))
def test_one_grid_as_an_array_is_the_grid_as_a_list(x, y, z):
    """grid_fits took [x, y, z] and refused np.array([x, y, z]) (block_fits took both)."""
    assert L.grid_fits(np.array([x, y, z])) == L.grid_fits([x, y, z])


@pytest.mark.parametrize("call, message", [
    (lambda: L.thread_registers(16, "direct", 0), "max_per_thread must be finite numbers >= 1"),
    (lambda: estimate_ms(1e6, 0, 16, 8, 5.0, V100), r"utilisation must be in \(0, 1\]"),
    (lambda: estimate_ms(1e6, 0, 16, 8, 0.0, V100), r"utilisation must be in \(0, 1\]"),
])
def test_numbers_outside_their_meaning_are_refused(call, message):
    """A register cap of 0 fit every block; a utilisation of 5 was taken as 1, 0 as 1e-9."""
    with pytest.raises(InvalidInputError, match=message):
        call()
