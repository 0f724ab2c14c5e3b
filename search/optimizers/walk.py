"""Parallel random walks on a cost model: the paper's explorer (section 6.2).

``n_s`` walkers start from random configurations (a fraction of them from the
best measured configurations instead). At every step each active walker draws a
few random neighbours; all walkers' candidates are scored in ONE model call, and a
walker moves to its best candidate when that lowers its predicted cost. A walker
stops when its predicted cost is below the threshold (by default the prediction
for the best measured configuration: the model believes it found something at
least as good) or when it has not improved for ``patience`` steps; the search
ends when every walker has stopped or after ``max_steps``.

Everything scored along the way is remembered; :meth:`WalkOptimizer.search`
returns the ``n`` distinct configurations with the lowest predictions among those
scored that are not excluded (already measured); on equal predictions walkers'
end points come first, then a random order. :meth:`~.base.ModelOptimizer.propose`
fills a short batch with random unexcluded configurations.

Examples
--------
>>> import numpy as np
>>> from search.grid_space import GridSpace
>>> from search.cost_model import XGBCostModel
>>> space = GridSpace({"a": list(range(12)), "b": list(range(12))})
>>> X = space.features(range(len(space)))
>>> model = XGBCostModel(seed=0).fit(X, (X[:, 0] - 3) ** 2 + (X[:, 1] - 8) ** 2 + 1.0)
>>> got = WalkOptimizer().propose(model, space, 4, exclude=set(), rng=np.random.default_rng(0))
>>> space.get(got[0])
{'a': 3, 'b': 8}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from iobound import limits

from ..cost_model import CostModel, check_model
from ..option_checks import check_flag, check_number
from ..space import Space
from .base import ModelOptimizer, NeighbourMemo, PredictionMemo, score_memo

__all__ = ["WalkOptions", "WalkOptimizer"]


@dataclass(frozen=True)
class WalkOptions:
    """Options of :class:`WalkOptimizer`.

    Attributes
    ----------
    n_walkers : int
        Parallel walkers ``n_s`` (at least ``n`` are used when asked for ``n``).
    max_steps : int
        Upper bound on walk steps.
    patience : int
        Steps without improvement after which a walker stops.
    neighbours_per_step : int
        Random neighbours each walker scores per step.
    best_starts : float
        Fraction of walkers that start from the best measured configurations.
    threshold : float or None
        Predicted-cost threshold; ``None`` uses the prediction for the best
        measured configuration (or no threshold when nothing was measured).
    diverse : bool
        Pick the batch so that no two of its configurations are neighbours
        (best prediction first; the rule is dropped only when it leaves the
        batch short), so one mispredicted region cannot take the whole batch.

    ``max_steps`` (0 or more) and ``patience`` are at most
    :data:`iobound.limits.SEARCH_STEPS`, ``n_walkers`` and ``neighbours_per_step`` at most
    :data:`iobound.limits.SEARCH_WIDTH` (InvalidInputError naming the field): past them
    one ``propose`` ran for minutes to hours.

    >>> o = WalkOptions()
    >>> o.n_walkers, o.max_steps, o.patience, o.threshold, o.diverse
    (64, 60, 6, None, False)
    >>> WalkOptions(patience=0)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: patience=0 is below the minimum 1
    """

    n_walkers: int = 64
    max_steps: int = 60
    patience: int = 6
    neighbours_per_step: int = 4
    best_starts: float = 0.25
    threshold: float | None = None
    diverse: bool = False

    def __post_init__(self) -> None:
        for name, limit in (("n_walkers", limits.SEARCH_WIDTH), ("patience", limits.SEARCH_STEPS),
                            ("neighbours_per_step", limits.SEARCH_WIDTH)):
            limits.check_int(name, getattr(self, name), limit)
        steps = limits.SEARCH_STEPS  # 0 steps: the walkers' starts alone are scored
        limits.check_int("max_steps", self.max_steps, limits.Limit(0, steps.high, steps.reason))
        check_number("best_starts", self.best_starts, 0, 1)
        if self.threshold is not None:
            check_number("threshold", self.threshold)
        check_flag("diverse", self.diverse)


class WalkOptimizer(ModelOptimizer):
    """Parallel random walks over a :class:`Space` guided by a :class:`CostModel`.

    Examples
    --------
    >>> from search.grid_space import GridSpace
    >>> class Bowl:  # predicted cost: distance from (a, b) = (9, 2)
    ...     def predict(self, X): return np.abs(X[:, 0] - 9.0) + np.abs(X[:, 1] - 2.0)
    >>> space = GridSpace({"a": list(range(16)), "b": list(range(16))})
    >>> opt = WalkOptimizer(WalkOptions(n_walkers=8, max_steps=30))
    >>> got = opt.propose(Bowl(), space, 3, exclude=set(), rng=np.random.default_rng(0))
    >>> len(got), space.get(got[0]), 0 < opt.last_steps <= 30
    (3, {'a': 9, 'b': 2}, True)
    """

    Options = WalkOptions

    def __init__(self, options: WalkOptions | None = None):
        super().__init__(options)
        self.last_steps = 0  # steps taken by the last search() (for diagnostics)
        self.neighbours = NeighbourMemo()
        self.predictions = PredictionMemo()

    def search(self, model: CostModel, space: Space, n: int, exclude: set[int],
               rng: np.random.Generator, best: Sequence[int] = ()) -> list[int]:
        """Up to ``n`` unexcluded indices with the lowest predictions the walks scored
        (InvalidInputError naming ``model`` when it has no callable ``predict``)."""
        check_model(model)
        o = self.options
        n_walk = max(o.n_walkers, n)
        n_best = min(int(round(o.best_starts * n_walk)), len(best))
        starts = [int(i) for i in best[:n_best]]
        starts += space.sample(n_walk - n_best, rng)
        cur = np.array(starts, dtype=np.int64)
        scored: dict[int, float] = {}  # this search's: the pool it ranks
        known = self.predictions(model, space)
        cur_score = score_memo(model, space, cur, scored, known)
        threshold = o.threshold
        if threshold is None and len(best):
            threshold = float(score_memo(model, space, np.array([best[0]]), {}, known)[0])
        self.last_steps = self._walk(model, space, cur, cur_score, scored, threshold, known, rng)
        ends = {int(i) for i in cur}
        cand = [i for i in scored if i not in exclude]
        ties = rng.random(len(cand))  # equal predictions: random order, not index order
        pool = sorted((scored[i], 0 if i in ends else 1, t, i) for i, t in zip(cand, ties))
        ranked = [i for *_, i in pool]
        return self._diverse(space, ranked, n) if o.diverse else ranked[:n]

    def _walk(self, model: CostModel, space: Space, cur: np.ndarray, cur_score: np.ndarray,
              scored: dict[int, float], threshold: float | None, known: dict[int, float] | None,
              rng: np.random.Generator) -> int:
        """Move the walkers ``cur`` (in place) until all stop; returns the steps taken."""
        o = self.options
        active = np.ones(len(cur), dtype=bool)
        if threshold is not None:
            active &= cur_score >= threshold
        stall = np.zeros(len(cur), dtype=np.int64)
        step = 0
        while active.any() and step < o.max_steps:
            step += 1
            walkers, cands = [], []
            for w in np.flatnonzero(active):
                nb = self.neighbours(space, cur[w])
                if not nb:
                    active[w] = False
                    continue
                k = min(o.neighbours_per_step, len(nb))
                pick = rng.choice(len(nb), size=k, replace=False)
                walkers.extend([w] * k)
                cands.extend(nb[j] for j in pick)
            if not cands:
                break
            cands_a = np.array(cands, dtype=np.int64)
            walkers_a = np.array(walkers, dtype=np.int64)
            scores = score_memo(model, space, cands_a, scored, known)
            # per walker: the best candidate of this step
            order = np.lexsort((scores, walkers_a))
            first = np.ones(len(order), dtype=bool)
            first[1:] = walkers_a[order][1:] != walkers_a[order][:-1]
            for j in order[first]:
                w = walkers_a[j]
                if scores[j] < cur_score[w]:
                    cur[w], cur_score[w], stall[w] = cands_a[j], scores[j], 0
                else:
                    stall[w] += 1
            moved = np.unique(walkers_a)
            done = stall[moved] >= o.patience
            if threshold is not None:
                done |= cur_score[moved] < threshold
            active[moved[done]] = False
        return step

    @staticmethod
    def _diverse(space: Space, ranked: list[int], n: int) -> list[int]:
        """The first ``n`` of ``ranked`` skipping neighbours of those already taken."""
        out: list[int] = []
        blocked: set[int] = set()
        for i in ranked:
            if len(out) == n:
                break
            if i not in blocked:
                out.append(i)
                blocked.update(space.neighbours(i))
        if len(out) < n:
            taken = set(out)
            out += [i for i in ranked if i not in taken][: n - len(out)]
        return out
