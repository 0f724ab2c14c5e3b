"""The loop both executors run: hand queued jobs to free workers, collect, retry, time out.

A :class:`Slot` is one place a job can run (a worker process, a Ray actor, a Ray task
slot). :func:`drive` keeps every ready slot busy with the ledger's next job, waits for
events from busy slots until the earliest deadline, and turns each event into the
ledger's ``completed``/``failed``; a slot past its deadline is killed (its worker replaced)
and its job fails as ``timeout``. It yields each record as soon as it is final, and
raises only for set-up errors (an event of kind ``"fatal"``: no compiler, no GPU).

Examples
--------
>>> class Now(Slot):            # runs a job at once, in the driver
...     serves = {BUILD, RUN}
...     def start(self, job):
...         super().start(job)
...         self.result = MeasureRecord.ok(job.config, time_ms=1.0) if job.stage == RUN \\
...             else Artifact(job.config)
...     def kill(self): pass
>>> def wait(slots, timeout):
...     return [(s, "ok", s.result) for s in slots if s.job]
>>> [i for i, _ in drive(Ledger([(0, {}), (1, {})], 0), [Now(9.0)], wait)]
[0, 1]
"""

from __future__ import annotations

from kernels.status import Status

import abc
import logging
import time
from typing import Any, Callable, Iterator, Sequence

from iobound.errors import ToolchainError
from search.measure.base import MeasureRecord

from .ledger import BUILD, RUN, Job, Ledger
from .stages import Artifact  # noqa: F401  (the doctest builds artifacts)

__all__ = ["Slot", "Event", "drive", "step", "RUNTIME_ERROR", "TIMEOUT", "KILLED_STARTING_LIMIT"]

log = logging.getLogger(__name__)

RUNTIME_ERROR, TIMEOUT = Status.RUNTIME_ERROR, Status.TIMEOUT

#: Workers of one slot killed from outside (the out-of-memory killer, a user) in a row
#: before they were ready that are replaced; one more is taken for a worker that cannot
#: start. A worker whose own set-up fails is not replaced: it would fail again.
KILLED_STARTING_LIMIT = 3

#: (slot, kind, value): kind "ok" (value: the stage's result), "error" (value: the
#: message of an exception the stage raised), "died" (value: why the worker is gone),
#: "ready" (a new worker finished starting), "fatal" (value: a set-up error's message).
Event = tuple["Slot", str, Any]


class Slot(abc.ABC):
    """One place a job runs; subclasses start it and kill it (see the module doc).

    >>> class Idle(Slot):  # a slot whose worker never answers
    ...     def kill(self): pass
    >>> slot = Idle(timeout_s=5.0)
    >>> slot.start(Job(0, {"a": 1}, BUILD, {"a": 1})); slot.job.index, slot.deadline < float("inf")
    (0, True)
    >>> slot.finish().index, slot.job, slot.deadline  # free again
    (0, None, inf)
    """

    #: The stages this slot takes (``{BUILD}``, ``{RUN}`` or both).
    serves: set = frozenset({BUILD, RUN})

    def __init__(self, timeout_s: float):
        self.timeout_s = timeout_s
        self.job: Job | None = None
        self.deadline = float("inf")
        self.ready = True
        self.killed_starting = 0  # workers that ended before ready, in a row

    def replaces_starting_worker(self, killed: bool) -> bool:
        """Whether a worker that ended before it was ready is replaced: only one ``killed``
        from outside (the out-of-memory killer, a user; one whose own set-up failed would
        fail again), up to :data:`KILLED_STARTING_LIMIT` in a row (a ready worker resets
        the count)."""
        self.killed_starting += 1
        return killed and self.killed_starting <= KILLED_STARTING_LIMIT

    def start(self, job: Job) -> None:
        """Send ``job`` to the worker; the timeout counts from now."""
        self.job = job
        self.deadline = time.monotonic() + self.timeout_s

    def finish(self) -> Job:
        """The job just finished (or failed); the slot is free again."""
        job, self.job, self.deadline = self.job, None, float("inf")
        return job

    @abc.abstractmethod
    def kill(self) -> None:
        """Stop the worker running the current job and prepare a fresh one."""

    def revive(self) -> None:
        """Replace a worker found dead while idle (nothing to retry: it held no job); the
        slot is then not ready until the new one says so. By default nothing to check."""


def _fail(ledger: Ledger, job: Job, status: Status, reason: str) -> None:
    # by the configuration itself: the index is the job's place in its batch, which no log holds
    config = ",".join(f"{k}={v}" for k, v in job.config.items()) if isinstance(job.config, dict) \
        else job.config
    log.warning("configuration %s, attempt %d: %s", config, job.failures + 1, reason)
    ledger.failed(job, status, reason)


def _handle(ledger: Ledger, slot: Slot, kind: str, value: Any) -> None:
    if kind == "ready":
        slot.ready, slot.killed_starting = True, 0
        return
    if kind == "fatal":  # with or without a job: retrying cannot help
        raise ToolchainError(value)
    if slot.job is None:  # a late answer of a job already given up; nothing to do
        return
    job = slot.finish()
    if kind == "ok":
        ledger.completed(job, value)
    elif kind == "error":
        _fail(ledger, job, RUNTIME_ERROR, f"the {job.stage} raised {value}")
    elif kind == "died":
        _fail(ledger, job, RUNTIME_ERROR, f"the worker died during the {job.stage}: {value}")
    else:
        raise ValueError(f"unknown event kind {kind!r}")


def step(ledger: Ledger, slots: Sequence[Slot], wait: Callable[[list[Slot], float], list[Event]],
         max_wait: float = 1.0) -> list[tuple[int, MeasureRecord]] | None:
    """One turn of :func:`drive`: start queued jobs on free slots, wait up to ``max_wait``
    seconds (less before a deadline) for events, act on them and on timeouts; the records
    that became final. ``None`` when no slot is busy or starting (nothing to wait for).

    >>> class Stuck(Slot):  # never answers: its job overruns a timeout of 0 s
    ...     def kill(self): self.killed = True
    >>> book, slot = Ledger([(3, {"a": 1})], retries=0), Stuck(timeout_s=0.0)
    >>> [(i, r.status.value) for i, r in step(book, [slot], lambda slots, t: [])], slot.killed
    ([(3, 'timeout')], True)
    >>> step(book, [slot], lambda slots, t: []) is None  # nothing left to wait for
    True
    """
    for slot in slots:
        if slot.ready and slot.job is None and ledger.waiting(slot.serves):
            slot.revive()  # killed between batches: a job sent to it would be lost
        if slot.ready and slot.job is None:
            job = ledger.next_job(slot.serves)
            if job is not None:
                slot.start(job)
    active = [s for s in slots if s.job is not None or not s.ready]
    if not active:
        return None
    deadline = min(s.deadline for s in active)
    timeout = max(0.0, min(deadline - time.monotonic(), max_wait))
    for slot, kind, value in wait(active, timeout):
        _handle(ledger, slot, kind, value)
    now = time.monotonic()
    for slot in active:
        if slot.job is not None and slot.deadline <= now:
            slot.kill()
            job = slot.finish()
            _fail(ledger, job, TIMEOUT, f"the {job.stage} exceeded the {slot.timeout_s:g} s timeout")
    return ledger.drain()


def drive(ledger: Ledger, slots: Sequence[Slot],
          wait: Callable[[list[Slot], float], list[Event]]) -> Iterator[tuple[int, MeasureRecord]]:
    """Run the ledger's jobs on ``slots``; yields ``(index, record)`` as each is final.

    ``wait(slots, timeout)`` returns the events of those slots (busy or starting) that
    arrive within ``timeout`` seconds (possibly none).

    >>> class Builder(Slot):  # builds only: no slot runs
    ...     serves = {BUILD}
    ...     def kill(self): pass
    >>> def wait(slots, timeout):
    ...     return [(s, "ok", Artifact(s.job.config)) for s in slots if s.job]
    >>> list(drive(Ledger([(0, {})], 0), [Builder(9.0)], wait))
    Traceback (most recent call last):
    ...
    RuntimeError: no worker serves the run stage
    """
    while not ledger.done:
        done = step(ledger, slots, wait)
        if done is None:
            stuck = {BUILD, RUN} - set().union(*(s.serves for s in slots))
            raise RuntimeError(f"no worker serves the {'/'.join(sorted(stuck))} stage")
        yield from done
