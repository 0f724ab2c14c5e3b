"""AutoTVM's XGBoost tuner as a baseline: simulated annealing over the cost model.

The recipe of TVM's ``XGBTuner`` + ``SimulatedAnnealingOptimizer``: configurations
are measured from a *plan* of ``plan_size`` candidates; every time another
``plan_size`` measurements have arrived the model is retrained and
``n_chains`` (128) parallel annealing chains, each stepping to a random neighbour
and accepting a worse prediction with probability ``exp(-delta / T)`` (``T`` falls
linearly from ``temp[0]`` to ``temp[1]``), collect the ``plan_size`` best
unmeasured predictions as the new plan. Chains persist between plans. Batches are
epsilon-greedy: the last ``epsilon`` share of each plan is replaced by random
configurations. Before the first model, configurations are random.

Examples
--------
>>> import numpy as np
>>> from search.space import GridSpace
>>> s = SAStrategy(GridSpace({"a": list(range(40))}), rng=np.random.default_rng(0))
>>> len(set(s.ask(8)))
8
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field

import numpy as np

from ..cost_model import XGBOptions
from ..space import sample_excluding
from .base import Strategy, StrategyOptions
from .model_based import train_model

__all__ = ["SAStrategy", "SAOptions", "anneal"]


@dataclass(frozen=True)
class SAOptions(StrategyOptions):
    """AutoTVM defaults: plan 64, 128 chains, 500 steps, T 1 -> 0, stop after 50 idle steps."""

    plan_size: int = 64
    n_chains: int = 128
    n_iter: int = 500
    temp: tuple[float, float] = (1.0, 0.0)
    early_stop: int = 50
    epsilon: float = 0.05
    model: XGBOptions = field(default_factory=XGBOptions)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.plan_size < 1 or self.n_chains < 1 or self.n_iter < 1:
            raise ValueError("plan_size, n_chains and n_iter must be >= 1")


def anneal(model, space, num: int, exclude: set[int], rng: np.random.Generator,
           points: np.ndarray, options: SAOptions) -> tuple[list[int], np.ndarray]:
    """The ``num`` lowest-prediction unexcluded indices found by parallel annealing.

    Returns the indices (best first) and the chains' final points (to persist).
    """
    score = -model.predict(space.features(points))  # AutoTVM maximises
    heap = [(-np.inf, -1 - k) for k in range(num)]  # min-heap of (score, index)
    in_heap = set()

    def push(idx, sc):
        for i, s in zip(idx, sc):
            i = int(i)
            if i in exclude or i in in_heap or s <= heap[0][0]:
                continue
            _, old = heapq.heapreplace(heap, (float(s), i))
            in_heap.discard(old)
            in_heap.add(i)

    push(points, score)
    t0, t1 = options.temp
    t, cool = t0, (t0 - t1) / (options.n_iter + 1)
    last_change, k = 0, 0
    while k < options.n_iter and k - last_change < options.early_stop:
        new = points.copy()
        for j, p in enumerate(points):
            nb = space.neighbours(int(p))
            if nb:
                new[j] = nb[int(rng.integers(len(nb)))]
        new_score = -model.predict(space.features(new))
        ac = np.exp(np.minimum((new_score - score) / (t + 1e-5), 1.0))
        accept = rng.random(len(points)) < ac
        points[accept], score[accept] = new[accept], new_score[accept]
        before = heap[0][0]
        push(new, new_score)
        if heap[0][0] != before:
            last_change = k
        k += 1
        t -= cool
    best = sorted((x for x in heap if x[1] >= 0), reverse=True)
    return [i for _, i in best], points


class SAStrategy(Strategy):
    """AutoTVM-style XGBoost + simulated annealing (see module doc)."""

    name = "sa"
    Options = SAOptions

    def __init__(self, space, options=None, rng=None):
        super().__init__(space, options, rng)
        self._asked: set[int] = set()
        self._plan: list[int] = []
        self._trained_at = 0
        self._points = None
        self._seed = int(rng.integers(2**31 - 1))
        self.fits = 0
        self.model_seconds = 0.0

    def _retrain(self) -> None:
        o = self.options
        t0 = time.perf_counter()
        model = train_model(self.space, self.seen, o.model, self._seed + self.fits)
        if model is not None:
            self.fits += 1
            if self._points is None:
                self._points = np.array(self.space.sample(o.n_chains, self.rng), dtype=np.int64)
            plan, self._points = anneal(model, self.space, o.plan_size, self._asked,
                                        self.rng, self._points, o)
            # epsilon-greedy: the plan's last epsilon share is left to random picks
            self._plan = plan[: int(round(len(plan) * (1 - o.epsilon)))]
        self.model_seconds += time.perf_counter() - t0

    def ask(self, n: int) -> list[int]:
        o = self.options
        n = min(n, len(self.space) - len(self._asked))
        if len(self.seen) >= o.plan_size * (self._trained_at + 1):
            self._trained_at = len(self.seen) // o.plan_size
            self._retrain()
        out: list[int] = []
        while len(out) < n and self._plan:
            i = self._plan.pop(0)
            if i not in self._asked:
                self._asked.add(i)
                out.append(i)
        for i in sample_excluding(self.space, n - len(out), self._asked, self.rng):
            self._asked.add(i)
            out.append(i)
        return out

    def stats(self) -> dict:
        return {"fits": self.fits, "model_seconds": round(self.model_seconds, 4)}
