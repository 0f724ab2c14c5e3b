"""The ``emulate`` measurer as stages: g++ builds on any CPU, emulated runs on any CPU.

:meth:`EmulateStages.build` generates the kernel and builds the emulator library (the
slow part, seconds of g++); the artifact carries the library's bytes under its cache
name. :meth:`EmulateStages.run` puts them in this worker's emulator cache (so the run
finds the build, on this node or another) and measures with the
:class:`~search.measure.emulate.EmulateMeasurer` itself, whose cache lookup then skips
the compile: the records are exactly the measurer's.

A configuration that fails to generate or to build gets an artifact without bytes; its
run asks the measurer, which meets the same failure and classifies it (``invalid``,
``compile_error``) the one way the measurer does.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> from search.measure.emulate import EmulateMeasurer
>>> layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
>>> stages = EmulateStages.of(EmulateMeasurer(layer))
>>> art = stages.build(dict(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1))
>>> len(art.payload) > 0, art.name.endswith(".so"), stages.run(art).status.value
(True, True, 'ok')
>>> stages.run(stages.build(dict(x=3, y=3, z=2, alpha=1, tx=2, ty=3, tz=1))).status.value
'invalid'
"""

from __future__ import annotations

from typing import Any, Mapping

from search.measure.base import MeasureRecord
from search.measure.emulate import EmulateMeasurer

from .stages import Artifact, MeasurerStages, materialise

__all__ = ["EmulateStages"]


class EmulateStages(MeasurerStages):
    """Build (g++) and run (emulate and check) of an :class:`EmulateMeasurer`.

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
    >>> stages = EmulateStages.of(EmulateMeasurer(layer))
    >>> art = stages.build(dict(x=3, y=3, z=2, alpha=1, tx=2, ty=3, tz=1))  # tx must divide x
    >>> art.payload is None, stages.name, stages.needs_gpu  # no g++ run: the run refuses it
    (True, 'emulate', False)
    """

    preload = ("kernels.config", "kernels.emulator", "kernels.generate", "kernels.verify")

    @classmethod
    def of(cls, measurer: EmulateMeasurer) -> "EmulateStages":
        return cls(measurer)

    def build(self, config: Mapping[str, Any]) -> Artifact:
        from kernels.config import config_from_dict
        from kernels.emulator import EmulatorBuildError, build_emulator
        from kernels.generate import generate

        m = self.measurer
        try:
            source = generate(m.layer, config_from_dict(dict(config), m.algorithm))
            # no limit of its own: the executor's --timeout kills the worker and its g++
            lib, seconds, cached = build_emulator(source.code, timeout=None)
        except (ValueError, TypeError, EmulatorBuildError):  # the run classifies it
            return Artifact(config=dict(config))
        return Artifact(config=dict(config), payload=lib.read_bytes(), name=lib.name,
                        meta={"build_seconds": seconds, "cached_build": cached})

    def run(self, artifact: Artifact) -> MeasureRecord:
        if artifact.payload is not None:
            _trust_shipped(materialise(artifact, "emu"), artifact.payload)
        return super().run(artifact)


def _trust_shipped(path, payload: bytes) -> None:
    """Record the digest of a library this run's own build task shipped (the trusted cache
    loads only files with one, ``kernels.cache.is_trusted``; without it the measurer
    compiled the kernel again), if the file holds exactly those bytes."""
    import hashlib

    from kernels.cache import file_digest, is_trusted, record_digest

    if is_trusted(path):
        return
    digest = hashlib.sha256(payload).hexdigest()
    if file_digest(path) == digest:
        record_digest(path, digest)
