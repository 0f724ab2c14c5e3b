"""Tune several layers at once, all measuring through one pool of workers.

:func:`run_layers_parallel` is what :func:`~search.session.run.run_layers` does for
several layers measured through an executor (``TuneSettings.executor``): one executor
(worker processes, or one Ray connection) behind a
:class:`~search.executors.shared.SharedExecutor`, and ``parallel_layers`` driver threads
that each take the next layer and run :func:`~search.session.run.run_layer` on it, its
measurements going to the shared workers through the layer's own lane. So while one
layer's strategy chooses its next batch, the batches of the others keep the workers busy.

Each layer keeps everything of its own: its strategy (and seed), its log (each record
appended as it completes), its resume, history and export; the history options are read
when the layer starts (a layer started later sees what earlier ones stored). A layer's
records do not depend on which layers run beside it: with a deterministic measurer and a
fixed seed, the results equal those of the layers tuned one after another.

Ctrl-C or SIGTERM (a ``KeyboardInterrupt`` in the main thread) stops the pool: every
running layer stops as a single run does (its log complete, history and export written),
layers not started are left for ``--resume``, and :class:`~search.interrupts.Interrupted`
says how many measurements the logs keep. A layer that fails stops the others the same
way, and its error is raised.

Examples
--------
>>> import tempfile
>>> from iobound.networks import network_layers
>>> from search.executors import ExecutorOptions
>>> from search.session import TuneSettings, tune_layers
>>> settings = TuneSettings(strategy="random", budget=4,
...                         executor=ExecutorOptions(workers=2, parallel_layers=2))
>>> reports = tune_layers(network_layers("alexnet")[3:5], "v100", settings,
...                       out_dir=tempfile.mkdtemp(), verify=False)
>>> [(r.layer.name, r.result.evaluations) for r in reports]
[('alexnet.conv4', 4), ('alexnet.conv5', 4)]
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Callable, Sequence

from ..interrupts import Interrupted, signals_deferred
from .files import FilePart, logged_count, per_layer_path
from .settings import Builders, Observer

if TYPE_CHECKING:  # pragma: no cover
    from .reports import LayerReport
    from .plan import LayerJob

__all__ = ["run_layers_parallel", "layers_at_once", "interrupted_run"]


class _Serialized(Observer):
    """The observer, its hooks called one at a time (they come from several threads)."""

    def __init__(self, inner: Observer):
        self.inner, self.lock = inner, threading.Lock()

    def _call(self, name: str, *args) -> None:
        with self.lock:
            getattr(self.inner, name)(*args)

    def layer_started(self, job, space) -> None:
        self._call("layer_started", job, space)

    def progress(self, done, budget, best) -> None:
        self._call("progress", done, budget, best)

    def tuning_done(self) -> None:
        self._call("tuning_done")

    def notice(self, text: str) -> None:
        self._call("notice", text)

    def finished(self, report) -> None:
        self._call("finished", report)


def layers_at_once(options, capacity: int, layers: int) -> int:
    """How many layers run at once: ``options.parallel_layers``, else two per worker on
    Ray and one on the local executor (whose driver shares the machine's cores with its
    workers: benchmarks/network_overlap.py measured no gain there); never more than there
    are layers.

    >>> from search.executors import ExecutorOptions
    >>> layers_at_once(ExecutorOptions(executor="ray"), 2, 53), layers_at_once(ExecutorOptions(), 2, 53)
    (4, 1)
    >>> layers_at_once(ExecutorOptions(parallel_layers=9), 2, 5)
    5
    """
    default = 2 * capacity if options.executor == "ray" else 1
    return max(1, min(layers, options.parallel_layers or default))


def interrupted_run(jobs, reports, errors) -> Interrupted:
    """One :class:`Interrupted` for a run of several layers: the measurements every layer's
    log keeps (``reports`` of the layers done, a repeat's counted once: with the layer it
    repeats; ``errors`` the layers stopped; any other layer's log as it is: records of an
    earlier run that this one had not reached).

    With one job (a single layer, stopped after its run was stored) the log is the job's.

    >>> from types import SimpleNamespace as NS
    >>> jobs = [NS(resume_as="run.jsonl", per_algorithm=False)] * 2
    >>> str(interrupted_run(jobs, [], {0: Interrupted(3, "x")}))
    'interrupted: 3 measurements kept in run.<layer>.jsonl; resume with --resume run.jsonl'
    >>> jobs = [NS(resume_as="run.jsonl", per_algorithm=True)] * 2  # --algorithm all
    >>> str(interrupted_run(jobs, [], {0: Interrupted(3, "x")}))
    'interrupted: 3 measurements kept in run.<layer>.<algorithm>.jsonl; resume with --resume run.jsonl'
    """
    kept = 0
    for k, job in enumerate(jobs):
        report = reports[k] if k < len(reports) else None
        if report is not None:
            kept += len(report.result.trials) if report.same_as is None else 0
        elif isinstance(errors.get(k), Interrupted):
            kept += errors[k].measurements
        else:
            kept += logged_count(getattr(job, "settings", None))
    stopped = [e for e in errors.values() if isinstance(e, Interrupted)]
    failed = "; ".join(e.failed for e in stopped if e.failed) or None
    base = jobs[0].resume_as  # the per-layer logs' pattern, e.g. run.<layer>.jsonl
    if len(jobs) == 1:
        settings = jobs[0].settings
        return Interrupted(kept, settings.log or settings.resume, failed, base)
    part = "<layer>.<algorithm>" if jobs[0].per_algorithm else "<layer>"
    logs = per_layer_path(base, FilePart(part), True) if base else None
    return Interrupted(kept, logs, failed, base)


class _Run:
    """The layer threads of one run over one pool (see :func:`run_layers_parallel`)."""

    def __init__(self, jobs, observer, run_layer, builders, pool):
        self.jobs, self.observer, self.run_layer = jobs, _Serialized(observer), run_layer
        self.builders, self.pool = builders, pool
        self.reports: list = [None] * len(jobs)
        self.errors: dict[int, BaseException] = {}
        self.pending = iter(range(len(jobs)))
        self.take = threading.Lock()
        self.stopping = threading.Event()

    def stop(self) -> None:
        self.stopping.set()
        while True:  # a second Ctrl-C must not leave the pool half stopped
            try:
                self.pool.stop()
                return
            except KeyboardInterrupt:
                continue

    def work(self) -> None:
        """A layer thread: the next layer not started, until none is left or the run stops."""
        while not self.stopping.is_set():
            with self.take:
                k = next(self.pending, None)
            if k is None:
                return
            try:
                self.reports[k] = self.run_layer(self.jobs[k], self.observer, self.builders,
                                                 lambda measurer, k=k: self.pool.lane(k, measurer))
            except BaseException as exc:  # handed to the main thread; the others stop
                self.errors[k] = exc
                self.stop()

    def __call__(self, width: int) -> bool:
        """Run the layers on ``width`` threads; whether a Ctrl-C stopped them."""
        threads = [threading.Thread(target=self.work, name=f"layer-{n}", daemon=True)
                   for n in range(width)]
        interrupted = False
        # A signal is noted, not raised: raised, it could land anywhere in this loop (not
        # only in the sleep) and leave it while the layer threads still store their runs.
        with signals_deferred() as signalled:
            for t in threads:
                t.start()
            while any(t.is_alive() for t in threads):
                if signalled.signal is not None:
                    signalled.signal, interrupted = None, True
                    self.stop()
                    continue
                try:
                    time.sleep(0.05)  # not Thread.join: a Ctrl-C inside join can break it (gh-90882)
                except KeyboardInterrupt:  # not deferred (e.g. a handler of the caller's)
                    interrupted = True
                    self.stop()
        return interrupted or signalled.signal is not None


def run_layers_parallel(jobs: Sequence["LayerJob"], observer: Observer,
                        run_layer: Callable[..., "LayerReport"], builders=None) -> list["LayerReport"]:
    """Run ``jobs`` (which share ``settings.executor``) at once (see the module doc);
    the reports in the jobs' order. ``run_layer(job, observer, builders, executor_for)``
    tunes one layer (:func:`search.session.run.run_layer`)."""
    from ..executors import make_executor
    from ..executors.shared import SharedExecutor

    options, first = jobs[0].settings.executor, jobs[0]
    probe = (builders or Builders()).measurer(first.measure, first.layer, first.device,
                                              first.algorithm)
    run = None
    try:
        with probe, SharedExecutor(make_executor(None, options)) as pool:
            pool.lane(0, probe)  # its stages say whether runs need GPU workers
            pool.start()  # here: Ray wants its init in the main thread
            run = _Run(jobs, observer, run_layer, builders, pool)
            interrupted = run(layers_at_once(options, pool.executor.capacity(), len(jobs)))
    except KeyboardInterrupt:  # e.g. while the workers close: what the layers stored is kept
        if run is None:
            raise
        interrupted = True
    failures = [e for _, e in sorted(run.errors.items()) if not isinstance(e, KeyboardInterrupt)]
    if failures:
        raise failures[0]
    if interrupted or run.errors:
        raise interrupted_run(jobs, run.reports, run.errors)
    return run.reports
