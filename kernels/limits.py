"""The hardware rules a kernel config must obey, and the occupancy they imply: one home.

Device facts (shared memory, threads, registers per SM, warp size) live in
:class:`iobound.devices.Device`; the rules that combine them with a config live here and
every user imports them: :func:`kernels.config.check_config` (one config),
:mod:`search.table1` (the CP-SAT model), :mod:`search.conv_space` (thread tables) and
:mod:`kernels.analytic` (features, occupancy). Functions take numbers or numpy arrays.

* CUDA grids may have at most :data:`GRID_YZ_LIMIT` blocks along y and z, and a block
  at most :data:`MAX_BLOCK_DIM` threads along x, y and z (z: 64 on every compute
  capability, however few threads the block has);
* a thread may hold at most :data:`MAX_ACCUMULATORS_PER_THREAD` register words
  (accumulators, Winograd temporaries): ptxas caps a thread at 255 registers and the
  rest are needed for indices, pointers and operands;
* a thread's registers are estimated as its register words plus
  :data:`REGISTER_OVERHEAD` of its algorithm, capped at the device's maximum, and a
  block's threads times that must fit in an SM's register file (an estimate, and a rough
  one: ptxas gives direct kernels about twice as many, past 255 with spills on 7x7 layers,
  and Winograd kernels fewer);
* resident blocks per SM are the minimum of the device's block limit, its shared memory,
  its threads (rounded up to warps) and its register file over a block's needs (without
  the CUDA Occupancy Calculator's allocation units for registers and shared memory).

The two known gaps are strict-xfail tests (tests/kernels/test_occupancy_hardware_rules.py),
to be closed together with the analytic model's next version.

Examples
--------
>>> from iobound.devices import get_device
>>> v100 = get_device("v100")
>>> int(thread_registers(16, "direct"))
40
>>> bool(fits_register_file(16, 1024, "direct", v100.registers_per_sm))
True
>>> int(resident_blocks_per_sm(v100, threads=256, shared_bytes=12288, regs_per_thread=40))
6
>>> grid_fits((10, 70000, 1))
False
>>> bool(block_fits((1, 1, 80)))
False
"""

from __future__ import annotations

import numpy as np

from iobound.limits import check_number

__all__ = ["GRID_YZ_LIMIT", "MAX_ACCUMULATORS_PER_THREAD", "REGISTER_OVERHEAD",
           "MAX_REGISTERS_PER_THREAD", "MAX_BLOCK_DIM", "thread_registers", "fits_register_file",
           "grid_fits", "block_fits", "resident_blocks_per_sm", "check_timeout"]

#: Most blocks a CUDA grid may have along y and along z.
GRID_YZ_LIMIT = 65535
#: Most threads a CUDA block may have along x, y and z (every compute capability).
MAX_BLOCK_DIM = (1024, 1024, 64)
#: Most per-thread accumulator words a config may ask for (ptxas caps a thread at 255).
MAX_ACCUMULATORS_PER_THREAD = 128
#: Registers a thread needs besides its accumulators (indices, pointers, operands);
#: an estimate used only for the pre-compilation register-file check.
REGISTER_OVERHEAD = {"direct": 24, "winograd": 40}
#: ptxas' register cap of one thread on every listed device.
MAX_REGISTERS_PER_THREAD = 255


def _overhead(algorithm: str) -> int:
    try:
        return REGISTER_OVERHEAD[algorithm]
    except (KeyError, TypeError):
        from iobound.errors import InvalidInputError
        raise InvalidInputError(f"unknown algorithm {algorithm!r:.60}; choose one of "
                                f"{', '.join(REGISTER_OVERHEAD)}") from None


def thread_registers(words_per_thread, algorithm: str, max_per_thread: int = MAX_REGISTERS_PER_THREAD):
    """Estimated registers of one thread: register words plus overhead, capped."""
    return np.minimum(np.asarray(words_per_thread) + _overhead(algorithm), max_per_thread)


def fits_register_file(words_per_thread, threads, algorithm: str, registers_per_sm: int,
                       max_per_thread: int = MAX_REGISTERS_PER_THREAD):
    """Whether a block's threads times their estimated registers fit in an SM's file."""
    return thread_registers(words_per_thread, algorithm, max_per_thread) * threads <= registers_per_sm


def grid_fits(grid: tuple[int, int, int]) -> bool:
    """Whether a grid (x, y, z) respects the y and z limits."""
    if not isinstance(grid, (tuple, list)) or len(grid) != 3:
        from iobound.errors import InvalidInputError
        raise InvalidInputError(f"grid must be a triple (x, y, z), got {grid!r:.60}")
    return grid[1] <= GRID_YZ_LIMIT and grid[2] <= GRID_YZ_LIMIT


def block_fits(block):
    """Whether a block (x, y, z), or an ``(m, 3)`` array of them, respects
    :data:`MAX_BLOCK_DIM` along each axis (the total is the device's to check)."""
    return np.all(np.asarray(block) <= np.asarray(MAX_BLOCK_DIM), axis=-1)


def resident_blocks_per_sm(device, threads, shared_bytes, regs_per_thread) -> np.ndarray:
    """Blocks of a config resident on one SM (occupancy's numerator), vectorised.

    ``threads`` are rounded up to whole warps; a block without shared memory counts as
    one byte, so the limit stays finite.
    """
    from iobound.devices import Device
    from iobound.errors import InvalidInputError

    if not isinstance(device, Device):
        raise InvalidInputError(f"device must be a Device, got {type(device).__name__}")
    try:
        threads, shared, regs = (np.asarray(a, dtype=float) for a in (threads, shared_bytes,
                                                                     regs_per_thread))
    except (TypeError, ValueError):
        raise InvalidInputError("threads, shared_bytes and regs_per_thread must be numbers "
                                "or arrays of numbers") from None
    # a block of no (or -32) threads would "fit" 32 (or -64) times; NaN fits nothing
    for name, a, low in (("threads", threads, 1), ("shared_bytes", shared, 0),
                         ("regs_per_thread", regs, 0)):
        if not np.all(np.isfinite(a) & (a >= low)):
            raise InvalidInputError(f"{name} must be finite numbers >= {low}, got "
                                    f"{a[~(np.isfinite(a) & (a >= low))][:3].tolist()}")
    warp_threads = np.ceil(threads / device.warp_size) * device.warp_size
    return np.minimum.reduce([
        np.full(np.broadcast(threads, shared, regs).shape, float(device.max_blocks_per_sm)),
        np.floor(device.shared_mem_per_sm_bytes / np.maximum(shared, 1.0)),
        np.floor(device.max_threads_per_sm / warp_threads),
        np.floor(device.registers_per_sm / (regs * warp_threads)),
    ])


def check_timeout(name: str, value):
    """``value`` when it is a finite number of seconds > 0 or None (no limit); else
    InvalidInputError naming ``name`` (NaN, inf, 0, a negative number or a string gave a
    bogus timeout result or an error from deep in subprocess).

    >>> check_timeout("timeout", 2.5), check_timeout("timeout", None)
    (2.5, None)
    >>> check_timeout("timeout", float("nan"))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: timeout must be a finite number > 0, got nan
    """
    if value is None:
        return value
    return check_number(name, value, 0, low_open=True)
