"""Build and run as two stages: what an executor calls on its workers.

A measurer measures a configuration in one call; an executor splits that call in two
(AutoTVM's Builder/Runner split) so it can compile on every CPU and time on every GPU:

- :meth:`Stages.build` ``(config) -> Artifact | MeasureRecord`` runs on any CPU worker
  (the emulator's g++ build, nvcc; nothing for ``model`` and ``replay``). It returns the
  final record when the configuration fails before it runs (``invalid``,
  ``compile_error``), else an :class:`Artifact`, which carries the compiled bytes so a
  worker on another node can run it.
- :meth:`Stages.run` ``(artifact) -> MeasureRecord`` runs on a GPU worker when
  :attr:`Stages.needs_gpu` (one per GPU, holding its CUDA context), else on a CPU worker.

:func:`stages_for` gives the stages of a measurer: its own ``stages()`` when it has one,
the adapters of :mod:`search.executors.emulate_stages` and
:mod:`search.executors.cuda_stages` for ``emulate`` and ``cuda``, else
:class:`MeasurerStages` (no build; the run measures the one configuration). Stages are
pickled to the workers, so they hold only plain data.

Examples
--------
>>> from search.measure.replay import ReplayMeasurer
>>> from search.kt_cache import KtCache
>>> stages = stages_for(ReplayMeasurer(KtCache(tune_params={"a": [1]},
...                                            entries=[{"a": 1, "time": 2.0}])))
>>> art = stages.build({"a": 1})
>>> art.payload is None, stages.run(art).time_ms, stages.needs_gpu
(True, 2.0, False)
"""

from __future__ import annotations

import abc
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from search.measure.base import MeasureRecord, Measurer

__all__ = ["Artifact", "Stages", "MeasurerStages", "stages_for", "materialise"]


@dataclass(frozen=True)
class Artifact:
    """What a build hands to a run: the configuration, the built bytes and their name.

    ``payload`` is the compiled file (an emulator library, a cubin) or ``None`` when
    nothing was built; ``name`` is its file name in the run worker's cache; ``meta``
    holds JSON-able build facts (compile seconds, registers) the run adds to the record.

    >>> art = Artifact({"x": 8})  # nothing built (a model or replay measurer)
    >>> art.payload, art.name, art.meta
    (None, '', {})
    """

    config: dict
    payload: bytes | None = None
    name: str = ""
    meta: dict = field(default_factory=dict)


def materialise(artifact: Artifact, kind: str) -> Path:
    """The artifact's file in this worker's cache folder ``kind``, written if missing.

    A build on another node has put its bytes in the artifact; writing them under the
    same content-hash name lets the run find them where the build would have.

    >>> materialise(Artifact({"x": 8}), "emulator")
    Traceback (most recent call last):
    ...
    ValueError: the artifact carries no built file
    """
    from kernels.cache import cache_dir

    if artifact.payload is None or not artifact.name:
        raise ValueError("the artifact carries no built file")
    path = cache_dir(kind) / artifact.name
    if not path.exists():
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(artifact.payload)
        os.replace(tmp, path)  # atomic: concurrent writers of one name agree
    return path


class Stages(abc.ABC):
    """The two stages of one measurer (see the module doc).

    >>> class Doubled(Stages):  # "builds" 2 * x; the run takes that many ms
    ...     name = "doubled"
    ...     def build(self, config): return Artifact(dict(config), meta={"ms": 2.0 * config["x"]})
    ...     def run(self, art): return MeasureRecord.ok(art.config, time_ms=art.meta["ms"])
    >>> stages = Doubled()
    >>> stages.run(stages.build({"x": 3})).time_ms, stages.needs_gpu, stages_for(stages) is stages
    (6.0, False, True)
    """

    #: The measurer name the records belong to.
    name: str = ""
    #: Whether :meth:`run` must happen on a GPU worker.
    needs_gpu: bool = False
    #: Modules a worker may import before its first job (the local executor's forkserver
    #: does, once); never one that starts a GPU driver, since workers fork from it.
    preload: tuple[str, ...] = ()

    @abc.abstractmethod
    def build(self, config: Mapping[str, Any]) -> Artifact | MeasureRecord:
        """Compile ``config``: an artifact, or the final record of a config that fails early."""

    @abc.abstractmethod
    def run(self, artifact: Artifact) -> MeasureRecord:
        """Measure a built configuration (on the worker that holds the device)."""

    def close(self) -> None:
        """Release what a worker holds (a CUDA context); called when the worker stops."""


class MeasurerStages(Stages):
    """Any measurer as stages: no build, the run measures the one configuration.

    For measurers without a compile step (``model``, ``replay``, test measurers).

    >>> from iobound.layer import ConvLayer
    >>> from search.measure.model import ModelMeasurer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> stages = MeasurerStages(ModelMeasurer(layer, "v100"))
    >>> art = stages.build(dict(x=3, y=3, z=2, alpha=1, tx=2, ty=3, tz=1))  # nothing to build
    >>> stages.name, art.payload, stages.run(art).status.value  # the run measures (and refuses)
    ('model', None, 'invalid')
    """

    def __init__(self, measurer: Measurer):
        self.measurer = measurer
        self.name = measurer.name

    def build(self, config: Mapping[str, Any]) -> Artifact:
        return Artifact(config=dict(config))

    def run(self, artifact: Artifact) -> MeasureRecord:
        (record,) = self.measurer.measure([artifact.config])
        return record

    def close(self) -> None:
        self.measurer.close()


def stages_for(measurer: Measurer | Stages) -> Stages:
    """The build/run stages of ``measurer`` (stages are returned as they are).

    >>> from iobound.layer import ConvLayer
    >>> from search.measure.model import ModelMeasurer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> from search.measure.emulate import EmulateMeasurer
    >>> type(stages_for(ModelMeasurer(layer, "v100"))).__name__
    'MeasurerStages'
    >>> type(stages_for(EmulateMeasurer(layer))).__name__
    'EmulateStages'
    """
    if isinstance(measurer, Stages):
        return measurer
    own = getattr(measurer, "stages", None)
    if callable(own):
        return own()
    if measurer.name == "emulate":
        from .emulate_stages import EmulateStages
        return EmulateStages.of(measurer)
    if measurer.name == "cuda":
        from .cuda_stages import CudaStages
        return CudaStages.of(measurer)
    return MeasurerStages(measurer)
