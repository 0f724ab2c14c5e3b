"""Run a generated kernel on the CPU: the same .cu built with g++ against ``cuda_emu.h``.

:func:`emulate` builds the source into a shared library (:mod:`kernels.emulator_build`,
cached and trusted), runs it on numpy arrays and returns the output tensor with the exact
numbers of global loads and stores the kernel's ``LDG``/``STG`` performed and of the
floating-point operations it executed. The launch runs in a child process
(:mod:`kernels.emulator_launch`): a kernel that crashes it, or runs past its time limit,
is an :class:`EmulatorRunError`, never the caller's end. :func:`check_emulable` says
beforehand whether the emulator takes a launch at all.

Examples
--------
>>> import numpy as np
>>> from iobound.layer import ConvLayer
>>> from kernels.config import DirectConfig
>>> from kernels.codegen_direct import generate_direct
>>> layer = ConvLayer(n=1, c_in=2, h_in=5, w_in=5, c_out=2, k_h=3, k_w=3)
>>> src = generate_direct(layer, DirectConfig(x=3, y=3, z=2, alpha=1, tx=3, ty=1, tz=1))
>>> x = np.ones((1, 2, 5, 5), np.float32); w = np.ones((2, 2, 3, 3), np.float32)
>>> run = emulate(src, x, w)
>>> float(run.output[0, 0, 0, 0]), run.global_loads, run.global_stores
(18.0, 86, 18)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iobound import limits
from iobound.device_spec import CUDA_MAX_THREADS_PER_BLOCK
from iobound.errors import InvalidInputError, IoboundError

from .emulator_build import (CXX_FLAGS, HEADER, EmulatorBuildError, build_emulator,
                             build_launcher, compiler_version)
from .emulator_launch import LaunchCrash, run_launch
from .limits import (GRID_X_LIMIT, GRID_YZ_LIMIT, MAX_BLOCK_DIM, block_fits, check_timeout,
                     grid_fits)
from .reference import check_shapes
from .source import KernelSource

# the builds are emulator_build's; named here too, where callers of the emulator look
__all__ = ["compiler_version", "EmulationResult", "EmulatorBuildError", "EmulatorRunError",
           "build_emulator", "build_launcher", "emulate", "CXX_FLAGS", "LAUNCH_TIMEOUT_S",
           "HEADER", "MAX_TOTAL_THREADS", "check_problem_size",
           "check_launch", "check_emulable"]

#: Most threads of one emulated launch, the same as kMaxTotalThreads in cuda_emu.h (a block
#: at most CUDA's CUDA_MAX_THREADS_PER_BLOCK, the header's kMaxThreadsPerBlock).
MAX_TOTAL_THREADS = 1 << 22
_STATUS = {1: "out-of-bounds global access (fault)", 2: "launch refused by the emulator",
           3: "a kernel thread raised an exception"}


class EmulatorRunError(IoboundError):
    """The emulated launch failed (refused launch, out-of-bounds access, a crash) or, with
    ``timed_out``, ran past its time limit and was stopped.

    Examples
    --------
    :func:`emulate` raises it; a caller tells a stopped launch from a failed one:

    >>> err = EmulatorRunError("emulated launch failed: the launch ran past 5 s", timed_out=True)
    >>> isinstance(err, IoboundError), err.timed_out
    (True, True)
    """

    def __init__(self, message: str, timed_out: bool = False):
        super().__init__(message)
        self.timed_out = timed_out


@dataclass(frozen=True)
class EmulationResult:
    """Output tensor, the exact global traffic and the flops of one emulated launch."""

    output: np.ndarray
    global_loads: int
    global_stores: int
    seconds: float
    build_seconds: float
    cached_build: bool
    flops: int  # floating-point operations executed: each binary one, an FMA two


#: Seconds an emulated launch of ``iobound kernel --emulate`` or of a tuning run's check of
#: its winner may take: what one configuration's run may take by default under an executor
#: (``search.executors.options.DEFAULT_TIMEOUT_S``); the emulate measurer's launches have
#: the executor's ``--timeout`` instead.
LAUNCH_TIMEOUT_S = 300.0


def check_problem_size(layer) -> None:
    """Refuse a layer whose input, weight or output tensor is past
    :data:`iobound.limits.EMULATED_ELEMENTS` before anything is allocated.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> check_problem_size(ConvLayer(1, 16384, 1, 1, 32768, 1, 1))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: emulated weight tensor (elements)=536870912 is above ...
    """
    from iobound.layer import check_layer
    check_layer(layer)
    for what, size in (("input", layer.input_size), ("weight", layer.weight_size),
                       ("output", layer.output_size)):
        limits.check_int(f"emulated {what} tensor (elements)", size, limits.EMULATED_ELEMENTS)


def _check_source(source) -> None:
    if not isinstance(source, KernelSource):
        raise InvalidInputError(f"source must be a KernelSource (kernels.generate), "
                                f"got {type(source).__name__} {source!r:.60}")


def check_launch(source: KernelSource) -> None:
    """InvalidInputError when the emulator would refuse ``source``'s launch (threads per
    block, CUDA's per-axis block and grid limits, total threads); a block or grid of no
    (or negative, or fractional) size is refused too (:func:`kernels.limits.check_dims`).

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> from kernels.config import DirectConfig
    >>> from kernels.codegen_direct import generate_direct
    >>> layer = ConvLayer(n=1, c_in=2, h_in=66, w_in=66, c_out=64, k_h=3, k_w=3)
    >>> check_launch(generate_direct(layer, DirectConfig(32, 32, 2, 1, 32, 32, 2)))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: emulator refuses 2048 threads per block (at most 1024)
    """
    _check_source(source)
    if not grid_fits(source.grid):
        raise InvalidInputError(f"emulator refuses a grid of {'x'.join(map(str, source.grid))} "
                                f"blocks (CUDA's limits: {GRID_X_LIMIT} along x, "
                                f"{GRID_YZ_LIMIT} along y and z)")
    if not block_fits(source.block):
        raise InvalidInputError(f"emulator refuses a block of {'x'.join(map(str, source.block))} "
                                f"threads (CUDA's limit: {'x'.join(map(str, MAX_BLOCK_DIM))})")
    if source.threads > CUDA_MAX_THREADS_PER_BLOCK:
        raise InvalidInputError(f"emulator refuses {source.threads} threads per block "
                         f"(at most {CUDA_MAX_THREADS_PER_BLOCK})")
    total = source.threads * source.blocks
    if total > MAX_TOTAL_THREADS:
        raise InvalidInputError(f"emulator refuses a launch of {source.blocks} blocks x {source.threads} "
                         f"threads = {total} threads (at most {MAX_TOTAL_THREADS}); use a smaller layer")


def check_emulable(source: KernelSource) -> None:
    """InvalidInputError when the emulator would refuse to run ``source``: tensors past
    :data:`iobound.limits.EMULATED_ELEMENTS` or a launch past its limits; the checks
    :func:`emulate` makes, callable before anything is written (``iobound kernel --emit``).

    Examples
    --------
    A launch the emulator takes, on an input tensor too large to emulate:

    >>> from iobound.layer import ConvLayer
    >>> from kernels.config import DirectConfig
    >>> from kernels.codegen_direct import generate_direct
    >>> layer = ConvLayer(n=512, c_in=64, h_in=128, w_in=128, c_out=1, k_h=1, k_w=1)
    >>> src = generate_direct(layer, DirectConfig(32, 32, 1, 1, 8, 8, 1))
    >>> check_launch(src)   # the launch fits
    >>> check_emulable(src)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: emulated input tensor (elements)=536870912 is above ...
    """
    check_launch(source)
    check_problem_size(source.layer)


def emulate(source: KernelSource, x: np.ndarray, w: np.ndarray,
            cache_root: str | Path | None = None, timeout: float | None = None) -> EmulationResult:
    """Run ``source`` on input ``x`` (NCHW) and weights ``w`` (KCRS); fp32 in and out.

    The output starts as NaN, so an output the kernel never stores stays NaN. ``timeout``:
    seconds the launch may run before it is stopped (None: no limit; the build has its own,
    :func:`build_emulator`).

    The result counts the global loads and stores, and the flops the kernel executed
    (each binary float operation one, an FMA two: ``cuda_emu.h``), clipped blocks' whole
    tiles included, as :func:`kernels.kernel_flops.kernel_flops` counts them:

    >>> from iobound.layer import ConvLayer
    >>> from kernels.codegen_direct import generate_direct
    >>> from kernels.config import DirectConfig
    >>> from kernels.kernel_flops import kernel_flops
    >>> layer = ConvLayer(n=1, c_in=2, h_in=5, w_in=5, c_out=2, k_h=3, k_w=3)
    >>> c = DirectConfig(x=2, y=3, z=2, alpha=1, tx=2, ty=1, tz=1)  # w_out = 3: 2 + 1 clipped
    >>> src = generate_direct(layer, c)
    >>> run = emulate(src, np.ones((1, 2, 5, 5), np.float32), np.ones((2, 2, 3, 3), np.float32))
    >>> run.flops, kernel_flops(layer, c), 2 * layer.macs
    (864, 864, 648)

    Raises
    ------
    ValueError
        Wrong array shapes, or a launch larger than the emulator's limits.
    EmulatorRunError
        The kernel touched memory outside its buffers, the launch failed, the kernel
        crashed the child process that ran it (the message names the signal), or it ran
        past ``timeout`` (``timed_out``).
    """
    _check_source(source)
    layer = source.layer
    check_shapes(x, w, layer)
    check_emulable(source)
    if timeout is not None:
        check_timeout("timeout", timeout)
    lib, build_seconds, cached = build_emulator(source.code, cache_root)
    launcher = build_launcher(cache_root)
    shape = (layer.n, layer.c_out, layer.h_out, layer.w_out)
    try:
        out, counts, status, seconds = run_launch(launcher, lib, x, w, shape, timeout, layer=layer)
    except LaunchCrash as exc:
        raise EmulatorRunError(f"emulated launch failed: {exc}", exc.timed_out) from None
    if status != 0:
        raise EmulatorRunError(f"emulated launch failed: {_STATUS.get(status, f'status {status}')} "
                               f"({counts[2]} faulty accesses)")
    return EmulationResult(output=out, global_loads=int(counts[0]), global_stores=int(counts[1]),
                           seconds=seconds, build_seconds=build_seconds, cached_build=cached,
                           flops=int(counts[3]))
