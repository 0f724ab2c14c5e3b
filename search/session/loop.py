"""The tuning loop of one space, shared by layers and recorded spaces: history, strategy,
executor, the loop itself, and the outcomes stored at its end.

:func:`tune_space` reads the history when the space starts (a layer started later sees
what earlier ones stored), wraps the strategy with it, measures through the run's
executor when there is one, and winds down (a signal meanwhile is noted, not raised);
:func:`store_outcomes` then writes the history and the export for whatever was measured,
and says with :class:`~search.interrupts.Interrupted` or
:class:`~search.session.files.OutputWriteError` where the measurements are when the run
was interrupted or a write failed. Layers tuned at once read and write the history
database one at a time (:data:`HISTORY_LOCK`).

Examples
--------
A recorded space of 15 configurations tuned for 6, its measurements then stored:

>>> import os, tempfile
>>> from search.kt_cache import KtCache
>>> from search.kt_cache_write import write_cache
>>> from search.measure.replay import ReplayMeasurer
>>> from search.replay_space import ReplaySpace
>>> tmp = tempfile.mkdtemp()
>>> grid = [(x, y) for x in range(1, 6) for y in range(1, 4)]
>>> space = ReplaySpace(str(write_cache(os.path.join(tmp, "k.json"), KtCache(
...     tune_params={"x": [1, 2, 3, 4, 5], "y": [1, 2, 3]}, device_name="gpu", kernel_name="k",
...     entries=[{"x": x, "y": y, "time": 1.0 + abs(x - 3) + abs(y - 2)} for x, y in grid]))))
>>> measurer = ReplayMeasurer(space.cache)
>>> settings = TuneSettings(strategy="random", budget=6, seed=0,
...                         history=os.path.join(tmp, "tuning.db"))
>>> result, seconds, use = tune_space(space, measurer, settings, {}, NO_OBSERVER, DEFAULT_BUILDERS)
>>> result.evaluations, use.records, use.used  # an empty history: nothing to use yet
(6, 0, False)
>>> history, export = store_outcomes(settings, result, space, measurer)
>>> history.best_ever_ms == min(t.record.time_ms for t in result.trials), export
(True, None)
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import TYPE_CHECKING, Any

from ..interrupts import Interrupted, signals_deferred, signals_raised
from ..tune_result import StopReason
from .storage import OutputWriteError, kept_where, write_outcomes
from .history_use import history_options, reusable_records, telling_fallback
from .settings import Builders, Observer, TuneSettings

if TYPE_CHECKING:  # pragma: no cover
    from ..measure.base import Measurer
    from ..space import Space
    from ..tune_result import TuneResult

__all__ = ["HISTORY_LOCK", "NO_OBSERVER", "DEFAULT_BUILDERS", "observer_and_builders", "tune_space",
           "store_outcomes", "tune_and_store"]

NO_OBSERVER = Observer()
DEFAULT_BUILDERS = Builders()


def observer_and_builders(observer, builders) -> tuple[Observer, Builders]:
    """A session's ``observer`` and ``builders`` (None: the silent and the default ones);
    another kind of value is one InvalidInputError naming it, not an AttributeError when a
    hook is first called.

    >>> observer_and_builders(None, None) == (NO_OBSERVER, DEFAULT_BUILDERS)
    True
    """
    from ..option_checks import check_type
    return (NO_OBSERVER if observer is None else check_type("observer", observer, Observer),
            DEFAULT_BUILDERS if builders is None else check_type("builders", builders, Builders))
#: Layers tuned at once read and write the history database one at a time.
HISTORY_LOCK = threading.RLock()


def tune_space(space: "Space", measurer: "Measurer", settings: TuneSettings, header: dict,
               observer: Observer, builders: Builders, problem: Any = None, executor_for=None):
    """The tuning loop with the observer's progress; (result, seconds, history use).

    The seconds are the layer's wall time from reading its history (and fitting the
    prior) to the loop's end; the history use says how long the first part took.
    ``executor_for(measurer)``, when given, is the executor to measure through (a lane of
    a pool shared by several layers); else ``settings.executor`` makes one for this run.

    >>> from iobound.layer import ConvLayer
    >>> from search.session.settings import default_measurer, default_space
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> space = default_space(layer, "v100", "direct")
    >>> m = default_measurer("model", layer, "v100", "direct")
    >>> result, seconds, use = tune_space(space, m, TuneSettings(strategy="grid", budget=3), {},
    ...                                   NO_OBSERVER, DEFAULT_BUILDERS)
    >>> result.evaluations, result.best.record.estimate, use  # no --history: no use
    (3, True, None)
    """
    from ..tuner import tune
    t0 = time.perf_counter()
    with signals_raised(), HISTORY_LOCK:  # read now, when the layer starts: it sees what
        # earlier layers stored (nothing of this run is measured yet: a signal may stop it)
        options, history_use, prior = history_options(settings, space, problem)
        reusable = reusable_records(settings, space, measurer) if settings.reuse else None
    if history_use is not None:
        history_use = dataclasses.replace(history_use, seconds=time.perf_counter() - t0)
        if history_use.up_to is not None:  # what it read: a resume reads the same
            from .history_use import HISTORY_DB, HISTORY_MARK, history_db_name
            header = {**header, HISTORY_MARK: history_use.up_to,
                      HISTORY_DB: history_db_name(settings.history)}
    build, fell_back = builders.strategy, []
    if prior is not None:
        from ..transfer import with_history

        def with_prior(name, space_, options_, rng):
            return with_history(builders.strategy(name, space_, options_, rng), prior,
                                seed=settings.seed)
        build = with_prior
    build = telling_fallback(build, observer, settings, history_use, fell_back)
    try:
        if executor_for is not None or settings.executor is not None:
            from ..executors import ExecutorMeasurer, make_executor
            with signals_raised():  # starting workers (Ray's init) may be stopped
                executor = (executor_for(measurer) if executor_for is not None
                            else make_executor(measurer, settings.executor))
            measurer = ExecutorMeasurer(measurer, executor)
        result = tune(space, measurer, settings.strategy, settings.budget, settings.seed,
                      log=settings.log, resume=settings.resume, options=options,
                      patience=settings.patience, progress=observer.progress, header=header,
                      build_strategy=build, reusable=reusable)
    finally:
        stopped = _wind_down(measurer, observer)
    if stopped:  # the result is stored all the same (store_outcomes), then the run stops
        result = dataclasses.replace(result, stop_reason=StopReason.INTERRUPTED)
    if fell_back and history_use is not None:
        history_use = dataclasses.replace(history_use, used=False)
    return result, time.perf_counter() - t0, history_use


def tune_and_store(space: "Space", measurer: "Measurer", settings: TuneSettings, header: dict,
                   observer: Observer, builders: Builders, problem: Any = None,
                   executor_for=None, resume_as: str | None = None):
    """:func:`tune_space` then :func:`store_outcomes`, under one deferred block (the loop
    and what comes before it still stop on a signal: :func:`~search.interrupts.signals_raised`):
    a signal after the loop, or a second one, waits for the writes. (result, seconds,
    history use, history outcome, export outcome); raises
    :class:`~search.interrupts.Interrupted` after the writes when a signal came.

    >>> import os, tempfile
    >>> from iobound.layer import ConvLayer
    >>> from search.session.settings import default_measurer, default_space
    >>> pw = ConvLayer(n=1, c_in=8, h_in=6, w_in=6, c_out=8, k_h=1, k_w=1)
    >>> space, m = default_space(pw, "v100", "direct"), default_measurer("model", pw, "v100",
    ...                                                                  "direct")
    >>> db = os.path.join(tempfile.mkdtemp(), "t.db")
    >>> settings = TuneSettings(strategy="random", budget=3, history=db)
    >>> result, _, use, history, export = tune_and_store(space, m, settings, {}, NO_OBSERVER,
    ...                                                  DEFAULT_BUILDERS)
    >>> result.evaluations, use.records, history.best_ever_ms == result.best.record.time_ms, export
    (3, 0, True, None)
    """
    if settings.budget > len(space):  # said once, before the loop: the run is longer
        observer.notice(f"--budget {settings.budget} is more than the space's {len(space):,} "
                        f"configurations: every one is measured, then the search stops")
    with signals_deferred() as late:
        result, seconds, history_use = tune_space(space, measurer, settings, header, observer,
                                                  builders, problem, executor_for)
        if late.signal is not None:
            result = dataclasses.replace(result, stop_reason=StopReason.INTERRUPTED)
        history, export = store_outcomes(settings, result, space, measurer, resume_as)
    if late.signal is not None:  # it came as the writes ended: they are done
        raise Interrupted(len(result.trials), settings.log or settings.resume, None, resume_as)
    return result, seconds, history_use, history, export


class KeptRun:
    """A run's block (measurer, loop, stored outcomes, report) in which an interrupt once
    the run is stored counts as kept: it leaves the block as
    :class:`~search.interrupts.Interrupted` with the run's measurements and its log.
    Before :meth:`store` returned, ``kept_before()`` (default: none) says what the log
    already keeps; with nothing kept the ``KeyboardInterrupt`` leaves as it came.

    Examples
    --------
    >>> run = KeptRun(TuneSettings(log="run.jsonl"), kept_before=lambda: 3)
    >>> try:
    ...     with run:
    ...         raise KeyboardInterrupt
    ... except Interrupted as exc:
    ...     exc.measurements, exc.log
    (3, 'run.jsonl')
    """

    def __init__(self, settings: TuneSettings, resume_as: str | None = None, kept_before=None):
        self.settings, self.resume_as, self.kept_before = settings, resume_as, kept_before
        self.done = None  # (result, seconds, history use, history, export) once stored

    def store(self, *args, **kwargs):
        """:func:`tune_and_store`; a signal between its return and the caller's hold of
        what it returned waits for it (then comes as a ``KeyboardInterrupt``)."""
        with signals_deferred() as late:
            self.done = tune_and_store(*args, **kwargs)
        if late.signal is not None:
            raise KeyboardInterrupt
        return self.done

    def __enter__(self) -> "KeptRun":
        return self

    def __exit__(self, kind, exc, traceback) -> bool:
        if kind is None or not issubclass(kind, KeyboardInterrupt) or isinstance(exc, Interrupted):
            return False
        kept = (len(self.done[0].trials) if self.done is not None
                else self.kept_before() if self.kept_before is not None else 0)
        if not kept:
            return False
        raise Interrupted(kept, self.settings.log or self.settings.resume,
                          resume_as=self.resume_as) from None


def _wind_down(measurer: "Measurer", observer: Observer) -> bool:
    """Close the run's executor and tell the observer the loop ended; whether a signal
    (or a ``KeyboardInterrupt`` from a hook) came meanwhile: it is noted, not raised, so
    the run's measurements still reach the history and the export."""
    with signals_deferred() as deferred:
        try:
            if hasattr(measurer, "executor"):
                measurer.executor.close()
            observer.tuning_done()
        except KeyboardInterrupt:
            return True
    return deferred.signal is not None


def store_outcomes(settings: TuneSettings, result: "TuneResult", space: "Space",
                   measurer: "Measurer", resume_as: str | None = None):
    """(history outcome, export outcome), each ``None`` when not asked for, written for
    whatever was measured: a signal during the writes waits for them (a second Ctrl-C
    cannot cut them short), but not for another process's lock on the history database
    when the log holds the run: the write is then given up, and said so. Then
    :class:`~search.interrupts.Interrupted` if the run was interrupted, or
    :class:`~search.session.files.OutputWriteError` if a write failed; both say where the
    log is.

    >>> from types import SimpleNamespace
    >>> from search.tune_result import StopReason
    >>> store_outcomes(TuneSettings(), SimpleNamespace(stop_reason=StopReason.BUDGET, trials=[]),
    ...                None, None)  # neither --history nor --export-cache asked for
    (None, None)
    """
    log = settings.log or settings.resume
    with signals_deferred(give_up_waits=log is not None) as deferred, HISTORY_LOCK:
        history, export, failed = write_outcomes(settings, result, space, measurer)
    if result.stop_reason is StopReason.INTERRUPTED or deferred.signal is not None:
        raise Interrupted(len(result.trials), log, failed, resume_as)
    if failed:
        raise OutputWriteError(f"could not write {failed}; "
                               f"{kept_where(len(result.trials), log, resume_as)}")
    return history, export
