"""The executor interface: a batch of (index, config) in, (index, record) out as each completes.

An :class:`Executor` owns workers for one measurer's :class:`~search.executors.stages.Stages`
and keeps them between batches (a GPU worker keeps its CUDA context for the whole run).
:meth:`Executor.submit` yields every index of the batch exactly once, in the order the
measurements complete, so the tuner can log each record at once. Faults are records, not
exceptions: a configuration whose worker dies or exceeds the timeout is retried on a
fresh worker up to ``retries`` times, then recorded as ``runtime_error`` or ``timeout``
(see :mod:`search.executors.ledger`). Errors of the set-up (no compiler, no GPU, Ray not
installed) are raised.

Examples
--------
>>> from search.executors import make_executor
>>> from search.measure.model import ModelMeasurer
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=32, k_h=3, k_w=3, padding=1)
>>> cfg = dict(x=8, y=8, z=8, alpha=4, tx=8, ty=8, tz=2)
>>> with make_executor(ModelMeasurer(layer, "v100"), workers=1) as ex:
...     [(i, r.status.value) for i, r in ex.submit([(7, cfg)])]
[(7, 'ok')]
"""

from __future__ import annotations

import abc
import numbers
from typing import Any, Iterable, Iterator, Mapping

from iobound.errors import InvalidInputError
from search.measure.base import MeasureRecord

from .dispatch import Event, Slot, drive
from .ledger import Ledger
from .options import ExecutorOptions
from .stages import Stages

__all__ = ["Executor", "check_batch"]


def batch_index(index) -> int:
    """``index`` as an ``int`` (numpy's integers too); InvalidInputError for anything else
    (a bool, ``1.7``, ``"3"``): an index is handed back as given, so it is never rounded.

    >>> import numpy as np
    >>> batch_index(np.int64(3)), batch_index(7)
    (3, 7)
    >>> batch_index(True)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: a batch index must be an integer, got True
    """
    if isinstance(index, bool) or not isinstance(index, numbers.Integral):
        raise InvalidInputError(f"a batch index must be an integer, got {index!r:.40}")
    return int(index)


def check_batch(batch: Iterable[tuple[int, Mapping[str, Any]]]) -> list[tuple[int, dict]]:
    """The batch as a list of ``(int index, dict config)``; InvalidInputError (a ValueError)
    on a batch that is no iterable of pairs, a config that is no mapping, an index that is
    no integer (every index comes back as it was given, never ``1`` for ``1.7``) or one
    given twice.

    >>> check_batch([(3, {"a": 1}), (3, {"a": 1})])
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: index 3 appears twice in the batch; each configuration is measured once
    >>> check_batch([(1.7, {"a": 1})])
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: a batch index must be an integer, got 1.7
    """
    if isinstance(batch, (str, bytes, Mapping)) or not isinstance(batch, Iterable):
        raise InvalidInputError(f"a batch must be an iterable of (index, config) pairs, "
                                f"got {batch!r:.60}")
    out, seen = [], set()
    for item in batch:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise InvalidInputError(f"a batch item must be an (index, config) pair, got {item!r:.60}")
        index, config = item
        index = batch_index(index)
        if not isinstance(config, Mapping):
            raise InvalidInputError(f"the config of index {index} must be a mapping of "
                                    f"parameter values, got {config!r:.60}")
        if index in seen:
            raise InvalidInputError(f"index {index} appears twice in the batch; "
                                    "each configuration is measured once")
        seen.add(index)
        out.append((index, dict(config)))
    return out


class Executor(abc.ABC):
    """Measures batches with a measurer's stages on workers (see the module doc).

    >>> from iobound.layer import ConvLayer
    >>> from search.measure.model import ModelMeasurer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> from search.executors.local import LocalExecutor
    >>> ex = LocalExecutor(ModelMeasurer(layer, "v100"), ExecutorOptions(workers=1))  # no worker
    >>> ex.needs_gpu, ex.capacity(), ex.stages_name
    (False, 1, 'model')
    >>> ex.close(); list(ex.submit([(0, {})]))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: the local executor is closed; make a new one to measure again
    """

    #: The registry name (``local``, ``ray``).
    name: str = ""
    #: Set by :meth:`close`: workers started after it would never be stopped.
    closed: bool = False

    def __init__(self, stages: Stages | None, options: ExecutorOptions = ExecutorOptions()):
        self.stages = stages
        self.options = options
        #: Stages of other keys (:meth:`register`), for jobs submitted with that key.
        self.keyed: dict[Any, Stages] = {}

    def register(self, key: Any, stages) -> None:
        """Let jobs of ``key`` be built and run by ``stages`` (a Stages or a Measurer): one
        executor then serves several layers (:mod:`search.executors.shared`). Every
        key's stages must agree on :attr:`Stages.needs_gpu`."""
        from .stages import stages_for
        if key is None:
            raise ValueError("key None is the executor's own stages")
        stages = stages_for(stages)
        if self.keyed and stages.needs_gpu != self.needs_gpu:
            raise ValueError("every stages of one executor must agree on needs_gpu")
        self.keyed[key] = stages

    @property
    def needs_gpu(self) -> bool:
        """Whether runs go to GPU workers (the stages' own, or the first registered)."""
        first = self.stages or next(iter(self.keyed.values()), None)
        return bool(first is not None and first.needs_gpu)

    @property
    def stages_name(self) -> str:
        first = self.stages or next(iter(self.keyed.values()), None)
        return first.name if first is not None else "?"

    def capacity(self) -> int:
        """How many CPU workers build (and run, for CPU measurers) at once."""
        return self.options.worker_count

    def submit(self, batch: Iterable[tuple[int, Mapping[str, Any]]]
               ) -> Iterator[tuple[int, MeasureRecord]]:
        """Measure the batch; yields ``(index, record)`` once per index as each completes.

        Stopping the iteration early (``close()`` on the generator) or an error abandons
        the rest of the batch: the workers are stopped (new ones start on the next batch).
        """
        if self.closed:  # a use after its ``with`` block would start workers nothing stops
            raise InvalidInputError(f"the {self.name or 'executor'} executor is closed; make a "
                                    f"new one to measure again")
        items = check_batch(batch)
        if not items:
            return
        if self.stages is None:
            raise ValueError("this executor has no stages of its own: submit through "
                             "search.executors.shared.SharedExecutor lanes")
        slots = self._start()
        finished = False
        try:
            yield from drive(Ledger(items, self.options.retries), slots, self._wait)
            finished = True
        finally:
            if not finished:  # jobs may still be running on the workers
                self._stop_slots()

    @abc.abstractmethod
    def _start(self) -> list[Slot]:
        """The workers' slots, started on first use and kept between batches."""

    @abc.abstractmethod
    def _wait(self, slots: list[Slot], timeout: float) -> list[Event]:
        """Events of ``slots`` within ``timeout`` seconds (see :func:`drive`)."""

    @abc.abstractmethod
    def _stop_slots(self) -> None:
        """Stop every worker; the next batch starts new ones."""

    def close(self) -> None:
        """Stop the workers (and a Ray started by this executor). Idempotent; the
        executor measures no more after it."""
        self.closed = True
        self._stop_slots()

    def describe(self) -> dict:
        """A JSON-able summary for logs: name and options."""
        o = self.options
        return {"name": self.name, "workers": o.workers, "timeout_s": o.timeout_s,
                "retries": o.retries, "ray_address": o.ray_address}

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
