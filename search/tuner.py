"""The tuning loop (paper section 6.3): ask -> measure -> tell, until the budget is spent.

:func:`tune` owns everything strategies should not: the budget (only unique
configurations count), de-duplication (an index asked again is answered from the
records, not measured), early stopping (``patience`` rounds without a better
configuration), the JSON-lines log (one flushed line per measurement) and resume.
The pieces: a :class:`~search.tune_ledger.Ledger` of what is seen, known (from a
resumed log), reusable (earlier runs' measurements), used and best; :func:`play_round`, one ask -> measure -> tell; and :func:`tune`, which
repeats rounds until a :class:`~search.tune_result.StopReason` applies.

Resume replays the run: the strategy is rebuilt with the same seed and asked
again from the start; every index found in the old log is answered from the log
instead of being measured (:mod:`search.resume`). Strategies are deterministic for
a seed and the records they are told, so a resumed run follows the interrupted
run's path exactly and then carries on: nothing is measured twice and nothing is
lost. Logged configurations the replay never asks for (a log from another seed or
strategy, or one with another budget: the explorer plans its last rounds for the
budget, see :meth:`~search.strategies.base.Strategy.set_horizon`) still count toward
the budget and can be the best.

A ``KeyboardInterrupt`` (Ctrl-C; SIGTERM under :func:`search.interrupts.signals_interrupt`)
stops the loop: the log is closed complete and the result holds every configuration
measured, with ``stop_reason`` ``interrupted``. The same holds when it lands after the
last measurement, while the run is wound up (the strategy's stats, the log closed).
Called within a :func:`search.interrupts.signals_deferred` block (a session, which
stores the result), the loop still stops on a signal (:func:`~search.interrupts.signals_raised`),
but one landing after it is noted by the caller's block: the result always reaches it.

Examples
--------
>>> from search.grid_space import GridSpace
>>> from search.measure.base import Measurer, MeasureRecord
>>> class Bowl(Measurer):
...     name = "bowl"
...     def measure(self, configs):
...         return [MeasureRecord.ok(c, time_ms=1.0 + (c["a"] - 5) ** 2) for c in configs]
>>> res = tune(GridSpace({"a": list(range(10))}), Bowl(), strategy="grid", budget=10, seed=0)
>>> res.best.config, res.best.record.time_ms, res.evaluations, res.stop_reason.value
({'a': 5}, 1.0, 10, 'budget')
"""

from __future__ import annotations

import numbers
import os
import signal
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from iobound.errors import InvalidInputError

from .interrupts import signals_deferred, signals_raised
from .measure.base import MeasureRecord, Measurer, MeasurerError
from .records import as_measured, has_log, log_exists_error
from .path_kind import same_file
from .log_writer import LogWriter, check_not_written, copy_entries, copy_log, hold_log
from .option_checks import check_type
from .resume import load_resume
from .space import Space
from .strategies import Strategy, make_strategy
from .tune_args import DEFAULT_BUDGET, DEFAULT_STRATEGY, RUN_KEYS, check_tune_arguments
from .tune_ledger import Ledger
from .tune_result import StopReason, Trial, TuneResult

__all__ = ["Trial", "TuneResult", "StopReason", "Ledger", "play_round", "tune", "MAX_IDLE_ROUNDS"]

#: rounds in a row in which the strategy proposes nothing new before the loop gives up
MAX_IDLE_ROUNDS = 3

Progress = Callable[[int, int, float], None]


@dataclass
class _Clock:
    """Seconds spent in the strategy (ask, tell) and in the measurer."""

    strategy: float = 0.0
    measure: float = 0.0


def _measure_fresh(fresh: list[int], space: Space, measurer: Measurer, ledger: Ledger, budget: int,
                   writer: LogWriter | None, progress: Progress | None) -> dict[int, MeasureRecord]:
    """Measure ``fresh``, logging and counting each record as soon as it arrives (one
    whose numbers cannot be a measurement as ``invalid``: :func:`as_measured`)."""
    best = ledger.best_cost  # the best so far, this round's records included as they come
    got: dict[int, MeasureRecord] = {}
    for pos, rec in measurer.measure_unordered([space.get(i) for i in fresh]):
        if (not isinstance(pos, numbers.Integral) or isinstance(pos, (bool, np.bool_))
                or not 0 <= pos < len(fresh) or fresh[pos] in got):  # numpy's ints are positions
            raise MeasurerError(f"measurer {measurer.name!r} returned a record for position "
                                f"{pos!r} of a batch of {len(fresh)} (out of range or twice)")
        if not isinstance(rec, MeasureRecord):
            raise MeasurerError(f"measurer {measurer.name!r} returned {type(rec).__name__} "
                                f"{rec!r:.60} for position {pos}, not a MeasureRecord")
        i = fresh[int(pos)]
        got[i] = rec = as_measured(rec)
        with signals_deferred() as deferred:  # logged and counted together, or neither
            if writer is not None:
                writer.append(i, rec)
            ledger.seen[i] = rec
        if deferred.signal is not None:
            raise KeyboardInterrupt(signal.Signals(deferred.signal).name)
        best = min(best, rec.cost)
        if progress is not None:
            progress(ledger.used(), budget, best)
    if len(got) < len(fresh):
        raise MeasurerError(f"measurer {measurer.name!r} returned {len(got)} "
                           f"records for {len(fresh)} configurations")
    return got


def play_round(space: Space, measurer: Measurer, strat: Strategy, ledger: Ledger, budget: int, *,
               clock: _Clock | None = None, writer: LogWriter | None = None,
               progress: Progress | None = None) -> bool | None:
    """One round: ask for a batch, answer what is seen, logged or reusable, measure the
    rest, tell.

    Returns ``None`` when the strategy asked for nothing new (an idle round: what it
    asked again is told from the ledger), else whether the round improved the best.

    >>> from search.kt_cache import KtCache
    >>> from search.measure.replay import ReplayMeasurer
    >>> from search.replay_space import ReplaySpace
    >>> from search.tune_ledger import Ledger
    >>> cache = KtCache({"x": [1, 2, 3]}, [{"x": 1, "time": 3.0}, {"x": 2, "time": 1.0},
    ...                                    {"x": 3, "time": 2.0}])
    >>> space, ledger = ReplaySpace(cache), Ledger()
    >>> strat = make_strategy("grid", space, {"batch_size": 2}, rng=np.random.default_rng(0))
    >>> [(play_round(space, ReplayMeasurer(cache), strat, ledger, 3), len(ledger.seen))
    ...  for _ in range(2)]  # two rounds of a batch of 2 for a budget of 3
    [(True, 2), (True, 3)]
    >>> ledger.best_cost
    1.0
    """
    clock = clock if clock is not None else _Clock()
    n = min(strat.batch_size, budget - len(ledger.seen))
    t0 = time.perf_counter()
    asked = list(dict.fromkeys(int(i) for i in strat.ask(n)))
    clock.strategy += time.perf_counter() - t0
    new = [i for i in asked if i not in ledger.seen]
    if not new:
        if asked:
            strat.tell(asked, [ledger.seen[i] for i in asked])
        return None
    reused, fresh = ledger.take(new, budget)
    taken = set(reused) | set(fresh)
    answered = [i for i in new if i in ledger.known or i in taken]
    best_before = ledger.best_cost
    for i in reused:  # another run's measurement: logged as this run's, counted, not measured
        if writer is not None:
            writer.append(i, ledger.reusable[i], reused=True)
        ledger.seen[i] = ledger.reusable[i]
    t0 = time.perf_counter()
    got = _measure_fresh(fresh, space, measurer, ledger, budget, writer, progress)
    clock.measure += time.perf_counter() - t0
    for i in answered:
        rec = got[i] if i in got else ledger.known[i] if i in ledger.known else ledger.reusable[i]
        ledger.add_trial(i, space.get(i), rec)
    told = [i for i in asked if i in ledger.seen]
    t0 = time.perf_counter()
    strat.tell(told, [ledger.seen[i] for i in told])
    clock.strategy += time.perf_counter() - t0
    return ledger.best_cost < best_before


def _build_strategy(strategy: str | Strategy, space: Space, seed: int | None, options: Any,
                    build: Callable[..., Strategy]) -> Strategy:
    """The strategy to run; an instance with ``seed`` or ``options`` is refused (unused)."""
    if not isinstance(strategy, Strategy):
        built = build(strategy, space, options, np.random.default_rng(0 if seed is None else seed))
        return check_type(f"build_strategy({strategy!r}, ...)", built, Strategy)
    unused = [f"{k}={v!r}" for k, v in (("seed", seed), ("options", options)) if v is not None]
    if unused:
        raise InvalidInputError(f"tune() got a {type(strategy).__name__} instance and {', '.join(unused)}, "
                         f"which it would not use (the instance has its own rng and options); "
                         f"pass the strategy's name to build it from them, or leave them out")
    return strategy


def _open_log(log, resume, head: Mapping[str, Any]) -> LogWriter | None:
    """The writer of this run's log (``resume`` by default when resuming). A new log given
    beside ``resume`` starts with the resumed records, so that it alone holds the run: an
    interrupted run is resumed from it, losing nothing."""
    if log is None and resume is not None:
        log = resume
    if log is not None and resume is None and has_log(log):  # a cut header is no log
        raise log_exists_error(log, "log file", "resume")
    if log is None:
        return None
    # a resumed log continued into a new one stays locked while the run lives: resumed
    # again meanwhile (or still written by its own run), its configurations would be
    # measured twice
    held = None if resume is None or same_file(log, resume) else hold_log(resume)
    try:
        # has_log(resume): the same file is no copy; a new log gets the resumed records first
        copy = resume is not None and not has_log(log) and copy_log(resume, log, head) is None
        writer = LogWriter(log, head)
    except BaseException:
        if held is not None:
            held.close()
        raise
    writer.hold(held)
    if copy:  # a device or a pipe (or no room beside the log): written into
        copy_entries(writer, resume)
    return writer


def _play_rounds(space: Space, measurer: Measurer, strat: Strategy, ledger: "Ledger", budget: int,
                 patience: int | None, clock: "_Clock", writer, progress, rounds: list) -> StopReason:
    """Play rounds until the budget, the space, the idle limit or ``patience`` stops them;
    ``rounds[0]`` counts the rounds that measured something."""
    idle = stale = 0
    while True:
        if ledger.used() >= budget:
            return StopReason.BUDGET
        if len(ledger.seen) >= len(space):
            return StopReason.EXHAUSTED
        improved = play_round(space, measurer, strat, ledger, budget, clock=clock,
                              writer=writer, progress=progress)
        if improved is None:
            idle += 1
            if idle >= MAX_IDLE_ROUNDS:
                return StopReason.EXHAUSTED
            continue
        idle, rounds[0] = 0, rounds[0] + 1
        stale = 0 if improved else stale + 1
        if patience is not None and stale >= patience:
            return StopReason.PATIENCE


def _play_until_stopped(space: Space, measurer: Measurer, strat: Strategy, ledger: Ledger,
                        budget: int, patience: int | None, clock: _Clock, writer: LogWriter | None,
                        progress, rounds: list, stopped: bool = False) -> tuple[StopReason, dict]:
    """:func:`_play_rounds`, the strategy's stats, then the ledger completed and the log
    closed: (stop reason, stats). An interrupt anywhere in this, the end-of-run work
    included, is ``StopReason.INTERRUPTED`` with every measurement kept (the configurations
    of a cut-short round made trials); its stats are then ``{}`` if they were cut short."""
    stop, stats, failed = StopReason.INTERRUPTED, {}, False
    try:
        with signals_raised():  # the loop may be stopped, also within a caller's deferred block
            if stopped:  # a signal came while the log was opened
                raise KeyboardInterrupt
            stop = _play_rounds(space, measurer, strat, ledger, budget, patience, clock, writer,
                                progress, rounds)
            stats = strat.stats()
    except KeyboardInterrupt:  # SIGINT, or SIGTERM under search.interrupts: keep what was measured
        stop = StopReason.INTERRUPTED
    except Exception:
        failed = True  # an error: a new log with no record goes (nothing to resume)
        raise
    finally:
        with signals_deferred() as deferred:  # a second signal cannot cut the ledger short
            if stop is StopReason.INTERRUPTED:
                ledger.add_untold(space)
            ledger.add_unreached(space)
            if writer is not None:
                writer.close(drop_unused=failed)
    return (StopReason.INTERRUPTED if deferred.signal is not None else stop), stats


def _ledger(space: Space, measurer: Measurer, resume, reusable) -> Ledger:
    """The run's ledger: the resumed log's records (those it took from the tuning
    database still counted as reused) and what may be reused."""
    if resume is None:
        return Ledger({}, reusable=reusable)
    check_not_written(resume)  # before anything is read (the log's writer holds it again)
    logged_reused: set[int] = set()
    known = load_resume(resume, space, measurer, logged_reused)
    return Ledger(known, reusable=reusable, known_reused=logged_reused)


def _prepare(space, measurer, strategy, budget, seed, log, resume, options, patience, progress,
             header, build_strategy, reusable):
    """:func:`tune`'s checked arguments and what it builds before anything is written:
    (budget, patience, seed, header, strategy, ledger, the space's description)."""
    budget, patience, seed, header, reusable = check_tune_arguments(
        space, measurer, budget, patience, seed, log, resume, progress, header, reusable,
        build_strategy)
    strat = _build_strategy(strategy, space, seed, options, build_strategy)
    # what the run will measure: a budget beyond the space ends when the space does
    strat.set_horizon(None if budget is None else min(budget, len(space)))
    if not isinstance(strategy, Strategy) and seed is None:
        seed = 0
    ledger = _ledger(space, measurer, resume, reusable)
    described = space.describe()  # now: after the loop it could be cut short (tens of ms)
    return budget, patience, seed, header, strat, ledger, described


def tune(space: Space, measurer: Measurer, strategy: str | Strategy = DEFAULT_STRATEGY,
         budget: int = DEFAULT_BUDGET, seed: int | None = None,
         log: str | os.PathLike | None = None,
         resume: str | os.PathLike | None = None, options: Mapping[str, Any] | Any = None,
         patience: int | None = None, progress: Progress | None = None,
         header: Mapping[str, Any] | None = None,
         build_strategy: Callable[..., Strategy] = make_strategy,
         reusable: Mapping[int, MeasureRecord] | None = None) -> TuneResult:
    """Search ``space`` with ``strategy``, measuring with ``measurer``.

    Parameters
    ----------
    space : Space
        The configurations to search.
    measurer : Measurer
        Turns configurations into records.
    strategy : str or Strategy
        A registered name, built from ``seed`` and ``options``; or an instance (its own
        rng and options: ``seed`` and ``options`` must then be left out, the result's
        ``seed`` is None, and a resume is exact only if it is built the same way again).
    budget : int
        Unique configurations to measure (resumed ones included; default 48, as
        ``iobound tune``'s), at most :data:`iobound.limits.BUDGET`.
    seed : int, optional
        Seeds the strategy's ``np.random.Generator`` (default 0); same seed, same run.
        An ``int`` from 0 to ``2**63 - 1`` (:data:`iobound.limits.SEED`: the log stores it).
    log, resume : path, optional
        The JSON-lines log to write (new, unless it is ``resume``), and a log of an earlier
        run of the same space and measurer whose records are used instead of measuring
        again (new records go to ``log``, default: to ``resume``; a new ``log`` gets the
        resumed records first, so it holds the whole run).
    options : dict or options dataclass, optional
        The strategy's options (unknown keys are rejected).
    patience : int, optional
        Stop after this many rounds without a better configuration.
    progress : callable, optional
        Called as ``progress(done, budget, best_cost)`` after each measurement.
    header : dict, optional
        Extra run description for the log header (layer, device...): text keys, JSON
        values, none of the keys ``tune`` writes itself (``strategy``, ``seed``,
        ``budget``, ``space``, ``measurer``, and the log's ``schema``, ``version``,
        ``kind``).
    build_strategy : callable, optional
        ``build_strategy(name, space, options, rng) -> Strategy`` for a named
        strategy (default :func:`search.strategies.make_strategy`); a seam for
        strategies built otherwise (e.g. warm-started from a tuning database).
    reusable : dict, optional
        Index (in ``space``) -> an earlier run's record of it (same space, device and
        toolchain): what the strategy asks of these is answered from it instead of
        measured, and counted and logged as this run's (:class:`~search.tune_ledger.Ledger`).

    An interrupt ends the run early with what was measured (see the module doc). An
    error ends it with the error; a new ``log`` it holds no record of is then removed
    (nothing to resume: the same call can be made again), any other log is kept.

    Examples
    --------
    A measurer returns a record per configuration (here a made-up time; the layer
    measurers are :func:`search.make_measurer`'s):

    >>> from search import GridSpace, Measurer, MeasureRecord
    >>> class Toy(Measurer):
    ...     name = "toy"
    ...     def measure(self, configs):
    ...         return [MeasureRecord.ok(c, time_ms=abs(c["x"] - 5) + c["y"]) for c in configs]
    >>> space = GridSpace({"x": list(range(10)), "y": [1, 2, 4]})
    >>> r = tune(space, Toy(), strategy="random", budget=12, seed=0)
    >>> r.evaluations, r.stop_reason.value, r.best.config, r.best.record.time_ms
    (12, 'budget', {'x': 6, 'y': 2}, 3.0)
    """
    with signals_raised():  # nothing is written yet: a signal may stop it all
        budget, patience, seed, header, strat, ledger, described = _prepare(
            space, measurer, strategy, budget, seed, log, resume, options, patience, progress,
            header, build_strategy, reusable)
    with signals_deferred() as opening:  # a new log gets every resumed record, or none of
        # them is lost: a signal meanwhile stops the run once the log is whole
        run = dict(zip(RUN_KEYS, (strat.name, seed, budget, described, measurer.describe())))
        writer = _open_log(log, resume, {**run, **header})
    clock = _Clock()
    rounds = [0]  # completed rounds, also when the loop is interrupted
    stop, stats = _play_until_stopped(space, measurer, strat, ledger, budget, patience, clock,
                                      writer, progress, rounds, opening.signal is not None)
    return TuneResult(best=ledger.best, trials=tuple(ledger.trials), strategy=strat.name,
                      measure=measurer.name, seed=seed, budget=budget, rounds=rounds[0],
                      stop_reason=stop, space=described, strategy_seconds=clock.strategy,
                      measure_seconds=clock.measure, strategy_stats=stats)
