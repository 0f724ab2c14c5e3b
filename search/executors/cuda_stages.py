"""The ``cuda`` measurer as stages: nvcc on any CPU, timing on a GPU worker that keeps its context.

:meth:`CudaStages.build` generates the kernel and compiles a cubin for the GPUs' arch
(``kernels.nvcc.compile_cubin``; a compile failure or nvcc timeout is the final record);
the artifact carries the cubin's bytes. :meth:`CudaStages.run` runs on a GPU worker (one
per GPU, pinned by ``CUDA_VISIBLE_DEVICES`` or Ray, so its GPU is device 0): a
:class:`GpuSession` opened on its first run holds one CUDA context for all later runs and
replaces it only after a ``runtime_error`` or ``timeout`` (a failed launch is sticky;
``kernels.gpu.CONTEXT_FATAL``). Configurations over the GPU's limits are ``invalid``.
The records are those of the ``cuda`` measurer (``search.measure.cuda.record_from_result``).

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
>>> stages = CudaStages(layer, arch="sm_80")
>>> stages.needs_gpu, stages.build(dict(x=3, y=3, z=2, alpha=1, tx=2, ty=3, tz=1)).status.value
(True, 'invalid')
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable, Mapping

from kernels.status import Status
from search.measure.base import MeasureRecord

from .stages import Artifact, Stages, materialise

_log = logging.getLogger(__name__)

__all__ = ["CudaStages", "GpuSession", "process_session", "driver_arch"]



def driver_arch() -> str | None:
    """``sm_XY`` of this machine's GPU 0, or ``None`` without a usable GPU."""
    from iobound.device_checks import arch_of
    from kernels.gpu import import_pycuda

    try:
        drv = import_pycuda()
        drv.init()
        return arch_of(drv.Device(0).compute_capability())
    except Exception:  # no pycuda or no GPU here: the build workers resolve it
        return None


class GpuSession:
    """One CUDA context on device 0, kept across measurements, renewed after a failed launch.

    ``drv`` is ``pycuda.driver`` (a stand-in in tests); ``measure`` is
    ``kernels.gpu.measure_in_context``.
    """

    def __init__(self, drv=None, measure: Callable | None = None):
        from kernels.gpu import device_limits, import_pycuda, measure_in_context

        self.drv = drv or import_pycuda()
        self.drv.init()
        self.device = self.drv.Device(0)
        self.limits = device_limits(self.drv, self.device)
        self._measure = measure or measure_in_context
        self.contexts = 1
        self.ctx = self.device.make_context()

    def measure(self, source, cubin_path: str, options):
        """Time one cubin in the held context (a new context next time if this one broke)."""
        from kernels.gpu import CONTEXT_FATAL, drop_context

        if self.ctx is None:  # the renewal after a failed launch was refused: try again
            self.ctx = self.device.make_context()
            self.contexts += 1
        result = self._measure(self.drv, source, cubin_path, options)
        if result.status in CONTEXT_FATAL:
            drop_context(self.ctx)
            self.ctx = None
            try:
                self.ctx = self.device.make_context()
                self.contexts += 1
            except Exception as exc:  # this result stands; the next run makes its context
                _log.debug("no new CUDA context: %s", exc)
        return result

    def close(self) -> None:
        from kernels.gpu import drop_context

        if self.ctx is not None:
            drop_context(self.ctx)
            self.ctx = None


_SESSION: GpuSession | None = None


def process_session() -> GpuSession:
    """This worker process's :class:`GpuSession`: the stages of every layer a worker times
    (a network's layers share the workers) use one CUDA context, not one each."""
    global _SESSION
    if _SESSION is None or _SESSION.ctx is None:
        _SESSION = GpuSession()
    return _SESSION


class CudaStages(Stages):
    """Build (nvcc) and run (time on the held context) of our kernels for ``layer``.

    Parameters
    ----------
    layer : ConvLayer
    algorithm : {"direct", "winograd"}
    options : kernels.gpu.GpuOptions, optional
    arch : str, optional
        The GPUs' ``sm_XY``; default: this machine's GPU 0, else the build worker's.

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
    >>> stages = CudaStages(layer, arch="sm_86")
    >>> bad = Artifact(dict(x=3, y=3, z=2, alpha=1, tx=2, ty=3, tz=1))  # tx must divide x
    >>> stages.run(bad).status.value, stages.arch  # refused before any GPU is touched
    ('invalid', 'sm_86')
    """

    name = "cuda"
    needs_gpu = True
    preload = ("kernels.config", "kernels.generate", "kernels.nvcc")  # no pycuda: workers fork

    def __init__(self, layer, algorithm: str = "direct", options=None, arch: str | None = None):
        from kernels.gpu import GpuOptions

        self.layer, self.algorithm, self.arch = layer, algorithm, arch
        self.options = options or GpuOptions()
        self._session: GpuSession | None = None

    @classmethod
    def of(cls, measurer) -> "CudaStages":
        """The stages of a :class:`~search.measure.cuda.CudaMeasurer`."""
        return cls(measurer.layer, measurer.algorithm, measurer.options, driver_arch())

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_session": None}  # a context stays in its process

    def _source(self, config: Mapping[str, Any]):
        """(kernel config, source), or the ``invalid`` record."""
        from kernels.config import config_from_dict
        from kernels.generate import generate

        try:
            kc = config_from_dict(dict(config), self.algorithm)
            return kc, generate(self.layer, kc)
        except (ValueError, TypeError) as exc:
            reasons = getattr(exc, "reasons", None)
            return MeasureRecord.failed(config, Status.INVALID, "; ".join(reasons) if reasons else str(exc))

    def build(self, config: Mapping[str, Any]) -> Artifact | MeasureRecord:
        from kernels.nvcc import compile_cubin

        got = self._source(config)
        if isinstance(got, MeasureRecord):
            return got
        arch = self.arch or driver_arch()
        if arch is None:
            from iobound.errors import ToolchainError
            raise ToolchainError("no GPU here to read the arch from; give CudaStages an arch")
        res = compile_cubin(got[1], arch)
        if not res.ok:
            status = Status.TIMEOUT if res.status is Status.TIMEOUT else Status.COMPILE_ERROR
            return MeasureRecord.failed(config, status, res.log[-2000:],
                                        extra={"compile_seconds": res.seconds})
        path = Path(res.cubin_path)
        return Artifact(config=dict(config), payload=path.read_bytes(), name=path.name,
                        meta={"compile_seconds": res.seconds, "registers": res.registers})

    def run(self, artifact: Artifact) -> MeasureRecord:
        import dataclasses

        from kernels.config import check_config
        from search.measure.cuda import record_from_result

        got = self._source(artifact.config)
        if isinstance(got, MeasureRecord):
            return got
        if self._session is None:
            self._session = process_session()
        reasons = check_config(self.layer, got[0], self._session.limits)
        if reasons:
            return MeasureRecord.failed(artifact.config, Status.INVALID, "; ".join(reasons))
        res = self._session.measure(got[1], str(materialise(artifact, "cubin")), self.options)
        res = dataclasses.replace(res, compile_seconds=artifact.meta.get("compile_seconds"),
                                  registers=artifact.meta.get("registers"))
        return record_from_result(artifact.config, res)

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
