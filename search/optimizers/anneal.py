"""AutoTVM's simulated-annealing model optimizer.

TVM's ``SimulatedAnnealingOptimizer``: ``n_chains`` parallel chains each step to a
random neighbour and accept a worse prediction with probability
``exp(-delta / T)``, ``T`` falling linearly from ``temp[0]`` to ``temp[1]`` over
``n_iter`` steps; the search stops early after ``early_stop`` steps in which the
set of the best ``n`` unexcluded predictions seen did not change. The chains'
end points persist between calls (AutoTVM's ``persistent``): the next search
starts where the last one ended; the first starts from random configurations, and
so does the first on a space of other configurations (another size or parameters: the
end points are indices of the space they were found in, on a smaller space an
IndexError, on a larger one a corner).

Examples
--------
>>> import numpy as np
>>> from search.grid_space import GridSpace
>>> class Bowl:  # predicted cost: distance from a = 17
...     def predict(self, X): return np.abs(X[:, 0] - 17.0)
>>> opt = AnnealOptimizer(AnnealOptions(n_chains=4, n_iter=200))
>>> line = GridSpace({"a": list(range(40))})
>>> sorted(opt.propose(Bowl(), line, 2, exclude={17}, rng=np.random.default_rng(0)))
[16, 18]
>>> len(opt.points)  # the chains' end points, where the next search starts
4
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from iobound import limits
from iobound.errors import InvalidInputError

from ..cost_model import CostModel, check_model, checked_predict
from ..option_checks import check_number
from ..space import Space
from .base import ModelOptimizer, NeighbourMemo

__all__ = ["AnnealOptions", "AnnealOptimizer"]


@dataclass(frozen=True)
class AnnealOptions:
    """AutoTVM's defaults: 128 chains, 500 steps, T 1 -> 0, stop after 50 idle steps.

    ``n_iter`` and ``early_stop`` are 1..:data:`iobound.limits.SEARCH_STEPS`, ``n_chains``
    1..:data:`iobound.limits.SEARCH_WIDTH` (InvalidInputError naming the field): past them
    one ``propose`` ran for hours.

    >>> o = AnnealOptions()
    >>> o.n_chains, o.n_iter, o.early_stop
    (128, 500, 50)
    >>> AnnealOptions(n_chains=0)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: n_chains=0 is below the minimum 1
    """

    n_chains: int = 128
    n_iter: int = 500
    temp: tuple[float, float] = (1.0, 0.0)
    early_stop: int = 50

    def __post_init__(self) -> None:
        limits.check_int("n_chains", self.n_chains, limits.SEARCH_WIDTH)
        for name in ("n_iter", "early_stop"):
            limits.check_int(name, getattr(self, name), limits.SEARCH_STEPS)
        temp = self.temp
        if isinstance(temp, (str, bytes)) or not hasattr(temp, "__len__") or len(temp) != 2:
            raise InvalidInputError(f"temp must be a pair (start, end) of finite numbers, "
                                    f"got {temp!r}")
        # a negative temperature would turn the acceptance rule round (worse moves taken)
        object.__setattr__(self, "temp", tuple(check_number(f"temp[{i}]", t, 0)
                                               for i, t in enumerate(temp)))


class AnnealOptimizer(ModelOptimizer):
    """Parallel simulated annealing on a cost model, chains kept between calls (see module doc).

    Examples
    --------
    >>> from search.grid_space import GridSpace
    >>> class Slope:  # predicted cost grows with a: a = 0 first
    ...     def predict(self, X): return X[:, 0]
    >>> line, rng = GridSpace({"a": list(range(50))}), np.random.default_rng(0)
    >>> opt = AnnealOptimizer(AnnealOptions(n_chains=4, n_iter=100))
    >>> opt.propose(Slope(), line, 1, exclude=set(), rng=rng), len(opt.points)  # 4 chain ends
    ([0], 4)
    >>> opt.propose(Slope(), line, 2, exclude={0}, rng=rng)  # the chains go on from there
    [1, 2]
    """

    Options = AnnealOptions

    def __init__(self, options: AnnealOptions | None = None):
        super().__init__(options)
        self.points: np.ndarray | None = None  # the chains' current configurations
        # the size and parameters of the space ``points`` index: a space of the same
        # configurations under the same indices (a history's PriorFeatureSpace of it,
        # :meth:`ModelBasedStrategy.learn_on`) keeps the chains
        self._space: tuple | None = None
        self.neighbours = NeighbourMemo()

    def search(self, model: CostModel, space: Space, n: int, exclude: set[int],
               rng: np.random.Generator, best: Sequence[int] = ()) -> list[int]:
        """The ``n`` lowest-prediction unexcluded indices the chains visited, best first
        (InvalidInputError naming ``model`` when it has no callable ``predict``)."""
        check_model(model)
        o = self.options
        shape = (len(space), tuple(space.params))
        if shape != self._space:  # chains of another space: start afresh (module doc)
            if self._space is not None:  # (points set before the first search are kept)
                self.points = None
            self._space = shape
        if self.points is None:
            self.points = np.array(space.sample(o.n_chains, rng), dtype=np.int64)
        points = self.points
        score = -checked_predict(model, space.features(points))  # AutoTVM maximises
        heap = [(-np.inf, -1 - k) for k in range(n)]  # min-heap of (score, index)
        in_heap: set[int] = set()

        def push(idx, sc) -> bool:
            """Keep the best; whether any entered (TVM's test of a change, not the minimum's:
            that stays while placeholders or ties fill the heap, and the chains stopped early)."""
            changed = False
            for i, s in zip(idx, sc):
                i = int(i)
                if i in exclude or i in in_heap or s <= heap[0][0]:
                    continue
                _, old = heapq.heapreplace(heap, (float(s), i))
                in_heap.discard(old)
                in_heap.add(i)
                changed = True
            return changed

        push(points, score)
        t0, t1 = o.temp
        t, cool = t0, (t0 - t1) / (o.n_iter + 1)
        last_change, k = 0, 0
        while k < o.n_iter and k - last_change < o.early_stop:
            new = points.copy()
            for j, p in enumerate(points):
                nb = self.neighbours(space, p)
                if nb:
                    new[j] = nb[int(rng.integers(len(nb)))]
            new_score = -checked_predict(model, space.features(new))
            ac = np.exp(np.minimum((new_score - score) / (t + 1e-5), 1.0))
            accept = rng.random(len(points)) < ac
            points[accept], score[accept] = new[accept], new_score[accept]
            if push(new, new_score):
                last_change = k
            k += 1
            t -= cool
        ranked = sorted((x for x in heap if x[1] >= 0), reverse=True)
        return [i for _, i in ranked]
