"""Time generated kernels on a real GPU with pycuda (the optional ``cuda`` extra).

Build and run are separate (as in AutoTVM): :mod:`kernels.nvcc` compiles cubins, in
parallel; :func:`measure_cubin` loads one, allocates, warms up, times ``repeats``
launches with CUDA events and checks the output once against the numpy reference.
:func:`measure_configs` compiles a batch in parallel and times it serially in one context
(a fresh one after a runtime error or timeout, which leave a context unusable);
:func:`measure_config` does one. Both chain generate -> compile -> measure and turn every failure
into a :class:`~kernels.status.Status` (compile error, runtime error, timeout, wrong result).

pycuda is imported inside the functions that talk to the driver, so everything else
(launch geometry, result records, classification, medians) works and is tested on
machines without a GPU.

Examples
--------
>>> median_ms([3.0, 1.0, 2.0, 10.0])
2.5
>>> classify_exception(KernelTimeoutError("kernel did not finish within 5 s"))
<Status.TIMEOUT: 'timeout'>
"""

from __future__ import annotations

import logging
import statistics
import time
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np

from iobound import limits
from iobound.device_checks import arch_of
from iobound.device_spec import Device
from iobound.devices import DEVICES, get_device
from iobound.errors import InvalidInputError, IoboundError, ToolchainError, UnknownPresetError

from .limits import check_timeout
from .reference import compare, conv2d_reference, random_problem
from .source import KernelSource
from .status import CONTEXT_FATAL, Status

__all__ = ["GpuOptions", "MeasureResult", "KernelTimeoutError", "median_ms", "classify_exception",
           "measure_cubin", "measure_config", "measure_configs", "import_pycuda",
           "device_limits"]

log = logging.getLogger(__name__)


#: Timed launches and warm-up launches of one configuration.
_REPEATS = limits.Limit(1, 1 << 16, "repeats: timed launches of one configuration")
_WARMUP = limits.Limit(0, 1 << 16, "warm-up launches of one configuration")


class KernelTimeoutError(IoboundError, TimeoutError):
    """A launched kernel did not finish within the watchdog's time (:class:`GpuOptions`).

    Raised only while a kernel runs on a GPU; an ``except TimeoutError`` catches it too:

    >>> issubclass(KernelTimeoutError, TimeoutError)
    True
    """


@dataclass(frozen=True)
class GpuOptions:
    """How to time: warm-up launches, timed repeats (median taken), watchdog seconds.

    >>> GpuOptions(repeats=3).warmup, GpuOptions(repeats=3).timeout_s
    (2, 10.0)
    >>> GpuOptions(timeout_s=float("inf"))  # a watchdog that would never fire
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: timeout_s must be a finite number, got inf
    """

    repeats: int = 10
    warmup: int = 2
    timeout_s: float = 10.0
    check: bool = True
    seed: int = 0

    def __post_init__(self) -> None:
        # integers (numpy's too) stored as ints; a NaN or inf watchdog would never fire
        object.__setattr__(self, "repeats", limits.check_int("repeats", self.repeats, _REPEATS))
        object.__setattr__(self, "warmup", limits.check_int("warmup", self.warmup, _WARMUP))
        limits.check_number("timeout_s", self.timeout_s)  # a number: None is no watchdog
        check_timeout("timeout_s", self.timeout_s)  # the cap every timeout has
        object.__setattr__(self, "seed", limits.check_int("seed", self.seed, limits.SEED))
        limits.check_flag("check", self.check)


@dataclass(frozen=True)
class MeasureResult:
    """One configuration's measurement: status, per-launch times (ms) and their median.

    >>> r = MeasureResult(status="wrong_result", error="max abs error 0.5")
    >>> r.status, r.costs, r.time_ms
    (<Status.WRONG_RESULT: 'wrong_result'>, (), None)
    """

    status: Status
    costs: tuple[float, ...] = ()
    time_ms: float | None = None
    error: str = ""
    max_abs_err: float | None = None
    compile_seconds: float | None = None
    registers: int | None = None
    timestamp: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", Status.parse(self.status))


def median_ms(costs: Sequence[float]) -> float:
    """Median of the timed launches in milliseconds: a non-empty sequence of finite times
    >= 0 (:func:`iobound.limits.check_amounts`); else InvalidInputError.

    >>> median_ms([3.0, 1.0, 2.0])
    2.0
    >>> median_ms("123")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: costs must be finite numbers >= 0 (a number or an array), got '123'
    """
    arr = limits.check_amounts("costs", costs)
    if arr.ndim != 1 or arr.size == 0:
        raise InvalidInputError(f"costs must be a non-empty sequence of times (ms), got "
                                f"{costs!r:.60}")
    return float(statistics.median(arr.tolist()))


def classify_exception(exc: BaseException, drv=None) -> Status:
    """Status for an exception raised while loading, launching or waiting for a kernel.

    By type: our watchdog's :class:`KernelTimeoutError` is a timeout; pycuda's
    ``CompileError`` (``drv`` is ``pycuda.driver`` when given) a compile error; the driver's
    other errors (``LaunchError``, ``LogicError``, ``RuntimeError``, ``MemoryError``,
    including a display watchdog's "launch timeout", which CUDA reports as a launch
    failure) and anything else a runtime error.

    >>> from types import SimpleNamespace
    >>> drv = SimpleNamespace(CompileError=RuntimeError)  # stands in for pycuda.driver
    >>> classify_exception(RuntimeError("bad cubin"), drv), classify_exception(MemoryError())
    (<Status.COMPILE_ERROR: 'compile_error'>, <Status.RUNTIME_ERROR: 'runtime_error'>)
    """
    if isinstance(exc, KernelTimeoutError):
        return Status.TIMEOUT
    compile_error = getattr(drv, "CompileError", None)
    if isinstance(compile_error, type) and isinstance(exc, compile_error):
        return Status.COMPILE_ERROR
    return Status.RUNTIME_ERROR


def import_pycuda():
    """``pycuda.driver``, or ToolchainError saying how to get it."""
    try:
        import pycuda.driver as drv
    except Exception as exc:  # ImportError, or libcuda missing
        raise ToolchainError(f"pycuda is not usable ({type(exc).__name__}: {exc}); "
                             "install the 'cuda' extra on a machine with an NVIDIA GPU") from None
    return drv


def _wait(event, timeout_s: float) -> None:
    """Wait for a CUDA event, polling, raising KernelTimeoutError after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not event.query():
        if time.monotonic() > deadline:
            raise KernelTimeoutError(f"kernel did not finish within {timeout_s} s")
        time.sleep(1e-4)


def _tolerance(source: KernelSource, x, w) -> np.ndarray:
    from .families import kernel_family
    return kernel_family(source.config).tolerance(x, w, source.layer, source.config)


def measure_cubin(source: KernelSource, cubin_path: str, options: GpuOptions = GpuOptions()) -> MeasureResult:
    """Load ``cubin_path`` (compiled from ``source``) on GPU 0 and time it.

    Raises
    ------
    ToolchainError
        pycuda or the driver is not usable (no GPU): not a property of the kernel.
    """
    drv = import_pycuda()
    drv.init()
    ctx = drv.Device(0).make_context()
    try:
        return _measure_in_context(drv, source, cubin_path, options)
    finally:
        ctx.pop()
        ctx.detach()


def _measure_in_context(drv, source: KernelSource, cubin_path: str, options: GpuOptions) -> MeasureResult:
    layer = source.layer
    x, w = random_problem(layer, np.random.default_rng(options.seed))
    out = np.full((layer.n, layer.c_out, layer.h_out, layer.w_out), np.nan, np.float32)
    try:
        fn = drv.module_from_file(cubin_path).get_function(source.name)
        d_x, d_w, d_y = drv.to_device(x), drv.to_device(w), drv.to_device(out)
        launch = dict(block=tuple(int(v) for v in source.block), grid=tuple(int(v) for v in source.grid))
        start, end = drv.Event(), drv.Event()
        for _ in range(options.warmup + 1):  # the watchdog is per launch
            fn(d_x, d_w, d_y, **launch)
            end.record()
            _wait(end, options.timeout_s)
        comparison = None
        if options.check:
            drv.memcpy_dtoh(out, d_y)
            comparison = compare(out, conv2d_reference(x, w, layer), _tolerance(source, x, w))
            if not comparison.ok:
                return MeasureResult(status=Status.WRONG_RESULT, max_abs_err=comparison.max_abs_err,
                                     error=f"max abs error {comparison.max_abs_err:.3g} exceeds "
                                           f"the fp32 tolerance ({comparison.nan_count} NaN)")
        costs = []
        for _ in range(options.repeats):
            start.record()
            fn(d_x, d_w, d_y, **launch)
            end.record()
            _wait(end, options.timeout_s)
            costs.append(float(start.time_till(end)))
    except Exception as exc:  # driver errors of every kind become a status
        status = classify_exception(exc, drv)
        log.debug("GPU measurement failed (%s): %s", status.value, exc)
        return MeasureResult(status=status, error=f"{type(exc).__name__}: {exc}")
    return MeasureResult(status=Status.OK, costs=tuple(costs), time_ms=median_ms(costs),
                         max_abs_err=comparison.max_abs_err if comparison else None)


def device_limits(drv, dev) -> Device:
    """GPU ``dev`` as a :class:`~iobound.device_spec.Device` whose limits come from the driver.

    The limits :func:`kernels.config.check_config` reads (static shared memory and threads
    per block, registers per SM) are queried; the other fields come from the preset of
    that name, or, for a GPU without a preset, from the preset of the nearest compute
    capability (its ``source`` says so). ``drv`` is ``pycuda.driver`` and ``dev`` one of
    its Devices (anything else: InvalidInputError).

    >>> device_limits(None, None)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: drv must be pycuda.driver, got NoneType None
    """
    for what, obj, kind, needs in (
            ("drv", drv, "pycuda.driver", ("device_attribute",)),
            ("dev", dev, "a pycuda.driver.Device",
             ("name", "get_attribute", "compute_capability"))):
        if not all(hasattr(obj, a) for a in needs):
            raise InvalidInputError(f"{what} must be {kind}, got {type(obj).__name__} {obj!r:.60}")
    attr = drv.device_attribute
    name = dev.name()
    queried = dict(name=name,
                   shared_mem_per_block_bytes=dev.get_attribute(attr.MAX_SHARED_MEMORY_PER_BLOCK),
                   max_threads_per_block=dev.get_attribute(attr.MAX_THREADS_PER_BLOCK),
                   registers_per_sm=dev.get_attribute(attr.MAX_REGISTERS_PER_MULTIPROCESSOR))
    try:
        return replace(get_device(name), **queried)
    except UnknownPresetError:
        cc = tuple(dev.compute_capability())
        base = min(DEVICES.values(), key=lambda d: (abs(d.compute_capability[0] - cc[0]),
                                                     abs(d.compute_capability[1] - cc[1])))
        return replace(base, **queried, aliases=(), compute_capability=cc, arch=arch_of(cc),
                       source=f"limits queried from the CUDA driver; other fields from the "
                              f"{base.name} preset (nearest compute capability)")


def measure_configs(layer, configs: Sequence, options: GpuOptions = GpuOptions(),
                    arch: str | None = None, cache_root=None) -> list[MeasureResult]:
    """Generate and compile all ``configs`` in parallel, then time them one by one on GPU 0.

    Build and run are separate: nvcc runs concurrently on the CPU
    (:func:`kernels.nvcc.compile_many`), the GPU runs one kernel at a time in one context,
    replaced by a new one after a ``runtime_error`` or ``timeout`` (a failed launch is sticky:
    every later call in that context would fail too). Results come back in input order;
    configs over GPU 0's limits are ``invalid``.
    """
    from .config import check_config
    from .generate import generate
    from .nvcc import compile_many

    drv = import_pycuda()
    drv.init()
    dev = drv.Device(0)
    limits = device_limits(drv, dev)
    results: list[MeasureResult | None] = [None] * len(configs)
    todo = []
    for i, config in enumerate(configs):
        reasons = check_config(layer, config, limits)
        if reasons:
            results[i] = MeasureResult(status=Status.INVALID, error="; ".join(reasons))
        else:
            todo.append((i, generate(layer, config)))
    built = compile_many([src for _, src in todo], arch or arch_of(dev.compute_capability()),
                         cache_root=cache_root)
    ctx = None  # made when a config needs it: after a failed launch, a fresh one
    try:
        for (i, source), b in zip(todo, built):
            if not b.ok:
                results[i] = MeasureResult(status=b.status,
                                           error=b.log[-2000:], compile_seconds=b.seconds)
                continue
            if ctx is None:
                try:
                    ctx = dev.make_context()
                except Exception as exc:  # the driver refused: this config's record says so
                    results[i] = MeasureResult(
                        status=Status.RUNTIME_ERROR, compile_seconds=b.seconds,
                        registers=b.registers,
                        error=f"could not create a CUDA context: {type(exc).__name__}: {exc}")
                    continue
            r = _measure_in_context(drv, source, b.cubin_path, options)
            results[i] = MeasureResult(**{**r.__dict__, "compile_seconds": b.seconds,
                                          "registers": b.registers})
            if r.status in CONTEXT_FATAL:
                _drop_context(ctx)
                ctx = None  # so that `finally` never pops the dropped context
    finally:
        if ctx is not None:
            ctx.pop()
            ctx.detach()
    return results


def _drop_context(ctx) -> None:
    """Pop and detach ``ctx``, ignoring errors (it may be the broken one)."""
    try:
        ctx.pop()
        ctx.detach()
    except Exception as exc:  # the context is already unusable; the next one is what matters
        log.debug("dropping a failed CUDA context raised %s: %s", type(exc).__name__, exc)


def measure_config(layer, config, options: GpuOptions = GpuOptions(), arch: str | None = None,
                   cache_root=None) -> MeasureResult:
    """Generate, compile (for GPU 0's arch unless given) and time one configuration."""
    return measure_configs(layer, [config], options, arch, cache_root)[0]


#: Time one compiled kernel in the current context; for callers that hold a context across
#: configurations (the GPU workers of ``search.executors``), with :data:`CONTEXT_FATAL`.
measure_in_context = _measure_in_context
drop_context = _drop_context
