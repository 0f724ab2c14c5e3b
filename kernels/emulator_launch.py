"""One emulated launch in a child process, so that a kernel that crashes ends it alone.

The emulator's bounds checks catch faulty *global* accesses, but a kernel can still
dereference a wild pointer, overflow its stack or abort. In the caller's process that
ended ``iobound kernel --emulate`` or a tuning run's final check with a segmentation
fault. :func:`run_launch` instead runs the launcher (``emulator_runner.cpp``, built once
per compiler by :func:`kernels.emulator.build_launcher`) on a file both processes map:
the input, weights and output tensors (fp32) back to back, then the four counters
(global loads, stores, faults, flops) and the launch's status and seconds, at the offsets
of :func:`layout`. The output is read where the launcher wrote it; a launcher killed by a
signal is an :class:`~kernels.emulator.EmulatorRunError` naming the signal.

Examples
--------
>>> layout(nx=2, nw=3, nout=1)
Layout(x=0, w=8, out=20, counts=24, status=56, size=72)
"""

from __future__ import annotations

import mmap
import os
import signal
import struct
import subprocess
import tempfile
from pathlib import Path
from typing import NamedTuple

import numpy as np

__all__ = ["LAUNCHER_SOURCE", "COUNTERS", "Layout", "layout", "run_launch", "LaunchCrash"]

LAUNCHER_SOURCE = Path(__file__).with_name("emulator_runner.cpp")
#: The launch's status (int32; -1 until the launcher writes it) and seconds (float64).
STATUS_FORMAT = "=i4xd"
#: The launch's uint64 counters: global loads, stores, faulty accesses, flops (cuda_emu.h).
COUNTERS = 4


class LaunchCrash(Exception):
    """The launch did not run to its status (the message says why: a signal, the
    launcher's own failure, no room for the shared file, its time limit).

    Examples
    --------
    :func:`run_launch` raises it; ``timed_out`` tells the time limit from a crash:

    >>> crash = LaunchCrash("the launch ran past 5 s and was stopped", timed_out=True)
    >>> str(crash), crash.timed_out
    ('the launch ran past 5 s and was stopped', True)
    """

    def __init__(self, message: str, timed_out: bool = False):
        super().__init__(message)
        self.timed_out = timed_out


class Layout(NamedTuple):
    """Byte offsets in the shared file of one launch (``size``: its length).

    Examples
    --------
    The tensors of the module example's launch (fp32, back to back):

    >>> at = layout(nx=50, nw=36, nout=18)
    >>> at.w, at.out - at.w, at.size
    (200, 144, 464)
    """

    x: int
    w: int
    out: int
    counts: int
    status: int
    size: int


def layout(nx: int, nw: int, nout: int) -> Layout:
    """Where the tensors of ``nx``, ``nw`` and ``nout`` floats, the counters and the status lie.

    Examples
    --------
    The counters start at a multiple of 8 bytes (12 bytes of tensors here):

    >>> layout(nx=1, nw=1, nout=1)
    Layout(x=0, w=4, out=8, counts=16, status=48, size=64)
    """
    w, out = 4 * nx, 4 * (nx + nw)
    counts = -(-(out + 4 * nout) // 8) * 8  # the uint64 counters 8-byte aligned
    status = counts + COUNTERS * 8
    return Layout(0, w, out, counts, status, status + struct.calcsize(STATUS_FORMAT))


def check_launch_shapes(x, w, shape, layer=None) -> tuple[int, int, int, int]:
    """``shape`` as a tuple when the launch's tensors agree: ``x`` (n, c_in, h, w) and ``w``
    (c_out, c_in / groups, k_h, k_w) arrays of real numbers and ``shape`` the
    (n, c_out, h_out, w_out) output, of integers >= 1 and at most
    :data:`iobound.limits.EMULATED_ELEMENTS` elements; with ``layer`` (the kernel's), every
    size is the layer's (:func:`kernels.reference.check_shapes`). Else InvalidInputError:
    the kernel writes and reads its own sizes, past a smaller region of the shared file.

    >>> check_launch_shapes(np.ones((1, 2, 5, 5)), np.ones((2, 2, 3, 3)), (0,))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: shape must be the output's (n, c_out, h_out, w_out), got (0,)
    """
    from iobound import limits
    from iobound.errors import InvalidInputError

    from .reference import check_shapes

    if layer is not None:
        check_shapes(x, w, layer)
        want = (layer.n, layer.c_out, layer.h_out, layer.w_out)
        if not isinstance(shape, (tuple, list)) or tuple(shape) != want:
            raise InvalidInputError(f"shape must be the layer's output {want}, got {shape!r:.60}")
    if (not isinstance(shape, (tuple, list)) or len(shape) != 4
            or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1
                       for v in shape)):
        raise InvalidInputError(f"shape must be the output's (n, c_out, h_out, w_out), "
                                f"got {shape!r:.60}")
    limits.check_int("emulated output tensor (elements)", int(np.prod(shape, dtype=object)),
                     limits.EMULATED_ELEMENTS)
    if np.ndim(x) != 4 or np.ndim(w) != 4 or (np.shape(x)[0], np.shape(w)[0]) != tuple(shape[:2]):
        raise InvalidInputError(f"input {np.shape(x)}, weights {np.shape(w)} and output "
                                f"{tuple(shape)} do not agree (images, output channels)")
    return tuple(int(v) for v in shape)


def run_launch(launcher: Path, lib: Path, x: np.ndarray, w: np.ndarray, shape: tuple[int, ...],
               timeout: float | None = None, *, layer=None):
    """Run ``lib``'s ``iobound_emulate`` on ``x`` and ``w`` in a child process; returns
    (output of ``shape``, the :data:`COUNTERS` counters, status, seconds). An output
    element the kernel never stores comes back NaN. LaunchCrash when the child died or
    failed, or (``timed_out``) was killed after ``timeout`` seconds (None: no limit).

    The library's kernel uses its layer's sizes: ``x``, ``w`` and ``shape`` must be its
    tensors' (:func:`check_launch_shapes`, exact with ``layer``); a ``timeout`` must be
    :func:`kernels.limits.check_timeout`'s. Else InvalidInputError.

    Examples
    --------
    Tensors that do not agree are refused before any process starts:

    >>> x, w = np.ones((1, 2, 5, 5)), np.ones((2, 2, 3, 3))
    >>> run_launch(Path("launcher"), Path("kernel.so"), x, w, (1, 3, 3, 3))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: ... do not agree (images, output channels)
    """
    from .limits import check_timeout

    shape = check_launch_shapes(x, w, shape, layer)
    check_timeout("timeout", timeout)
    x = np.ascontiguousarray(x, np.float32).reshape(-1)
    w = np.ascontiguousarray(w, np.float32).reshape(-1)
    size = int(np.prod(shape))
    at = layout(x.size, w.size, size)
    with tempfile.TemporaryFile(prefix="iobound-emu-") as shared:
        try:  # reserved, not sparse: a page written into a full disk would be SIGBUS here
            os.posix_fallocate(shared.fileno(), 0, at.size)
        except OSError as exc:
            raise LaunchCrash(f"cannot make the launch's {at.size}-byte file in "
                              f"{tempfile.gettempdir()}: {exc.strerror or exc}") from None
        with mmap.mmap(shared.fileno(), at.size) as view:
            view[at.x:at.w] = x.tobytes()
            view[at.w:at.out] = w.tobytes()
            view[at.out:at.out + 4 * size] = np.full(size, np.nan, np.float32).tobytes()
            struct.pack_into(STATUS_FORMAT, view, at.status, -1, 0.0)
            fd = shared.fileno()
            try:
                proc = subprocess.run([str(launcher), str(lib), str(fd), *map(str, (
                    at.size, at.x, at.w, at.out, at.counts, at.status))], pass_fds=(fd,),
                    capture_output=True, text=True, errors="replace", timeout=timeout)
            except subprocess.TimeoutExpired:  # subprocess.run has killed it
                raise LaunchCrash(f"the launch ran past {timeout:g} s and was stopped (a kernel "
                                  "that never ends?)", timed_out=True) from None
            except OSError as exc:  # removed from the cache since it was built, say
                raise LaunchCrash(f"cannot run the launcher {launcher}: "
                                  f"{exc.strerror or exc}") from None
            if proc.returncode < 0:
                raise LaunchCrash(_death(-proc.returncode))
            if proc.returncode != 0:
                raise LaunchCrash(f"the launcher failed (exit {proc.returncode}): "
                                  f"{proc.stderr.strip()[-1500:]}")
            out = np.frombuffer(view[at.out:at.out + 4 * size], np.float32).reshape(shape)
            counts = struct.unpack_from(f"={COUNTERS}Q", view, at.counts)
            status, seconds = struct.unpack_from(STATUS_FORMAT, view, at.status)
    return out, counts, status, seconds


#: Signals a process raises on itself when it faults or aborts (the kernel's doing).
CRASH_SIGNALS = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGFPE,
                           signal.SIGILL, signal.SIGTRAP, signal.SIGSYS})


def _death(number: int) -> str:
    """Why the launcher died of signal ``number``: the kernel crashed it, or something
    stopped it (Ctrl-C reaching its process group, a kill, the out-of-memory killer).

    >>> _death(11).split(" (")[0], _death(2)
    ('the kernel killed the emulator with SIGSEGV', 'the launch was stopped by SIGINT')
    """
    try:
        name = signal.Signals(number).name
    except ValueError:
        return f"the launch was stopped by signal {number}"
    if number in CRASH_SIGNALS:
        return (f"the kernel killed the emulator with {name} (a wild pointer, a stack "
                "overflow, an abort: nothing the bounds checks see)")
    return f"the launch was stopped by {name}"
