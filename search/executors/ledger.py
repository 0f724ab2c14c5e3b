"""The bookkeeping of one batch: which stage each configuration is at, its failures, its record.

Both executors drive a :class:`Ledger`, so they share one meaning of "faults survived":

- every index of the batch gets exactly one record (a second one raises, it is a bug);
- a configuration whose worker died or overran the timeout goes back to the front of its
  stage's queue, until it has failed ``retries + 1`` times; then its record is
  ``runtime_error`` (worker died, or the stage raised) or ``timeout``, with the reason
  and ``extra["attempts"]``;
- a record measured after earlier failures carries ``extra["attempts"]`` too.

Examples
--------
>>> book = Ledger([(5, {"a": 1})], retries=1)
>>> job = book.next_job({BUILD})
>>> book.failed(job, "timeout", "build exceeded 2 s")   # retried
>>> job = book.next_job({BUILD, RUN})
>>> book.failed(job, "timeout", "build exceeded 2 s")   # given up
>>> [(i, r.status.value, r.extra["attempts"]) for i, r in book.drain()]
[(5, 'timeout', 2)]
>>> book.done
True
"""

from __future__ import annotations

from kernels.status import Status

import dataclasses
from collections import deque
from dataclasses import dataclass
from typing import Any, Iterable

from search.measure.base import MeasureRecord

from .stages import Artifact

__all__ = ["BUILD", "RUN", "Job", "Ledger"]

BUILD, RUN = "build", "run"


@dataclass
class Job:
    """One configuration at one stage; ``payload`` is the config (build) or the artifact (run).

    >>> job = Ledger([(4, {"a": 2})], retries=0).next_job({BUILD})
    >>> job.index, job.stage, job.payload, job.failures
    (4, 'build', {'a': 2}, 0)
    """

    index: int
    config: dict
    stage: str
    payload: Any
    failures: int = 0
    key: Any = None  # whose stages build and run it (one executor serving several layers)


class Ledger:
    """Queues, failures and finished records of one batch (see the module doc).

    >>> book = Ledger([(5, {"a": 1})], retries=0)
    >>> job = book.next_job({BUILD}); book.completed(job, Artifact(job.config))  # built
    >>> job = book.next_job({RUN}); book.completed(job, MeasureRecord.ok(job.config, time_ms=2.0))
    >>> [(i, r.time_ms) for i, r in book.drain()], book.done
    ([(5, 2.0)], True)
    """

    def __init__(self, batch: Iterable[tuple[int, dict]], retries: int, key: Any = None):
        self.retries = retries
        self._queues = {BUILD: deque(), RUN: deque()}
        self._open: set[int] = set()
        self._dropped: set[int] = set()
        self._ready: list[tuple[int, MeasureRecord]] = []
        self.add(batch, key)

    def add(self, batch: Iterable[tuple[int, dict]], key: Any = None) -> None:
        """Queue more configurations (indices not seen before), built and run by ``key``'s stages."""
        for index, config in batch:
            if index in self._open or index in self._dropped:
                raise ValueError(f"index {index} is already in the ledger")
            self._queues[BUILD].append(Job(index, config, BUILD, config, key=key))
            self._open.add(index)

    def drop(self, indices: Iterable[int]) -> None:
        """Forget ``indices`` (their caller went away): queued jobs are removed, and what
        a worker still returns for them is ignored."""
        gone = set(indices) & self._open
        self._open -= gone
        self._dropped |= gone
        for stage, queue in self._queues.items():
            self._queues[stage] = deque(j for j in queue if j.index not in gone)

    @property
    def done(self) -> bool:
        """Whether every configuration has its record (drained or not)."""
        return not self._open

    def waiting(self, stages: set[str]) -> bool:
        """Whether a job of one of ``stages`` is queued."""
        return any(self._queues[s] for s in stages)

    def next_job(self, stages: set[str]) -> Job | None:
        """The next queued job a worker serving ``stages`` can take (runs first: they finish)."""
        for stage in (RUN, BUILD):
            if stage in stages and self._queues[stage]:
                return self._queues[stage].popleft()
        return None

    def completed(self, job: Job, result: Artifact | MeasureRecord) -> None:
        """A stage returned: a build's artifact is queued to run, a record is final. What
        is neither (a user's measurer or stages returning a dict) is the configuration's
        ``runtime_error`` record, not retried: the same code returns the same thing."""
        if isinstance(result, Artifact) and job.stage == BUILD:
            if job.index not in self._dropped:
                self._queues[RUN].append(Job(job.index, job.config, RUN, result, job.failures,
                                             job.key))
            return
        if not isinstance(result, MeasureRecord):
            wanted = "an Artifact or a MeasureRecord" if job.stage == BUILD else "a MeasureRecord"
            result = MeasureRecord.failed(job.config, Status.RUNTIME_ERROR,
                                          f"the {job.stage} returned {type(result).__name__}, "
                                          f"not {wanted}", extra={"failed_stage": job.stage})
        if job.failures:
            result = dataclasses.replace(result, extra={**result.extra, "attempts": job.failures + 1})
        self._finish(job.index, result)

    def failed(self, job: Job, status: Status | str, reason: str) -> None:
        """The job's worker died, raised or overran: retry it, or record ``status``."""
        job.failures += 1
        if job.failures <= self.retries and job.index not in self._dropped:
            self._queues[job.stage].appendleft(job)
            return
        error = f"{reason} (gave up after {job.failures} attempts)"
        self._finish(job.index, MeasureRecord.failed(job.config, status, error, extra={
            "attempts": job.failures, "failed_stage": job.stage}))

    def _finish(self, index: int, record: MeasureRecord) -> None:
        if index in self._dropped:
            return
        if index not in self._open:
            raise RuntimeError(f"index {index} was recorded twice")
        self._open.discard(index)
        self._ready.append((index, record))

    def drain(self) -> list[tuple[int, MeasureRecord]]:
        """The records finished since the last call, in the order they finished."""
        out, self._ready = self._ready, []
        return out
