"""What a tuning run returns: its trials, the best one, and why it stopped.

Examples
--------
>>> from search.measure.base import MeasureRecord
>>> t = Trial(3, {"a": 3}, MeasureRecord.ok({"a": 3}, time_ms=2.0))
>>> res = TuneResult(best=t, trials=(t,), strategy="grid", measure="bowl", seed=0, budget=1,
...                  rounds=1, stop_reason=StopReason.BUDGET, space={}, strategy_seconds=0.0,
...                  measure_seconds=0.0)
>>> res.evaluations, res.to_dict()["stop_reason"], f"{res.stop_reason}"
(1, 'budget', 'budget')
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

from .measure.base import MeasureRecord
from .records import as_logged

__all__ = ["StopReason", "Trial", "TuneResult"]


class StopReason(enum.StrEnum):
    """Why the tuning loop stopped; serialised (JSON, logs, CLI) as its string value.

    >>> from search.kt_cache import KtCache
    >>> from search.session import TuneSettings, tune_replay
    >>> cache = KtCache({"x": [1, 2]}, [{"x": 1, "time": 2.0}, {"x": 2, "time": 1.0}])
    >>> tune_replay(cache, TuneSettings(strategy="grid", budget=8)).result.stop_reason
    <StopReason.EXHAUSTED: 'exhausted'>
    >>> StopReason("budget") is StopReason.BUDGET, str(StopReason.PATIENCE)
    (True, 'patience')
    """

    BUDGET = "budget"        # ``budget`` unique configurations measured (resumed ones included)
    EXHAUSTED = "exhausted"  # every configuration measured, or the strategy proposes nothing new
    PATIENCE = "patience"    # ``patience`` rounds in a row without a better configuration
    INTERRUPTED = "interrupted"  # SIGINT/SIGTERM (KeyboardInterrupt): what was measured is kept


@dataclass(frozen=True)
class Trial:
    """One unique configuration measured (or taken from a resumed log: ``resumed``, or
    from an earlier run in the tuning database: ``reused``).

    ``index`` is the configuration's index in the space; a result's trials are in the
    order they were measured:

    >>> from search.kt_cache import KtCache
    >>> from search.session import TuneSettings, tune_replay
    >>> cache = KtCache({"x": [1, 2, 3]}, [{"x": x, "time": float(x)} for x in (1, 2, 3)])
    >>> r = tune_replay(cache, TuneSettings(strategy="grid", budget=3)).result
    >>> [(t.index, t.config["x"], t.record.time_ms, t.resumed) for t in r.trials]
    [(0, 1, 1.0, False), (2, 3, 3.0, False), (1, 2, 2.0, False)]
    """

    index: int
    config: dict
    record: MeasureRecord
    resumed: bool = False
    reused: bool = False


@dataclass(frozen=True)
class TuneResult:
    """What a tuning run found and how it went.

    ``trials`` are the unique configurations in the order they were first
    measured (resumed ones where the replay reached them; unreached logged ones
    last); ``best`` the one with the lowest cost (``None`` if nothing ran ok).
    ``seed`` is ``None`` when the strategy was passed as an instance.

    >>> from search import GridSpace, Measurer, tune
    >>> class Toy(Measurer):
    ...     name = "toy"
    ...     def measure(self, configs):
    ...         return [MeasureRecord.ok(c, time_ms=1.0 + abs(c["x"] - 3)) for c in configs]
    >>> r = tune(GridSpace({"x": [1, 2, 3, 4, 5]}), Toy(), strategy="grid", budget=5)
    >>> r.evaluations, r.best.config, r.best_so_far(), r.stop_reason.value
    (5, {'x': 3}, [3.0, 2.0, 2.0, 2.0, 1.0], 'budget')
    """

    best: Trial | None
    trials: tuple[Trial, ...]
    strategy: str
    measure: str
    seed: int | None
    budget: int
    rounds: int
    stop_reason: StopReason
    space: dict
    strategy_seconds: float
    measure_seconds: float
    strategy_stats: dict = field(default_factory=dict)

    @property
    def evaluations(self) -> int:
        """Unique configurations evaluated: measured, resumed from a log, or answered from
        the tuning database (``reuse``)."""
        return len(self.trials)

    @property
    def resumed(self) -> int:
        """How many trials came from a resumed log."""
        return sum(t.resumed for t in self.trials)

    @property
    def reused(self) -> int:
        """How many trials an earlier run in the tuning database answered (not measured)."""
        return sum(t.reused for t in self.trials)

    def best_so_far(self) -> list[float]:
        """The best cost after each trial (``inf`` until something ran ok)."""
        out, best = [], math.inf
        for t in self.trials:
            best = min(best, t.record.cost)
            out.append(best)
        return out

    def status_counts(self) -> dict[str, int]:
        """How many trials ended with each status.

        >>> ts = (Trial(1, {"a": 1}, MeasureRecord.ok({"a": 1}, time_ms=1.0)),
        ...       Trial(2, {"a": 2}, MeasureRecord.failed({"a": 2}, "timeout")))
        >>> TuneResult(ts[0], ts, "grid", "toy", 0, 2, 1, StopReason.BUDGET, {}, 0.0, 0.0
        ...            ).status_counts()
        {'ok': 1, 'timeout': 1}
        """
        counts: dict[str, int] = {}
        for t in self.trials:
            counts[t.record.status.value] = counts.get(t.record.status.value, 0) + 1
        return counts

    def to_dict(self) -> dict:
        """JSON-able summary (the CLI's ``--json`` output).

        >>> import json
        >>> t = Trial(0, {"a": 0}, MeasureRecord.failed({"a": 0}, "timeout"))  # nothing ran ok
        >>> d = TuneResult(None, (t,), "grid", "toy", 0, 1, 1, StopReason.BUDGET, {}, 0.0, 0.0
        ...                ).to_dict()
        >>> d["best"], d["statuses"], json.loads(json.dumps(d)) == d
        (None, {'timeout': 1}, True)
        """
        best = None
        if self.best is not None:
            r = self.best.record
            # as JSON reads them back: a space's numpy values as Python numbers
            best = {"config": as_logged(self.best.config), "time_ms": r.time_ms,
                    "status": r.status.value, "estimate": r.estimate, "index": self.best.index,
                    "extra": as_logged(r.extra)}
        return {
            "best": best, "evaluations": self.evaluations, "strategy": self.strategy,
            "measure": self.measure, "seed": self.seed, "budget": self.budget,
            "rounds": self.rounds, "stop_reason": StopReason(self.stop_reason).value,
            "resumed": self.resumed, "reused": self.reused, "statuses": self.status_counts(),
            "space": self.space,
            "strategy_seconds": round(self.strategy_seconds, 4),
            "measure_seconds": round(self.measure_seconds, 4),
            "strategy_stats": self.strategy_stats,
        }
