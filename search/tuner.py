"""The tuning loop (paper section 6.3): ask -> measure -> tell, until the budget is spent.

:func:`tune` owns everything strategies should not: the budget (only unique
configurations count), de-duplication (an index asked again is answered from the
records, not measured), early stopping (``patience`` rounds without a better
configuration), the JSON-lines log (one flushed line per measurement) and resume.

Resume replays the run: the strategy is rebuilt with the same seed and asked
again from the start; every index found in the old log is answered from the log
instead of being measured. Strategies are deterministic for a seed and the
records they are told, so a resumed run follows the interrupted run's path
exactly and then carries on: nothing is measured twice and nothing is lost.
Logged configurations the replay never asks for (a log from another seed or
strategy) still count toward the budget and can be the best. A log written for
another space (another layer, device, algorithm or recorded kernel) or another
measurer is refused, so its numbers are never taken for this run's.

Examples
--------
>>> from search.space import GridSpace
>>> from search.measure.base import Measurer, MeasureRecord
>>> class Bowl(Measurer):
...     name = "bowl"
...     def measure(self, configs):
...         return [MeasureRecord.ok(c, time_ms=1.0 + (c["a"] - 5) ** 2) for c in configs]
>>> res = tune(GridSpace({"a": list(range(10))}), Bowl(), strategy="grid", budget=10, seed=0)
>>> res.best.config, res.best.record.time_ms, res.evaluations
({'a': 5}, 1.0, 10)
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from iobound.errors import InvalidInputError

from .measure.base import MeasureRecord, Measurer, MeasurerError
from .records import LogWriter, _jsonable, read_log
from .space import Space
from .strategies import Strategy, make_strategy

__all__ = ["Trial", "TuneResult", "tune"]

log = logging.getLogger(__name__)

#: rounds in a row in which the strategy proposes nothing new before the loop gives up
MAX_IDLE_ROUNDS = 3


@dataclass(frozen=True)
class Trial:
    """One unique configuration measured (or taken from a resumed log)."""

    index: int
    config: dict
    record: MeasureRecord
    resumed: bool = False


@dataclass(frozen=True)
class TuneResult:
    """What a tuning run found and how it went.

    ``trials`` are the unique configurations in the order they were first
    measured (resumed ones where the replay reached them; unreached logged ones
    last); ``best`` the one with the lowest cost (``None`` if nothing ran ok).
    """

    best: Trial | None
    trials: tuple[Trial, ...]
    strategy: str
    measure: str
    seed: int
    budget: int
    rounds: int
    stop_reason: str
    space: dict
    strategy_seconds: float
    measure_seconds: float
    strategy_stats: dict = field(default_factory=dict)

    @property
    def evaluations(self) -> int:
        """Unique configurations measured (including those resumed from a log)."""
        return len(self.trials)

    @property
    def resumed(self) -> int:
        """How many trials came from a resumed log."""
        return sum(t.resumed for t in self.trials)

    def best_so_far(self) -> list[float]:
        """The best cost after each trial (``inf`` until something ran ok)."""
        out, best = [], math.inf
        for t in self.trials:
            best = min(best, t.record.cost)
            out.append(best)
        return out

    def status_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for t in self.trials:
            counts[t.record.status.value] = counts.get(t.record.status.value, 0) + 1
        return counts

    def to_dict(self) -> dict:
        """JSON-able summary (the CLI's ``--json`` output)."""
        best = None
        if self.best is not None:
            r = self.best.record
            best = {"config": self.best.config, "time_ms": r.time_ms, "status": r.status.value,
                    "estimate": r.estimate, "index": self.best.index, "extra": r.extra}
        return {
            "best": best, "evaluations": self.evaluations, "strategy": self.strategy,
            "measure": self.measure, "seed": self.seed, "budget": self.budget,
            "rounds": self.rounds, "stop_reason": self.stop_reason, "resumed": self.resumed,
            "statuses": self.status_counts(), "space": self.space,
            "strategy_seconds": round(self.strategy_seconds, 4),
            "measure_seconds": round(self.measure_seconds, 4),
            "strategy_stats": self.strategy_stats,
        }


#: What must agree between a resumed log's header and this run: the space's identity
#: (kind, parameters, size, and the layer/device/algorithm or the recorded kernel) and
#: the measurer. Seed, strategy and budget may differ (their records still count).
_SPACE_IDENTITY = ("kind", "layer", "device", "algorithm", "kernel", "pruned", "params", "size")


def _plain(obj: Any) -> Any:
    """``obj`` as it reads back from a JSON log (tuples -> lists, numpy -> Python)."""
    return json.loads(json.dumps(obj, sort_keys=True, default=_jsonable))


def _check_resume_header(path, header: Mapping[str, Any], space: Space, measurer: Measurer) -> None:
    """``ValueError`` when the log at ``path`` was written for another space or measurer.

    Without this check a log of another layer whose space happens to have the same
    configurations (or of the ``model`` measurer when now measuring on a GPU) would
    be taken as measurements of this run.
    """
    logged_space = header.get("space")
    if isinstance(logged_space, Mapping):
        now = _plain(space.describe())
        for key in _SPACE_IDENTITY:
            there, here = logged_space.get(key), now.get(key)
            if key == "layer" and isinstance(there, Mapping) and isinstance(here, Mapping):
                there, here = ({k: v for k, v in d.items() if k != "name"} for d in (there, here))
            if key in logged_space and key in now and there != here:
                raise InvalidInputError(
                    f"resume log {str(path)!r} was written for another space ({key} "
                    f"{json.dumps(logged_space[key])[:80]} there, {json.dumps(now[key])[:80]} "
                    f"here); start a new log for this run")
    logged_meas = header.get("measurer")
    if isinstance(logged_meas, Mapping) and logged_meas.get("name") not in (None, measurer.name):
        raise InvalidInputError(f"resume log {str(path)!r} was measured with {logged_meas.get('name')!r}, "
                         f"not {measurer.name!r}; start a new log for this run")


def _load_resume(path, space: Space, measurer: Measurer) -> dict[int, MeasureRecord]:
    known: dict[int, MeasureRecord] = {}
    dropped = 0
    logged = read_log(path)
    _check_resume_header(path, logged.header, space, measurer)
    for e in logged.entries:
        i = space.index(e.record.config)
        if i is None:
            dropped += 1
            continue
        known.setdefault(i, e.record)
    if dropped:
        log.warning("resume: %d logged configurations are not in this space; ignored", dropped)
    return known


def tune(space: Space, measurer: Measurer, strategy: str | Strategy = "explorer", budget: int = 50,
         seed: int = 0, log: str | os.PathLike | None = None, resume: str | os.PathLike | None = None,
         options: Mapping[str, Any] | Any = None, patience: int | None = None,
         progress: Callable[[int, int, float], None] | None = None,
         header: Mapping[str, Any] | None = None) -> TuneResult:
    """Search ``space`` with ``strategy``, measuring with ``measurer``.

    Parameters
    ----------
    space : Space
        The configurations to search.
    measurer : Measurer
        Turns configurations into records.
    strategy : str or Strategy
        A registered name (``explorer``, ``random``, ``grid``, ``ga``, ``sa``) or an
        instance (then ``seed`` and ``options`` are not used to build it).
    budget : int
        Unique configurations to measure (resumed ones included).
    seed : int
        Seeds the strategy's ``np.random.Generator``; same seed, same run.
    log : path, optional
        JSON-lines log to write (must not exist yet unless it is ``resume``).
    resume : path, optional
        A log of an earlier run of the same space and measurer (``ValueError``
        otherwise; seed, strategy and budget may differ); its records are used
        instead of measuring again and new records are appended to ``log``
        (default: to this file).
    options : dict or options dataclass, optional
        The strategy's options (unknown keys are rejected).
    patience : int, optional
        Stop after this many rounds without a better configuration.
    progress : callable, optional
        Called as ``progress(done, budget, best_cost)`` after each measurement.
    header : dict, optional
        Extra run description for the log header (layer, device...).
    """
    if budget < 1:
        raise InvalidInputError(f"budget must be >= 1, got {budget}")
    if patience is not None and patience < 1:
        raise InvalidInputError(f"patience must be >= 1, got {patience}")
    if isinstance(strategy, Strategy):
        strat = strategy
    else:
        strat = make_strategy(strategy, space, options, np.random.default_rng(seed))
    known = _load_resume(resume, space, measurer) if resume is not None else {}
    if log is None and resume is not None:
        log = resume
    if log is not None and resume is None and os.path.exists(log) and os.path.getsize(log) > 0:
        raise InvalidInputError(f"log file {str(log)!r} exists; pass it as resume to continue that run")
    head = {"strategy": strat.name, "seed": seed, "budget": budget, "space": space.describe(),
            "measurer": measurer.describe(), **(header or {})}
    writer = LogWriter(log, head) if log is not None else None

    seen: dict[int, MeasureRecord] = {}
    trials: list[Trial] = []
    best: Trial | None = None
    t_strategy = t_measure = 0.0
    rounds = idle = stale = 0
    stop = "budget"

    def used() -> int:
        return len(seen) + sum(1 for i in known if i not in seen)

    try:
        while True:
            if used() >= budget:
                stop = "budget"
                break
            if len(seen) >= len(space):
                stop = "exhausted"
                break
            n = min(strat.batch_size, budget - len(seen))
            t0 = time.perf_counter()
            asked = list(dict.fromkeys(int(i) for i in strat.ask(n)))
            t_strategy += time.perf_counter() - t0
            new = [i for i in asked if i not in seen]
            if not new:
                idle += 1
                if asked:
                    strat.tell(asked, [seen[i] for i in asked])
                if idle >= MAX_IDLE_ROUNDS:
                    stop = "exhausted"
                    break
                continue
            idle = 0
            room = budget - used()
            fresh = [i for i in new if i not in known][:max(room, 0)]
            fresh_set = set(fresh)
            answered = [i for i in new if i in known or i in fresh_set]
            best_before = best.record.cost if best else math.inf
            got: dict[int, MeasureRecord] = {i: known[i] for i in answered if i in known}
            t0 = time.perf_counter()
            for i, rec in zip(fresh, measurer.measure_iter([space.get(i) for i in fresh])):
                got[i] = rec
                if writer is not None:
                    writer.append(i, rec)
                seen[i] = rec  # counted as soon as it is logged
                if progress is not None:
                    progress(used(), budget, min(best_before, rec.cost))
            t_measure += time.perf_counter() - t0
            missing = [i for i in fresh if i not in got]
            if missing:
                raise MeasurerError(f"measurer {measurer.name!r} returned {len(fresh) - len(missing)} "
                                   f"records for {len(fresh)} configurations")
            for i in answered:
                seen[i] = got[i]
                t = Trial(i, space.get(i), got[i], resumed=i in known)
                trials.append(t)
                if best is None or t.record.cost < best.record.cost:
                    best = t if t.record.cost < math.inf else best
            told = [i for i in asked if i in seen]
            t0 = time.perf_counter()
            strat.tell(told, [seen[i] for i in told])
            t_strategy += time.perf_counter() - t0
            rounds += 1
            improved = best is not None and best.record.cost < best_before
            stale = 0 if improved else stale + 1
            if patience is not None and stale >= patience:
                stop = "patience"
                break
    finally:
        if writer is not None:
            writer.close()
    for i, rec in known.items():  # logged but never reached by the replay
        if i not in seen:
            t = Trial(i, space.get(i), rec, resumed=True)
            trials.append(t)
            if rec.cost < (best.record.cost if best else math.inf):
                best = t
    return TuneResult(best=best, trials=tuple(trials), strategy=strat.name,
                      measure=measurer.name, seed=seed, budget=budget, rounds=rounds,
                      stop_reason=stop, space=space.describe(), strategy_seconds=t_strategy,
                      measure_seconds=t_measure, strategy_stats=strat.stats())
