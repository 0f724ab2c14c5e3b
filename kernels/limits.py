"""The hardware rules a kernel config must obey, and the occupancy they imply: one home.

Device facts (shared memory, threads, registers per SM, warp size) live in
:class:`iobound.device_spec.Device`; the rules that combine them with a config live here and
every user imports them: :func:`kernels.config.check_config` (one config),
:mod:`search.table1` (the CP-SAT model), :mod:`search.conv_space` (thread tables) and
:mod:`kernels.analytic` (features, occupancy). Functions take numbers or numpy arrays.

* CUDA grids may have at most :data:`GRID_X_LIMIT` blocks along x and
  :data:`GRID_YZ_LIMIT` along y and z (our kernels put images and tile columns on x), and a block
  at most :data:`MAX_BLOCK_DIM` threads along x, y and z (z: 64 on every compute
  capability, however few threads the block has);
* a thread may hold at most :data:`MAX_ACCUMULATORS_PER_THREAD` register words
  (accumulators, Winograd temporaries): ptxas caps a thread at 255 registers and the
  rest are needed for indices, pointers and operands;
* a block passes the pruning rule when its threads times the registers each needs at the
  least (:func:`thread_registers`: register words plus :data:`REGISTER_OVERHEAD`) fit in
  an SM's register file;
* the registers a compiled thread has (what occupancy follows) are estimated by
  :func:`compiled_registers`: a fit to ptxas' counts (:data:`COMPILED_REGISTERS`, per
  :func:`register_kind`), capped
  at what ``__launch_bounds__(THREADS)`` leaves a thread (:func:`launch_bounds_registers`;
  past it ptxas spills);
* resident blocks per SM (:func:`resident_blocks_per_sm`) follow the CUDA Occupancy
  Calculator: the minimum of the device's block limit, its warps, its register file (a
  warp's registers in units of :data:`REGISTER_ALLOCATION_UNIT`, warps in groups of
  :data:`WARP_ALLOCATION_GRANULARITY`) and its shared memory (:func:`shared_allocation`:
  256 B units before compute capability 8.0, 128 B units plus 1 KiB per block from it).

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
>>> int(resident_blocks_per_sm(v100, threads=256, shared_bytes=0, regs_per_thread=33))
6
>>> grid_fits((10, 70000, 1))
False
>>> bool(block_fits((1, 1, 80)))
False
"""

from __future__ import annotations

import numpy as np

from iobound.device_spec import CUDA_MAX_REGISTERS_PER_THREAD
from iobound.errors import InvalidInputError
from iobound.limits import Limit, check_amounts, check_int, check_number, holds_bool

__all__ = ["GRID_X_LIMIT", "GRID_YZ_LIMIT", "MAX_ACCUMULATORS_PER_THREAD", "REGISTER_OVERHEAD",
           "MAX_BLOCK_DIM", "COMPILED_REGISTERS", "register_kind",
           "REGISTER_ALLOCATION_UNIT", "WARP_ALLOCATION_GRANULARITY", "thread_registers",
           "launch_bounds_registers", "compiled_registers", "fits_register_file", "grid_fits",
           "block_fits", "resident_blocks_per_sm", "shared_allocation", "check_timeout",
           "check_device", "check_counts", "check_dims", "check_broadcast", "LAUNCH_DIM",
           "COMPILE_TIMEOUT_S", "MAX_TIMEOUT_S"]

#: Most blocks a CUDA grid may have along x (compute capability 3.0 on).
GRID_X_LIMIT = 2**31 - 1
#: Most blocks a CUDA grid may have along y and along z.
GRID_YZ_LIMIT = 65535
#: Most threads a CUDA block may have along x, y and z (every compute capability).
MAX_BLOCK_DIM = (1024, 1024, 64)
#: Most per-thread accumulator words a config may ask for (ptxas caps a thread at 255).
MAX_ACCUMULATORS_PER_THREAD = 128
#: Registers a thread needs at the least besides its accumulators (indices, pointers,
#: operands): the pruning rule of the domain and of check_config, not the compiled count
#: (:data:`COMPILED_REGISTERS` is that).
REGISTER_OVERHEAD = {"direct": 24, "winograd": 40}
#: ptxas' registers of a thread ~ a + b * register words + c * Winograd tile elements
#: ((e + k_h - 1)(e + k_w - 1)), before the __launch_bounds__ cap: least squares on 520
#: sampled configs of benchmarks/register_estimate.py's 13 default cases of the time
#: (seed 1 compiled for sm_80 with nvcc 13.0, seed 2 for sm_70 with 12.9; direct fitted on
#: both, Winograd on sm_70's: its median error on sm_80's configs, 1.8, is below sm_80's
#: own fit's, 3.5). Median error: direct 16 registers (ptxas' unrolling of the k_h x k_w
#: loop varies more than any one feature explains), Winograd 2;
#: tests/kernels/test_register_fit.py checks it on seed 0.
#: ``depthwise``: a direct kernel of one input channel a group (:func:`register_kind`),
#: whose channel loop runs once and which ptxas compiles about 20 registers leaner than the
#: ``direct`` line says: least squares on the 138 configs of mobilenet.conv_dw_1, _2, _6 and
#: _13 (sm_80 seed 1, sm_70 seed 2), median error 6 (``direct``'s constants on them: 22).
#: Those layers have one output channel a group; channel multipliers and dense layers of
#: one input channel share the kind but were not fitted. On register_estimate.py's seed-0
#: sample (sm_80 / sm_70), the kind's median error is 11 / 10 by this line and 30 / 32 by
#: ``direct``'s; ptxas over this estimate has a median of 0.73-0.90 on those layers, of
#: 0.88-1.07 on the depthwise ones. ``direct`` fitted again on its own seed-0 counts does
#: no better (13.4 / 13.8, against the constants' 13 / 15).
COMPILED_REGISTERS = {"direct": (63.0, 1.37, 0.0), "depthwise": (41.0, 1.21, 0.0),
                      "winograd": (6.0, 0.69, 1.81)}
#: Registers of one warp are allocated in units of this many (CC 5.2 to 9.0).
REGISTER_ALLOCATION_UNIT = 256
#: An SM's register file holds whole groups of this many warps (CC 5.2 to 9.0).
WARP_ALLOCATION_GRANULARITY = 4


def check_device(device):
    """``device`` when it is a :class:`~iobound.device_spec.Device`; else InvalidInputError
    (a preset name is resolved by the callers that take one, :func:`kernels.config._device`).

    >>> check_device("v100")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: device must be a Device, got str 'v100'
    """
    from iobound.device_spec import Device

    if not isinstance(device, Device):
        raise InvalidInputError(f"device must be a Device, got {type(device).__name__} "
                                f"{device!r:.60}")
    return device


def check_counts(name: str, value, low: float = 0):
    """``value`` (a number or an array of them) as a float array of finite numbers >= ``low``
    (:func:`iobound.limits.check_amounts`: a string, a bool or a NaN is refused, never read
    as a count); else InvalidInputError naming ``name``.

    >>> check_counts("threads", [32, 64], 1).tolist()
    [32.0, 64.0]
    >>> check_counts("threads", 0, 1)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: threads must be finite numbers >= 1 (a number or an array), got 0
    """
    try:
        arr = check_amounts(name, value)
    except InvalidInputError:
        arr = None
    if arr is None or not np.all(arr >= low):
        raise InvalidInputError(f"{name} must be finite numbers >= {low} (a number or an "
                                f"array), got {value!r:.60}")
    return arr


def check_broadcast(**arrays) -> None:
    """InvalidInputError naming the arguments when their shapes do not broadcast together
    (numbers, or arrays of one shape, or numbers beside arrays); the vectorised functions
    here check so before numpy's own ValueError would come from deep inside.

    >>> check_broadcast(threads=[128, 256], shared_bytes=0, regs_per_thread=[32, 64])
    >>> check_broadcast(threads=[128, 256], shared_bytes=[0, 0, 0])
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: threads, shared_bytes must broadcast together (numbers, or arrays of one shape), got shapes (2,), (3,)
    """
    shapes = [np.shape(a) for a in arrays.values()]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise InvalidInputError(f"{', '.join(arrays)} must broadcast together (numbers, or "
                                f"arrays of one shape), got shapes "
                                f"{', '.join(str(s) for s in shapes)}") from None


def _per_algorithm(table: dict, algorithm: str):
    try:
        return table[algorithm]
    except (KeyError, TypeError):
        raise InvalidInputError(f"unknown algorithm {algorithm!r:.60}; choose one of "
                                f"{', '.join(table)}") from None


def thread_registers(words_per_thread, algorithm: str,
                     max_per_thread: int = CUDA_MAX_REGISTERS_PER_THREAD):
    """Registers one thread needs at the least: register words plus
    :data:`REGISTER_OVERHEAD`, capped (the pruning rule; see :func:`compiled_registers`).

    >>> thread_registers([16, 300], "winograd").tolist()  # 16 + 40; capped at 255
    [56, 255]
    """
    check_counts("words_per_thread", words_per_thread)
    check_counts("max_per_thread", max_per_thread, 1)  # a cap of 0 registers runs nothing
    check_broadcast(words_per_thread=words_per_thread, max_per_thread=max_per_thread)
    return np.minimum(np.asarray(words_per_thread) + _per_algorithm(REGISTER_OVERHEAD, algorithm),
                      max_per_thread)


def launch_bounds_registers(device, threads):
    """Most registers ptxas gives a thread of a ``threads``-thread block compiled with
    ``__launch_bounds__(threads)``: one block must fit the register file under the
    allocation units (:func:`resident_blocks_per_sm`), and a thread has at most 255.

    >>> from iobound.devices import get_device
    >>> [int(launch_bounds_registers(get_device("v100"), t)) for t in (32, 448, 1024)]
    [255, 128, 64]
    """
    check_device(device)
    warps = np.ceil(check_counts("threads", threads, 1) / device.warp_size)
    groups = np.ceil(warps / WARP_ALLOCATION_GRANULARITY) * WARP_ALLOCATION_GRANULARITY
    per_warp = np.floor(device.registers_per_sm / groups / REGISTER_ALLOCATION_UNIT) * REGISTER_ALLOCATION_UNIT
    return np.minimum(per_warp / device.warp_size, device.registers_per_thread_max)


def register_kind(layer, algorithm: str) -> str:
    """The row of :data:`COMPILED_REGISTERS` a layer's kernels are estimated by: the
    algorithm's, or ``"depthwise"`` for a direct kernel of one input channel a group
    (``c_in / groups == 1``: wider than :attr:`iobound.layer.ConvLayer.depthwise`, which
    also asks for ``groups > 1``; what ptxas sees is the channel loop that runs once).

    >>> from iobound.networks import get_layer
    >>> [register_kind(get_layer(name), "direct") for name in ("mobilenet.conv_dw_2",
    ...                                                        "resnext50.conv3_1b")]
    ['depthwise', 'direct']
    """
    from iobound.layer import check_layer

    check_layer(layer)
    _per_algorithm(REGISTER_OVERHEAD, algorithm)  # an algorithm's name, not any string
    return "depthwise" if algorithm == "direct" and layer.c_in_per_group == 1 else algorithm


def compiled_registers(words_per_thread, kind: str, device, threads, tile_elements=0):
    """ptxas' registers of a thread, estimated (:data:`COMPILED_REGISTERS`' row ``kind``,
    :func:`register_kind`) and capped by :func:`launch_bounds_registers`: what occupancy is
    computed from.

    >>> from iobound.devices import get_device
    >>> int(compiled_registers(16, "direct", get_device("v100"), 128))
    85
    >>> int(compiled_registers(64, "winograd", get_device("v100"), 1024, tile_elements=16))
    64
    """
    a, b, c = _per_algorithm(COMPILED_REGISTERS, kind)
    words = check_counts("words_per_thread", words_per_thread)
    tile = check_counts("tile_elements", tile_elements)
    cap = launch_bounds_registers(device, threads)  # (checks device and threads)
    check_broadcast(words_per_thread=words, tile_elements=tile, threads=cap)
    return np.minimum(np.ceil(a + b * words + c * tile), cap)


def fits_register_file(words_per_thread, threads, algorithm: str, registers_per_sm: int,
                       max_per_thread: int = CUDA_MAX_REGISTERS_PER_THREAD):
    """Whether a block's threads times the registers each needs at the least
    (:func:`thread_registers`) fit in an SM's file: the pruning rule.

    >>> fits_register_file(16, np.array([1024, 2048]), "direct", 65536).tolist()  # 40 each
    [True, False]
    """
    regs = thread_registers(words_per_thread, algorithm, max_per_thread)  # (checks them)
    threads = check_counts("threads", threads, 1)  # an array: a list would be repeated
    registers_per_sm = check_counts("registers_per_sm", registers_per_sm)
    check_broadcast(words_per_thread=regs, threads=threads, registers_per_sm=registers_per_sm)
    return regs * threads <= registers_per_sm


#: The size of a grid or a block along one axis that the limits are checked against (the
#: fit is CUDA's to say; an empty or negative axis is no launch at all).
LAUNCH_DIM = Limit(1, (1 << 63) - 1, "launch size: a signed 64-bit integer")


def check_dims(name: str, dims, rows: bool = False) -> np.ndarray:
    """``dims``, a triple (x, y, z) of integers >= 1 (``rows``: or an ``(m, 3)`` integer
    array of them), as an int64 array; else InvalidInputError naming ``name`` (a block of
    0 or -1 threads, or of 3.0, is no launch).

    >>> check_dims("block", (0, 1, 1))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: block x=0 is below the minimum 1
    """
    if isinstance(dims, np.ndarray) and dims.shape == (3,) and dims.dtype.kind in "iu":
        dims = dims.tolist()  # one triple as an array: as the list it is
    if isinstance(dims, (tuple, list)) and len(dims) == 3 and not any(
            isinstance(v, (tuple, list, np.ndarray)) for v in dims):
        return np.array([check_int(f"{name} {a}", v, LAUNCH_DIM) for a, v in zip("xyz", dims)])
    try:
        arr = (np.asarray(dims) if rows and isinstance(dims, (tuple, list, np.ndarray))
               and not holds_bool(dims) else None)
    except ValueError:  # ragged rows
        arr = None
    if (arr is None or arr.dtype.kind not in "iu" or arr.ndim not in (1, 2)
            or arr.shape[-1] != 3):
        raise InvalidInputError(f"{name} must be a triple (x, y, z) of integers"
                                f"{' or an (m, 3) array of them' if rows else ''}, "
                                f"got {dims!r:.60}")
    if not np.all(arr >= 1):
        raise InvalidInputError(f"{name} sizes must be integers >= 1, got "
                                f"{arr[arr < 1][:3].tolist()}")
    return arr


def grid_fits(grid: tuple[int, int, int]) -> bool:
    """Whether a grid (x, y, z) of integers >= 1 (:func:`check_dims`) respects CUDA's x,
    y and z limits.

    >>> grid_fits((2**31 - 1, 65535, 65535)), grid_fits((1, 1, 65536))
    (True, False)
    """
    gx, gy, gz = (int(v) for v in check_dims("grid", grid))
    return gx <= GRID_X_LIMIT and gy <= GRID_YZ_LIMIT and gz <= GRID_YZ_LIMIT


def block_fits(block):
    """Whether a block (x, y, z) of integers >= 1, or an ``(m, 3)`` integer array of them
    (:func:`check_dims`), respects :data:`MAX_BLOCK_DIM` along each axis (the total is the
    device's to check).

    >>> block_fits(np.array([[32, 8, 1], [2048, 1, 1], [1, 1, 64]])).tolist()
    [True, False, True]
    """
    return np.all(check_dims("block", block, rows=True) <= np.asarray(MAX_BLOCK_DIM), axis=-1)


def resident_blocks_per_sm(device, threads, shared_bytes, regs_per_thread) -> np.ndarray:
    """Blocks of a config resident on one SM (occupancy's numerator), vectorised.

    The CUDA Occupancy Calculator's rules: ``threads`` are rounded up to whole warps, a
    warp's registers to :data:`REGISTER_ALLOCATION_UNIT`, the warps a register file holds
    down to :data:`WARP_ALLOCATION_GRANULARITY`, a block's shared memory by
    :func:`shared_allocation` (at least one byte, so the limit stays finite). 0 means the
    block cannot be launched.

    >>> from iobound.devices import get_device
    >>> resident_blocks_per_sm(get_device("a100"), threads=np.array([128, 1024]),
    ...                        shared_bytes=np.array([0, 0]),
    ...                        regs_per_thread=np.array([32, 255])).tolist()
    [16.0, 0.0]
    >>> resident_blocks_per_sm(get_device("a100"), [128, 256, 512], 0, 32).tolist()
    [16.0, 8.0, 4.0]
    >>> resident_blocks_per_sm(get_device("v100"), [2048, 32], 0, [32, 300]).tolist()
    [0.0, 0.0]
    """
    check_device(device)
    # a block of no (or -32) threads would "fit" 32 (or -64) times; NaN fits nothing
    threads = check_counts("threads", threads, 1)
    shared = check_counts("shared_bytes", shared_bytes)
    regs = check_counts("regs_per_thread", regs_per_thread)
    check_broadcast(threads=threads, shared_bytes=shared, regs_per_thread=regs)
    warps = np.ceil(threads / device.warp_size)
    # the Occupancy Calculator's units: a warp's registers in REGISTER_ALLOCATION_UNIT,
    # the warps a register file holds in multiples of WARP_ALLOCATION_GRANULARITY
    warp_regs = np.ceil(regs * device.warp_size / REGISTER_ALLOCATION_UNIT) * REGISTER_ALLOCATION_UNIT
    with np.errstate(divide="ignore"):  # 0 registers: the file limits nothing
        file_warps = np.floor(np.floor(device.registers_per_sm / warp_regs)
                              / WARP_ALLOCATION_GRANULARITY) * WARP_ALLOCATION_GRANULARITY
    # broadcast: each limit depends on one of the arguments, which may differ in shape
    blocks = np.minimum.reduce(np.broadcast_arrays(
        np.float64(device.max_blocks_per_sm),
        np.floor(device.shared_mem_per_sm_bytes / np.maximum(shared_allocation(device, shared), 1.0)),
        np.floor(device.max_threads_per_sm / device.warp_size / warps),
        np.floor(file_warps / warps),
    ))
    # a block past the per-block limits does not launch at all, however many an SM would hold
    return blocks * ((threads <= device.max_threads_per_block)
                     & (regs <= device.registers_per_thread_max))


def shared_allocation(device, shared_bytes):
    """Shared memory one block takes from its SM: ``shared_bytes`` rounded up to the
    allocation unit (256 B before compute capability 8.0, 128 B from it), plus the 1 KiB
    the system reserves per block from 8.0 on (``cudaDevAttrReservedSharedMemoryPerBlock``).

    >>> from iobound.devices import get_device
    >>> int(shared_allocation(get_device("v100"), 19600)), int(shared_allocation(get_device("a100"), 0))
    (19712, 1024)
    """
    check_device(device)
    unit, reserved = ((128, 1024) if tuple(device.compute_capability) >= (8, 0) else (256, 0))
    return np.ceil(check_counts("shared_bytes", shared_bytes) / unit) * unit + reserved


#: Seconds one compile (nvcc and ptxas, or the emulator's C++ compiler) may take before it
#: is stopped and recorded as a compile failure.
COMPILE_TIMEOUT_S = 120.0


#: The longest timeout a compile, an emulation or a worker's measurement takes, in seconds
#: (11.6 days): the operating system's waits refuse more than about 2.1e6 s
#: (OverflowError from subprocess and selectors).
MAX_TIMEOUT_S = 1e6


def check_timeout(name: str, value):
    """``value`` when it is a finite number of seconds > 0 and at most
    :data:`MAX_TIMEOUT_S`, or None (no limit); else InvalidInputError naming ``name`` (NaN,
    inf, 0, a negative number or a string gave a bogus timeout result or an error from deep
    in subprocess).

    >>> check_timeout("timeout", 2.5), check_timeout("timeout", None)
    (2.5, None)
    >>> check_timeout("timeout", float("nan"))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: timeout must be a finite number in (0, 1e+06], got nan
    """
    if value is None:
        return value
    return check_number(name, value, 0, MAX_TIMEOUT_S, low_open=True)
