"""A worker's answer that arrives after its job timed out is ignored by the dispatch loop.

A slot past its deadline is killed and its job fails as ``timeout``; a worker that
answers anyway (a Ray actor can: the local executor's killed worker gets a new pipe) must
neither crash the loop nor touch another job's record. The slots and the event source
here are made up, so the order of events is exact.
"""

from __future__ import annotations

import time

from kernels.status import Status
from search.executors.dispatch import Slot, drive
from search.executors.ledger import BUILD, RUN, Ledger
from search.executors.stages import Artifact
from search.measure.base import MeasureRecord


class Scripted(Slot):
    """A slot whose answers the test's ``wait`` gives; killing it leaves it restarting."""

    serves = {BUILD, RUN}

    def __init__(self, name: str, timeout_s: float):
        super().__init__(timeout_s)
        self.name, self.killed, self.started = name, 0, []

    def start(self, job):
        super().start(job)
        self.started.append((job.index, job.stage))

    def kill(self):
        self.killed += 1
        self.ready = False  # a fresh worker is starting


def _record(index: int) -> MeasureRecord:
    return MeasureRecord.ok({"i": index}, time_ms=float(index + 1))


def test_an_answer_after_the_timeout_is_ignored_and_every_job_gets_its_own_record():
    slow, fast = Scripted("slow", timeout_s=0.05), Scripted("fast", timeout_s=60.0)
    calls = []

    def wait(active, timeout):
        calls.append([s.name for s in active])
        events = []
        if len(calls) == 1:  # the fast slot answers; the slow one runs past its deadline
            time.sleep(0.06)
            events.append((fast, "ok", _stage_result(fast)))
        else:  # the killed worker answers its old job late, then the fresh one is ready
            if not slow.ready:
                events += [(slow, "ok", Artifact({"i": 0})), (slow, "ready", None)]
            elif slow.job is not None:
                events.append((slow, "ok", _stage_result(slow)))
            if fast.job is not None:
                events.append((fast, "ok", _stage_result(fast)))
        return events

    ledger = Ledger([(0, {"i": 0}), (1, {"i": 1}), (2, {"i": 2})], retries=0)
    got = dict(drive(ledger, [slow, fast], wait))
    assert sorted(got) == [0, 1, 2]
    assert got[0].status is Status.TIMEOUT and slow.killed == 1
    assert got[1].is_ok and got[1].config == {"i": 1}
    assert got[2].is_ok and got[2].config == {"i": 2}  # not the late answer of job 0


def _stage_result(slot: Scripted):
    """What the stage the slot runs returns: a build's artifact, or a run's record."""
    job = slot.job
    return Artifact(job.config) if job.stage == BUILD else _record(job.index)
