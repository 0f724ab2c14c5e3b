"""Stages that misbehave on purpose, for the executor contract tests.

A configuration ``{"n": N, "fault": KIND}`` is measured as ``ok`` with ``time_ms == N``
unless KIND says otherwise:

- ``segfault``: the run kills its own process with SIGSEGV (a kernel crashing the worker);
- ``die_once``: the first run kills its process with SIGKILL, a retry measures it;
- ``hang``: the run sleeps for an hour; ``build_hang``: the build does;
- ``build_segfault``: the build crashes its process;
- ``raise``: the run raises RuntimeError; ``toolchain``: the run raises ToolchainError;
- ``slow``: the run writes its pid to ``FOLDER/pid-N`` and sleeps ``delay`` seconds;
- ``kill_runner``: the build SIGKILLs the process whose pid is in ``FOLDER/runner-pid``
  (a Ray run actor, idle while its slot builds), removes the file and sleeps ``delay``.

Markers live in ``folder`` (one per test), so "first attempt" holds across processes.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from iobound.errors import ToolchainError
from search.executors.stages import Artifact, Stages
from search.measure.base import MeasureRecord, Measurer


class FaultStages(Stages):
    """See the module doc."""

    name = "fault"

    def __init__(self, folder, delay: float = 1.0):
        self.folder, self.delay = str(folder), delay

    def build(self, config):
        fault = config.get("fault")
        if fault == "build_hang":
            time.sleep(3600)
        if fault == "build_segfault":
            os.kill(os.getpid(), signal.SIGSEGV)
        if fault == "kill_runner":
            runner = Path(self.folder) / "runner-pid"
            os.kill(int(runner.read_text()), signal.SIGKILL)
            runner.unlink()
            time.sleep(self.delay)
        return Artifact(config=dict(config), payload=b"built", name=f"fault-{config['n']}")

    def run(self, artifact):
        config, fault = artifact.config, artifact.config.get("fault")
        if fault == "segfault":
            os.kill(os.getpid(), signal.SIGSEGV)
        if fault == "die_once":
            marker = Path(self.folder) / f"died-{config['n']}"
            if not marker.exists():
                marker.touch()
                os.kill(os.getpid(), signal.SIGKILL)
        if fault == "hang":
            time.sleep(3600)
        if fault == "raise":
            raise RuntimeError("boom")
        if fault == "toolchain":
            raise ToolchainError("no such compiler")
        if fault == "slow":
            pid = Path(self.folder) / f"pid-{config['n']}"
            if not pid.exists():
                pid.write_text(str(os.getpid()))
            time.sleep(self.delay)
        return MeasureRecord.ok(config, time_ms=float(config["n"]),
                                extra={"pid": os.getpid(), "payload": artifact.payload.decode()})


class FaultMeasurer(Measurer):
    """The same faults as a measurer (in process), exposing :class:`FaultStages` as its stages."""

    name = "fault"

    def __init__(self, folder, delay: float = 1.0):
        self.folder, self.delay = str(folder), delay

    def stages(self) -> FaultStages:
        return FaultStages(self.folder, self.delay)

    def measure(self, configs):
        stages = self.stages()
        return [stages.run(stages.build(c)) for c in configs]


class BrokenStages(FaultStages):
    """Stages that cannot be loaded in a worker (as when a module is missing there)."""

    def __setstate__(self, state):
        raise RuntimeError("cannot load these stages here")
