"""One executor's workers shared by several tuning loops, each in its own thread.

Tuning a network's layers at once (:mod:`search.session.parallel`) runs one tuning loop
per layer in a driver thread; all of them measure through one :class:`SharedExecutor`,
so one pool of workers (one Ray connection) serves every layer and stays busy while a
layer's strategy thinks about its next batch. Each layer gets a :meth:`SharedExecutor.lane`:
an executor-like handle whose :meth:`Lane.submit` tags the jobs with the layer's key
(its stages are registered with the executor, so a worker builds and runs them with the
right layer's code) and yields that batch's records as they complete. A dispatcher
thread drives the executor (:func:`search.executors.dispatch.step`) over one ledger of
every layer's jobs and routes each record back to its lane.

:meth:`SharedExecutor.stop` ends every lane's wait with ``KeyboardInterrupt`` (in the
lane's thread), so each tuning loop stops the way Ctrl-C stops one and keeps what it
logged; a set-up error of the executor (no compiler) is raised in every lane.

Examples
--------
>>> from search.measure.model import ModelMeasurer
>>> from iobound.layer import ConvLayer
>>> from search.executors import make_executor
>>> a = ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=32, k_h=3, k_w=3, padding=1)
>>> cfg = dict(x=8, y=8, z=8, alpha=4, tx=8, ty=8, tz=2)
>>> with SharedExecutor(make_executor(None, workers=2)) as pool:
...     lane = pool.lane("a", ModelMeasurer(a, "v100"))
...     [(i, r.status.value) for i, r in lane.submit([(3, cfg)])]
[(3, 'ok')]
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from typing import Any, Iterable, Iterator, Mapping

from search.measure.base import MeasureRecord

from .base import Executor, check_batch
from .dispatch import step
from .ledger import BUILD, Ledger

__all__ = ["SharedExecutor", "Lane"]

#: How long the dispatcher waits for workers while one is free (a lane may submit a batch
#: meanwhile; a wait on the workers' pipes or Ray's refs cannot also wait for that).
_POLL_S = 0.005
_STOPPED = object()


class Lane:
    """One layer's way into a :class:`SharedExecutor` (see the module doc).

    >>> from iobound.layer import ConvLayer
    >>> from search.measure.model import ModelMeasurer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> from search.executors import make_executor
    >>> with SharedExecutor(make_executor(None, workers=1)) as pool:  # no worker yet
    ...     lane = pool.lane("conv1", ModelMeasurer(layer, "v100"))
    ...     list(lane.submit([])), lane.describe()["workers"]  # an empty batch starts nothing
    ([], 1)
    """

    def __init__(self, pool: "SharedExecutor", key: Any):
        self.pool, self.key = pool, key
        self.options = pool.executor.options

    def submit(self, batch: Iterable[tuple[int, Mapping[str, Any]]]
               ) -> Iterator[tuple[int, MeasureRecord]]:
        """Like :meth:`Executor.submit`: ``(index, record)`` once per index as each completes.

        Raises ``KeyboardInterrupt`` once the pool is stopped, and the executor's set-up
        error if it failed. Closing the iteration early drops the batch's remaining jobs.
        """
        items = check_batch(batch)
        if not items:
            return
        inbox: queue.SimpleQueue = queue.SimpleQueue()
        ids = self.pool._submit(self.key, items, inbox)
        left = len(items)
        try:
            while left:
                got = inbox.get()
                if got is _STOPPED:
                    raise KeyboardInterrupt("the shared executor was stopped")
                if isinstance(got, BaseException):
                    raise got
                left -= 1
                yield got
        finally:
            if left:
                self.pool._drop(ids)

    def close(self) -> None:
        """Nothing to release: the pool's owner closes it."""

    def describe(self) -> dict:
        return self.pool.executor.describe()


class SharedExecutor:
    """An executor's workers shared by lanes in several threads (see the module doc).

    >>> from iobound.layer import ConvLayer
    >>> from search.measure.model import ModelMeasurer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> from search.executors.local import LocalExecutor
    >>> from search.executors.options import ExecutorOptions
    >>> with SharedExecutor(LocalExecutor(None, ExecutorOptions(workers=1))) as pool:
    ...     lanes = [pool.lane(k, ModelMeasurer(layer, k + "100")) for k in ("v", "a")]
    ...     sorted(pool.executor.keyed), [lane.key for lane in lanes]  # no batch: nothing started
    (['a', 'v'], ['v', 'a'])
    """

    def __init__(self, executor: Executor):
        self.executor = executor
        self._lock = threading.Lock()
        self._incoming: list = []  # (key, [(id, config)], ids) waiting for the dispatcher
        self._wake = threading.Event()
        self._routes: dict[int, tuple[queue.SimpleQueue, int]] = {}  # job id -> (inbox, index)
        self._dropped: list[list[int]] = []
        self._ids = itertools.count()
        self._stopped = threading.Event()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    def lane(self, key: Any, stages) -> Lane:
        """A lane for jobs of ``key``, built and run by ``stages`` (a Stages or Measurer)."""
        with self._lock:
            if key not in self.executor.keyed:
                self.executor.register(key, stages)
        return Lane(self, key)

    # -- called from the lanes' threads -------------------------------------------------

    def _submit(self, key: Any, items: list[tuple[int, dict]], inbox) -> list[int]:
        with self._lock:
            if self._error is not None:
                raise self._error
            if self._stopped.is_set():
                raise KeyboardInterrupt("the shared executor was stopped")
            ids = [next(self._ids) for _ in items]
            for gid, (index, _) in zip(ids, items):
                self._routes[gid] = (inbox, index)
            self._incoming.append((key, [(g, c) for g, (_, c) in zip(ids, items)]))
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="executor-dispatch",
                                                 daemon=True)
                self._thread.start()
        self._wake.set()
        return ids

    def _drop(self, ids: list[int]) -> None:
        with self._lock:
            for gid in ids:
                self._routes.pop(gid, None)
            self._dropped.append(ids)
        self._wake.set()

    # -- the dispatcher thread ------------------------------------------------------------

    def _take(self, ledger: Ledger) -> None:
        with self._lock:
            incoming, self._incoming = self._incoming, []
            dropped, self._dropped = self._dropped, []
            self._wake.clear()
        for key, items in incoming:
            ledger.add(items, key)
        for ids in dropped:
            ledger.drop(ids)

    def _route(self, done: list[tuple[int, MeasureRecord]]) -> None:
        with self._lock:
            routes = [(self._routes.pop(gid, None), rec) for gid, rec in done]
        for route, rec in routes:
            if route is not None:
                route[0].put((route[1], rec))

    def _serve(self) -> None:
        ledger = Ledger([], self.executor.options.retries)
        try:
            slots = self.executor._start()
            while not self._stopped.is_set():
                self._take(ledger)
                # a worker free for a new batch's builds: look for one often
                free = any(s.ready and s.job is None and BUILD in s.serves for s in slots)
                done = step(ledger, slots, self.executor._wait, _POLL_S if free else 1.0)
                if done is None:  # nothing running: sleep until a lane submits or stop
                    self._wake.wait(0.5)
                    continue
                self._route(done)
        except BaseException as exc:  # a set-up error: every lane raises it
            self._fail(exc)

    def _fail(self, exc: BaseException) -> None:
        with self._lock:
            self._error = exc
            routes, self._routes = self._routes, {}
        for inbox in {id(r[0]): r[0] for r in routes.values()}.values():
            inbox.put(exc)

    # -- owner ----------------------------------------------------------------------------

    def start(self) -> "SharedExecutor":
        """Start the workers now, in this thread (Ray wants its ``init`` in the main
        thread); otherwise the dispatcher starts them at the first batch."""
        self.executor._start()
        return self

    def stop(self) -> None:
        """Stop measuring: every lane's current and later waits raise ``KeyboardInterrupt``;
        the workers' running jobs are abandoned. Idempotent."""
        with self._lock:
            self._stopped.set()
            routes, self._routes = self._routes, {}
        self._wake.set()
        for inbox in {id(r[0]): r[0] for r in routes.values()}.values():
            inbox.put(_STOPPED)
        while self._thread is not None and self._thread.is_alive():
            time.sleep(0.01)  # not Thread.join: a Ctrl-C inside join can break it (gh-90882)

    def close(self) -> None:
        """Stop, then close the executor (its workers; a Ray it started)."""
        self.stop()
        self.executor.close()

    def __enter__(self) -> "SharedExecutor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
