"""A deterministic stand-in measurer for the network tests, that leaves a trace of its work.

Its time for a configuration is a fixed function of the layer's name and the
configuration (no randomness, no clock). Every build sleeps ``delay`` seconds and
writes a marker ``FOLDER/<layer>--<config>--<pid>--<start>--<end>`` with the worker's
process id and the build's start and end times (milliseconds), so a test can see which layers were measured at the same time and count
what was measured.
"""

from __future__ import annotations

import json
import os
import time
import zlib
from pathlib import Path

from search.executors.stages import Artifact, Stages
from search.measure.base import MeasureRecord, Measurer


def standin_time(layer: str, config: dict) -> float:
    """The stand-in's time of ``config`` for layer ``layer`` (ms, deterministic)."""
    key = layer + json.dumps(config, sort_keys=True)
    return 0.5 + (zlib.crc32(key.encode()) % 1000) / 100.0


class StandInStages(Stages):
    """See the module doc."""

    name = "standin"

    def __init__(self, layer: str, folder: str, delay: float):
        self.layer, self.folder, self.delay = layer, folder, delay

    def build(self, config):
        start = int(time.time() * 1e3)
        time.sleep(self.delay)
        tag = "_".join(f"{k}{v}" for k, v in sorted(config.items()))
        end = int(time.time() * 1e3)
        Path(self.folder, f"{self.layer}--{tag}--{os.getpid()}--{start}--{end}").touch()
        return Artifact(config=dict(config))

    def run(self, artifact):
        return MeasureRecord.ok(artifact.config, time_ms=standin_time(self.layer, artifact.config))


class StandInMeasurer(Measurer):
    """The stand-in as a measurer; executors measure with its :meth:`stages`."""

    name = "standin"

    def __init__(self, layer, folder, delay: float = 0.05):
        self.layer_name, self.folder, self.delay = layer.name, str(folder), delay

    def stages(self) -> StandInStages:
        return StandInStages(self.layer_name, self.folder, self.delay)

    def measure(self, configs):
        stages = self.stages()
        return [stages.run(stages.build(c)) for c in configs]


def markers(folder) -> list[tuple[str, str, int, int, int]]:
    """(layer, config tag, pid, build start, build end) of every marker in ``folder``."""
    out = []
    for p in Path(folder).iterdir():
        layer, tag, pid, start, end = p.name.split("--")
        out.append((layer, tag, int(pid), int(start), int(end)))
    return out
