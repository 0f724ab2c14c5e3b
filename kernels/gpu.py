"""Time generated kernels on a real GPU with pycuda (the optional ``cuda`` extra).

Build and run are separate (as in AutoTVM): :mod:`kernels.nvcc` compiles cubins, in
parallel; :func:`measure_cubin` loads one, allocates, warms up, times ``repeats``
launches with CUDA events and checks the output once against the numpy reference.
:func:`measure_configs` compiles a batch in parallel and times it serially in one context
(a fresh one after a runtime error or timeout, which leave a context unusable);
:func:`measure_config` does one. Both chain generate -> compile -> measure and turn every failure
into a status (``compile_error``, ``runtime_error``, ``timeout``, ``wrong_result``).

pycuda is imported inside the functions that talk to the driver, so everything else
(launch geometry, result records, classification, medians) works and is tested on
machines without a GPU.

Examples
--------
>>> median_ms([3.0, 1.0, 2.0, 10.0])
2.5
>>> classify_exception(TimeoutError("kernel did not finish within 5 s"))
'timeout'
"""

from __future__ import annotations

import logging
import statistics
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Sequence

import numpy as np

from iobound.errors import ToolchainError

from .reference import compare, conv2d_reference, direct_tolerance, random_problem, winograd_tolerance
from .source import KernelSource

__all__ = ["GpuOptions", "MeasureResult", "median_ms", "classify_exception", "arch_of",
           "measure_cubin", "measure_config", "measure_configs", "import_pycuda", "device_limits"]

log = logging.getLogger(__name__)

STATUSES = ("ok", "compile_error", "runtime_error", "timeout", "wrong_result", "invalid")


@dataclass(frozen=True)
class GpuOptions:
    """How to time: warm-up launches, timed repeats (median taken), watchdog seconds."""

    repeats: int = 10
    warmup: int = 2
    timeout_s: float = 10.0
    check: bool = True
    seed: int = 0

    def __post_init__(self) -> None:
        if self.repeats < 1:
            raise ValueError(f"repeats must be >= 1, got {self.repeats}")
        if self.warmup < 0:
            raise ValueError(f"warmup must be >= 0, got {self.warmup}")
        if self.timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {self.timeout_s}")


@dataclass(frozen=True)
class MeasureResult:
    """One configuration's measurement: status, per-launch times (ms) and their median."""

    status: str
    costs: tuple[float, ...] = ()
    time_ms: float | None = None
    error: str = ""
    max_abs_err: float | None = None
    compile_seconds: float | None = None
    registers: int | None = None
    timestamp: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")


def median_ms(costs: Sequence[float]) -> float:
    """Median of the timed launches in milliseconds."""
    if not costs:
        raise ValueError("no timings to take the median of")
    return float(statistics.median(costs))


def classify_exception(exc: BaseException) -> str:
    """Status for an exception raised while loading, launching or waiting for a kernel.

    pycuda raises ``pycuda.driver.LaunchError`` / ``LogicError`` / ``RuntimeError`` /
    ``MemoryError``; a launch timeout of the display watchdog shows up as a LaunchError
    whose message mentions "timeout". Our own watchdog raises ``TimeoutError``.
    """
    name = type(exc).__name__
    text = str(exc).lower()
    if isinstance(exc, TimeoutError) or "timeout" in text or "timed out" in text:
        return "timeout"
    if name == "CompileError":
        return "compile_error"
    return "runtime_error"


def import_pycuda():
    """``pycuda.driver``, or ToolchainError saying how to get it."""
    try:
        import pycuda.driver as drv
    except Exception as exc:  # ImportError, or libcuda missing
        raise ToolchainError(f"pycuda is not usable ({type(exc).__name__}: {exc}); "
                             "install the 'cuda' extra on a machine with an NVIDIA GPU") from None
    return drv


def arch_of(compute_capability: tuple[int, int]) -> str:
    """nvcc's ``sm_XY`` for a device's compute capability.

    >>> arch_of((8, 6))
    'sm_86'
    """
    major, minor = compute_capability
    return f"sm_{major}{minor}"


def _wait(event, timeout_s: float) -> None:
    """Wait for a CUDA event, polling, raising TimeoutError after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not event.query():
        if time.monotonic() > deadline:
            raise TimeoutError(f"kernel did not finish within {timeout_s} s")
        time.sleep(1e-4)


def _tolerance(source: KernelSource, x, w) -> np.ndarray:
    cfg = source.config
    if getattr(cfg, "algorithm", "direct") == "winograd":
        return winograd_tolerance(x, w, source.layer, cfg.e)
    return direct_tolerance(x, w, source.layer)


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
        for _ in range(options.warmup + 1):
            fn(d_x, d_w, d_y, **launch)
        end.record()
        _wait(end, options.timeout_s)
        comparison = None
        if options.check:
            drv.memcpy_dtoh(out, d_y)
            comparison = compare(out, conv2d_reference(x, w, layer), _tolerance(source, x, w))
            if not comparison.ok:
                return MeasureResult(status="wrong_result", max_abs_err=comparison.max_abs_err,
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
        status = classify_exception(exc)
        log.debug("GPU measurement failed (%s): %s", status, exc)
        return MeasureResult(status=status, error=f"{type(exc).__name__}: {exc}")
    return MeasureResult(status="ok", costs=tuple(costs), time_ms=median_ms(costs),
                         max_abs_err=comparison.max_abs_err if comparison else None)


def device_limits(drv, dev) -> SimpleNamespace:
    """The limits :func:`kernels.config.check_config` reads, from a pycuda device."""
    attr = drv.device_attribute
    return SimpleNamespace(
        name=dev.name(),
        shared_mem_per_block_bytes=dev.get_attribute(attr.MAX_SHARED_MEMORY_PER_BLOCK),
        max_threads_per_block=dev.get_attribute(attr.MAX_THREADS_PER_BLOCK),
        registers_per_sm=dev.get_attribute(attr.MAX_REGISTERS_PER_MULTIPROCESSOR),
        registers_per_thread_max=255)


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
            results[i] = MeasureResult(status="invalid", error="; ".join(reasons))
        else:
            todo.append((i, generate(layer, config)))
    built = compile_many([src for _, src in todo], arch or arch_of(dev.compute_capability()),
                         cache_root=cache_root)
    ctx = dev.make_context()
    try:
        for (i, source), b in zip(todo, built):
            if not b.ok:
                results[i] = MeasureResult(status="timeout" if b.status == "timeout" else "compile_error",
                                           error=b.log[-2000:], compile_seconds=b.seconds)
                continue
            r = _measure_in_context(drv, source, b.cubin_path, options)
            results[i] = MeasureResult(**{**r.__dict__, "compile_seconds": b.seconds,
                                          "registers": b.registers})
            if r.status in CONTEXT_FATAL:
                _drop_context(ctx)
                ctx = None  # so that `finally` never pops the dropped context
                ctx = dev.make_context()
    finally:
        if ctx is not None:
            ctx.pop()
            ctx.detach()
    return results


#: Statuses after which a CUDA context cannot be trusted: a launch failure (illegal address,
#: misaligned access, ...) is sticky, and a kernel still running after our watchdog gave up
#: would distort the next timings. The next configuration gets a new context.
CONTEXT_FATAL = ("runtime_error", "timeout")


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
