"""The hardware rules in their one home, against the checks that use them."""

import numpy as np
from hypothesis import given, strategies as st

from iobound.devices import DEVICES
from kernels.limits import (COMPILED_REGISTERS, GRID_X_LIMIT, GRID_YZ_LIMIT, REGISTER_OVERHEAD, compiled_registers,
                            fits_register_file, grid_fits, launch_bounds_registers,
                            resident_blocks_per_sm, shared_allocation, thread_registers)

devices = st.sampled_from(sorted(DEVICES))


@given(devices, st.integers(1, 1024), st.integers(0, 200_000), st.integers(1, 255))
def test_resident_blocks_respect_every_sm_limit(name, threads, shared, regs):
    """The resident blocks fit the SM's block, shared memory, thread and register limits
    under the allocation units, and one more block would break one of them."""
    d = DEVICES[name]
    b = int(resident_blocks_per_sm(d, threads, shared, regs))
    warps = -(-threads // d.warp_size)
    warp_regs = -(-regs * d.warp_size // 256) * 256

    def fits(k):
        return (k <= d.max_blocks_per_sm
                and k * shared_allocation(d, max(shared, 1)) <= d.shared_mem_per_sm_bytes
                and k * warps * d.warp_size <= d.max_threads_per_sm
                # the file holds warps in groups of 4
                and -(-k * warps // 4) * 4 * warp_regs <= d.registers_per_sm)
    assert fits(b) and not fits(b + 1)


@given(devices, st.integers(1, 1024), st.integers(0, 300), st.sampled_from(sorted(COMPILED_REGISTERS)),
       st.integers(0, 64))
def test_compiled_registers_let_one_block_launch(name, threads, words, algorithm, tile):
    """However many words a thread holds, the estimate stays within what
    __launch_bounds__ leaves (one block resident, at most 255) and grows with the words."""
    d = DEVICES[name]
    regs = int(compiled_registers(words, algorithm, d, threads, tile))
    assert 1 <= regs <= launch_bounds_registers(d, threads) <= 255
    assert resident_blocks_per_sm(d, threads, 0, regs) >= 1
    assert compiled_registers(words + 1, algorithm, d, threads, tile) >= regs


@given(st.integers(0, 300), st.sampled_from(sorted(REGISTER_OVERHEAD)), st.integers(1, 1024))
def test_register_estimate_is_capped_and_monotone(words, algorithm, threads):
    """A thread's registers grow with its words up to the cap; more threads never fit better."""
    regs = int(thread_registers(words, algorithm))
    assert regs == min(words + REGISTER_OVERHEAD[algorithm], 255)
    if fits_register_file(words, threads + 1, algorithm, 65536):
        assert fits_register_file(words, threads, algorithm, 65536)


def test_grid_limits_are_x_2_31_and_y_z_65535():
    """x may exceed 65535 up to 2**31 - 1; y and z may not."""
    assert grid_fits((GRID_X_LIMIT, GRID_YZ_LIMIT, GRID_YZ_LIMIT))
    assert not grid_fits((GRID_X_LIMIT + 1, 1, 1))
    assert not grid_fits((1, GRID_YZ_LIMIT + 1, 1)) and not grid_fits((1, 1, GRID_YZ_LIMIT + 1))


def test_vectorised_like_scalars():
    """Arrays give the same numbers as one value at a time."""
    d = DEVICES["V100-SXM2"]
    t, s, r = np.array([32, 256, 1000]), np.array([0, 4096, 40000]), np.array([40, 64, 255])
    assert resident_blocks_per_sm(d, t, s, r).tolist() == [
        float(resident_blocks_per_sm(d, a, b, c)) for a, b, c in zip(t, s, r)]


# -- bad input -----------------------------------------------------------------------------

import pytest  # noqa: E402

from iobound.errors import InvalidInputError  # noqa: E402


@pytest.mark.parametrize("threads, shared, regs, match", [
    (0, 0, 40, "threads"), (-32, 0, 40, "threads"), (float("nan"), 0, 40, "threads"),
    (32, -1, 40, "shared_bytes"), (32, 0, float("nan"), "regs_per_thread"),
    ([32, 0], 0, 40, "threads"), ("a", 0, 40, "numbers"),
])
def test_resident_blocks_refuse_impossible_blocks(threads, shared, regs, match):
    """A block of 0 threads 'fitted' 32 times, -32 threads -64 times, NaN gave NaN: each
    is an InvalidInputError naming the argument."""
    with pytest.raises(InvalidInputError, match=match):
        resident_blocks_per_sm(DEVICES["V100-SXM2"], threads, shared, regs)


def test_rules_refuse_unknown_algorithms_devices_and_grids():
    """An unknown algorithm (was KeyError), a device name (AttributeError) or a grid that is
    no triple (IndexError / TypeError) are InvalidInputErrors."""
    with pytest.raises(InvalidInputError, match="unknown algorithm"):
        thread_registers(3, "foo")
    with pytest.raises(InvalidInputError, match="unknown algorithm"):
        fits_register_file(3, 2, ["direct"], 65536)
    with pytest.raises(InvalidInputError, match="device"):
        resident_blocks_per_sm("v100", 32, 0, 40)
    for grid in ((1, 2), None, 5):
        with pytest.raises(InvalidInputError, match="grid"):
            grid_fits(grid)
