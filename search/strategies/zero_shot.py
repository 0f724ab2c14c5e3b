"""Zero-shot tuning as a strategy: measure the configurations a history model ranks best.

Lorien's zero-shot mode behind the ask/tell interface, so that a zero-shot run
gets everything a tuning run has (the log, resume, the history database, the
cache export): the history records that fall in the space train a model
(:func:`search.zero_shot.history_ranking`), which ranks the space once, or the
model's, the consensus's and each source's best are walked in turn, whichever
ranked the history's own devices better at K (:mod:`search.zero_shot_order`);
every ``ask`` returns the next configurations of that order not asked yet. Run it with a
budget of K to measure only the top K. Without usable history (no record is a
configuration of the space) the order is random, and :meth:`stats` says so.

Examples
--------
>>> import numpy as np
>>> from search.grid_space import GridSpace
>>> s = ZeroShotStrategy(GridSpace({"a": list(range(6))}), rng=np.random.default_rng(0))
>>> sorted(s.ask(6)), s.stats()["used"]
([0, 1, 2, 3, 4, 5], False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..option_checks import check_choice, check_count, check_records
from .base import Strategy, StrategyOptions, check_rng

__all__ = ["ZeroShotStrategy", "ZeroShotStrategyOptions"]


@dataclass(frozen=True)
class ZeroShotStrategyOptions(StrategyOptions):
    """The history to rank with (:class:`search.db.Measurement` records, fastest first),
    how many random candidates to rank in a very large space (``None``: all of them), the
    target's problem (which sources measured it), the order measured and the K it is
    chosen for (:mod:`search.zero_shot_order`; ``iobound tune --zero-shot K`` sets K).

    >>> ZeroShotStrategyOptions().order, ZeroShotStrategyOptions().k
    ('auto', 10)
    >>> ZeroShotStrategyOptions(history=[1])
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: history[0] must be a search.db.model.Measurement, got 1
    """

    history: tuple = ()
    candidates: int | None = None
    target_problem: Any = None
    order: str = "auto"
    k: int = 10

    def __post_init__(self) -> None:
        from ..db.model import Measurement
        from ..zero_shot import ORDERS
        super().__post_init__()
        object.__setattr__(self, "history", check_records("history", self.history, Measurement))
        if self.candidates is not None:
            check_count("candidates", self.candidates, low=1)
        check_choice("order", self.order, ORDERS)
        check_count("k", self.k, low=1)


class ZeroShotStrategy(Strategy):
    """The space in the order a model of the history ranks it (see module doc).

    >>> import numpy as np
    >>> from search import GridSpace, MeasureRecord
    >>> from search.db import Measurement, Workload
    >>> space, w = GridSpace({"a": list(range(8))}), Workload("k", [8], ("a",))
    >>> hist = [Measurement(w, d, "t", MeasureRecord.ok({"a": a}, time_ms=1.0 + abs(a - b)))
    ...         for d, b in (("A100", 5), ("V100", 2)) for a in range(8)]  # fastest: 5 and 2
    >>> options = ZeroShotStrategyOptions(history=hist)
    >>> s = ZeroShotStrategy(space, options, rng=np.random.default_rng(0))
    >>> s.ask(3), s.stats()
    ([5, 2, 3], {'used': True, 'history_records': 16, 'order': 'model'})
    """

    name = "zero_shot"
    Options = ZeroShotStrategyOptions

    def __init__(self, space, options=None, rng=None):
        from iobound.errors import InvalidInputError

        from ..zero_shot import ZeroShotOptions, rankable
        from ..zero_shot_order import zero_shot_ranking
        super().__init__(space, options, rng)
        check_rng(rng)
        self.records_used = 0
        self.reason = ""
        self.order = None
        o = self.options
        zo = ZeroShotOptions(k=min(o.k, o.candidates or o.k), candidates=o.candidates,
                             order=o.order)
        try:
            ranked, scores, self.records_used, self.order = zero_shot_ranking(
                space, o.history, zo, int(self.rng.integers(2**31 - 1)), o.target_problem)
            self._order = [int(i) for i in ranked]
            self._scores = np.asarray(scores, dtype=float)
        except InvalidInputError as exc:
            # only "no record can train the model" (search.zero_shot.rankable) is the
            # random fallback; any other error is a bug or bad input, and is raised
            if rankable(space, o.history):
                raise
            self.reason = str(exc)
            self._order = [int(i) for i in self.rng.permutation(len(space))]
            self._scores = None
        self._next = 0

    def ask(self, n: int) -> list[int]:
        out = self._order[self._next:self._next + max(n, 0)]
        self._next += len(out)
        return out

    def ndcg(self) -> float | None:
        """NDCG@K of the ranking, K the configurations asked so far (fewer than the budget
        when a resumed log's measurements the ranking never asks for count toward it), where the space records
        the truth (a replayed space; reporting only: the ranking never sees it)."""
        from ..zero_shot import ndcg_at_k, recorded_relevance
        rel = recorded_relevance(self.space)
        if rel is None or self._scores is None or self._next == 0:
            return None
        return ndcg_at_k(self._scores, rel[np.asarray(self._order)], self._next)

    def stats(self) -> dict:
        out = {"used": self.records_used > 0, "history_records": self.records_used}
        if self.order is not None:
            out["order"] = self.order
        if self.reason:
            out.update(fallback="random order", reason=self.reason)
        ndcg = self.ndcg()
        if ndcg is not None:
            out.update(ndcg_at_k=round(ndcg, 4), ndcg_k=self._next)
        return out
