"""The ``cuda`` measurer: our generated kernels timed on an NVIDIA GPU (pycuda).

Wraps ``kernels.gpu.measure_config`` (generate -> nvcc -> load, warm up, time with
CUDA events, check once against numpy): ``time_ms`` is the median of the timed
launches, ``costs`` all of them; failures carry the status ``kernels.gpu`` gives
(``invalid``, ``compile_error``, ``runtime_error``, ``timeout``, ``wrong_result``).
pycuda is imported on first measurement, so this module imports anywhere.

Examples
--------
>>> CudaMeasurer.name, CudaMeasurer.estimate
('cuda', False)
>>> CudaMeasurer("junk")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: layer must be a iobound.layer.ConvLayer or ..., got 'junk'
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping, Sequence

from iobound.algorithms import algorithm_name
from kernels.gpu import GpuOptions

from .base import MeasureRecord, Measurer, Status, check_configs, invalid_config

__all__ = ["CudaMeasurer", "cuda_available", "gpu_device", "gpu_name", "record_from_result"]


def cuda_available() -> bool:
    """Whether pycuda imports and sees at least one GPU."""
    try:
        import pycuda.driver as drv
        drv.init()
        return drv.Device.count() > 0
    except Exception:
        return False


def gpu_name() -> str | None:
    """The name of GPU 0 (``None`` without a usable GPU)."""
    try:
        import pycuda.driver as drv
        drv.init()
        return drv.Device(0).name()
    except Exception:
        return None


def gpu_device():
    """GPU 0 as a :class:`~iobound.device_spec.Device` under its own name, its limits queried
    from the driver (:func:`kernels.gpu.device_limits`: a GPU without a preset takes its
    other fields from the preset of the nearest compute capability); ``None`` without a
    usable GPU."""
    try:
        import pycuda.driver as drv
        drv.init()
        from kernels.gpu import device_limits
        return device_limits(drv, drv.Device(0))
    except Exception:
        return None


def record_from_result(cfg: Mapping[str, Any], res) -> MeasureRecord:
    """The record of ``kernels.gpu.MeasureResult`` ``res`` for ``cfg``.

    >>> from kernels.gpu import MeasureResult
    >>> ok = record_from_result({"x": 8}, MeasureResult("ok", costs=(1.0, 3.0, 2.0), time_ms=2.0,
    ...                                                   registers=40))
    >>> ok.time_ms, ok.extra
    (2.0, {'registers': 40})
    >>> record_from_result({"x": 8}, MeasureResult("timeout", error="watchdog")).status.value
    'timeout'
    """
    extra = {k: v for k, v in (("compile_seconds", res.compile_seconds),
                               ("registers", res.registers),
                               ("max_abs_err", res.max_abs_err)) if v is not None}
    if not res.status.is_ok:
        return MeasureRecord.failed(cfg, res.status, res.error, extra=extra)
    return MeasureRecord.ok(cfg, costs=res.costs, time_ms=res.time_ms, extra=extra)


class CudaMeasurer(Measurer):
    """Times configurations of our kernels for ``layer`` on GPU 0.

    Parameters
    ----------
    layer : ConvLayer
        Checked as :class:`~search.measure.emulate.EmulateMeasurer` checks its own; None
        only names the toolchain (measuring is refused).
    algorithm : {"direct", "winograd"}
    repeats, warmup : int
        Timed and untimed launches per configuration.
    timeout_s : float
        Watchdog per launch.

    >>> m = CudaMeasurer(None, repeats=5)  # no layer: it names the toolchain only
    >>> m.options.repeats, m.algorithm
    (5, 'direct')
    >>> m.measure([dict(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1)])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: layer is None: a CudaMeasurer without a layer ...
    """

    name = "cuda"
    estimate = False

    def __init__(self, layer, algorithm: str = "direct", repeats: int = GpuOptions.repeats,
                 warmup: int = GpuOptions.warmup, timeout_s: float = GpuOptions.timeout_s,
                 seed: int = 0):
        from iobound.layer import ConvLayer

        from ..option_checks import check_type
        algorithm = algorithm_name(algorithm)
        check_type("layer", layer, (ConvLayer, type(None)))  # "junk" measured nothing, later
        self.layer, self.algorithm = layer, algorithm
        self.options = GpuOptions(repeats=repeats, warmup=warmup, timeout_s=timeout_s, seed=seed)

    def toolchain(self) -> str:
        """GPU 0's name and the compiler its kernels are built with (what compile_cubin uses
        for its arch: an nvcc supporting it, else the CUDA 12 wheels' NVRTC)."""
        from iobound.device_checks import arch_of
        from kernels.gpu import import_pycuda
        from kernels.nvcc import find_toolchain

        drv = import_pycuda()
        drv.init()
        dev = drv.Device(0)
        tc = find_toolchain(arch_of(dev.compute_capability()))
        return f"{dev.name()} / {'nvcc missing' if tc is None else f'{tc.kind} {tc.release}'}"

    def _one(self, cfg: Mapping[str, Any]) -> MeasureRecord:
        from kernels.config import config_from_dict
        from kernels.gpu import measure_config

        try:
            kc = config_from_dict(dict(cfg), self.algorithm)
        except (ValueError, TypeError) as exc:
            return MeasureRecord.failed(cfg, Status.INVALID, str(exc))
        return record_from_result(cfg, measure_config(self.layer, kc, self.options))

    def measure_iter(self, configs: Sequence[Mapping[str, Any]]) -> Iterator[MeasureRecord]:
        if self.layer is None:
            from iobound.errors import InvalidInputError
            raise InvalidInputError("layer is None: a CudaMeasurer without a layer names its "
                                    "toolchain only, it measures nothing")
        return (invalid_config(cfg) or self._one(cfg) for cfg in check_configs(configs))

    def measure(self, configs: Sequence[Mapping[str, Any]]) -> list[MeasureRecord]:
        return list(self.measure_iter(configs))
