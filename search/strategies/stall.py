"""Keep exploring when rounds stop improving: the stall counter and its candidate sources.

A model-based strategy whose rounds stop finding better configurations is usually
stuck at a local optimum of the space (in the recorded convolution spaces, one whose
better configurations differ in two parameters at once) while its model keeps
ranking the same region first. :class:`StallOptions` gives the strategy an
*exploration share* of each batch that grows with the rounds without improvement
(``rate`` per round after ``grace`` rounds, at most ``cap``) and falls back to 0 as
soon as a round improves. The share is filled from a candidate source:

- ``"sweep"`` (default): the unmeasured Hamming-1 neighbours of the best
  ``n_elite`` measured configurations, the best configuration's first (the model
  only orders the neighbours of one configuration): a local search that does not
  depend on the model's ranking, which is what fails in a stall;
- ``"elite"``: mutations (Hamming-1 and some Hamming-2 neighbours) of the best
  ``n_elite`` measured configurations and uniform crossovers between them, the
  genetic algorithm's moves, which cross two-parameter gaps that a walk of single
  steps on the model does not;
- ``"far"``: a random sample of the space kept to the configurations at Hamming
  distance at least ``min_dist`` from every measured one (regions no measurement
  has touched).

``"elite"`` and ``"far"`` candidates are ranked by the model. None of the three
beat the explorer without them over 30 seeds on the recorded spaces
(``benchmarks/results/explorer_experiments.md``), so the explorer's default is
``stall=None``.

Examples
--------
>>> import numpy as np
>>> from search.grid_space import GridSpace
>>> space = GridSpace({"a": list(range(6)), "b": list(range(6))})
>>> near = elite_candidates(space, [0], np.random.default_rng(0))  # around (0, 0)
>>> max(sum(v != 0 for v in space.get(i).values()) for i in near)  # Hamming distance
2
>>> far_end = space.index({"a": 5, "b": 5})
>>> crossed = elite_candidates(space, [0, far_end], np.random.default_rng(0))
>>> space.index({"a": 0, "b": 5}) in crossed and space.index({"a": 5, "b": 0}) in crossed
True
>>> t = StallTracker()
>>> [t.update(c) for c in (5.0, 6.0, 7.0, 4.0)]
[0, 1, 2, 0]
>>> StallOptions(rate=0.25, cap=0.5, grace=1).share(3)
0.5
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Collection, Sequence

import numpy as np

from iobound.errors import InvalidInputError

from ..cost_model import CostModel, checked_predict
from ..option_checks import check_count, check_number
from ..space import Space

__all__ = ["StallOptions", "StallTracker", "SOURCES", "elite_candidates", "far_candidates",
           "best_predicted", "sweep_candidates", "spread_elites", "stall_candidates"]

SOURCES = ("sweep", "elite", "far")


@dataclass(frozen=True)
class StallOptions:
    """How the exploration share grows with rounds without improvement (see module doc).

    Attributes
    ----------
    rate : float
        Share added per round without improvement, from round ``grace`` on.
    cap : float
        Largest share.
    grace : int
        Rounds without improvement before any share is given.
    source : str
        Where the explored configurations come from: one of :data:`SOURCES`.
    n_elite : int
        Best measured configurations mutated and crossed (``"elite"``).
    n_pool : int
        Random configurations drawn per round (``"far"``).
    min_dist : int
        Hamming distance from every measured configuration (``"far"``).

    >>> StallOptions(source="far").min_dist
    2
    >>> StallOptions(source="nearby")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: source must be one of sweep, elite, far; got 'nearby'
    """

    rate: float = 0.25
    cap: float = 0.5
    grace: int = 1
    source: str = "sweep"
    n_elite: int = 8
    n_pool: int = 512
    min_dist: int = 2

    def __post_init__(self) -> None:
        check_number("rate", self.rate, 0)
        check_number("cap", self.cap, 0, 1)
        if self.source not in SOURCES:
            raise InvalidInputError(f"source must be one of {', '.join(SOURCES)}; got {self.source!r}")
        for name in ("grace", "n_elite", "n_pool", "min_dist"):
            check_count(name, getattr(self, name), low=1)

    def share(self, stalled_rounds: int) -> float:
        """The exploration share after ``stalled_rounds`` rounds without improvement."""
        return min(self.cap, self.rate * max(0, stalled_rounds - self.grace + 1))


class StallTracker:
    """Counts the rounds since the best cost last improved (a round with no finite
    cost counts as one without improvement).

    >>> t = StallTracker()
    >>> t.update(math.inf), t.update(3.0), t.update(3.0), t.best  # a failed round, a best, a tie
    (1, 0, 1, 3.0)
    """

    def __init__(self) -> None:
        self.best = math.inf
        self.rounds = 0

    def update(self, round_best: float) -> int:
        """Record one round's best cost; returns the rounds without improvement."""
        if round_best < self.best:
            self.best, self.rounds = round_best, 0
        else:
            self.rounds += 1
        return self.rounds


def elite_candidates(space: Space, elite: Sequence[int], rng: np.random.Generator,
                     n_cross: int = 64, second_hops: int = 4) -> list[int]:
    """Mutations and crossovers of the ``elite`` configurations (indices into ``space``).

    Every Hamming-1 neighbour of each elite configuration, ``second_hops`` random
    neighbours of each of those, and up to ``n_cross`` uniform crossovers of two
    elite configurations that are members of the space. May repeat indices and
    include measured ones: :func:`best_predicted` filters.

    >>> from search.grid_space import GridSpace
    >>> line = GridSpace({"a": list(range(5))})
    >>> sorted(set(elite_candidates(line, [2], np.random.default_rng(0))))  # 2 too, by a 2nd hop
    [0, 1, 2, 3, 4]
    """
    out: list[int] = []
    for e in elite:
        for nb in space.neighbours(e):
            out.append(nb)
            nb2 = space.neighbours(nb)
            if nb2:
                pick = rng.choice(len(nb2), size=min(second_hops, len(nb2)), replace=False)
                out.extend(nb2[j] for j in pick)
    if len(elite) >= 2:
        params = space.params
        configs = [space.get(e) for e in elite]
        for _ in range(n_cross):
            a, b = rng.choice(len(elite), size=2, replace=False)
            take = rng.random(len(params)) < 0.5
            child = {p: configs[a][p] if t else configs[b][p] for p, t in zip(params, take)}
            j = space.index(child)
            if j is not None:
                out.append(j)
    return out


def far_candidates(space: Space, measured: Sequence[int], rng: np.random.Generator,
                   n_pool: int, min_dist: int) -> list[int]:
    """Random configurations at Hamming distance >= ``min_dist`` from every measured one
    (all ``n_pool`` drawn when none is that far).

    >>> from search.grid_space import GridSpace
    >>> space = GridSpace({"a": list(range(6)), "b": list(range(6))})
    >>> got = far_candidates(space, [0], np.random.default_rng(0), n_pool=8, min_dist=2)
    >>> len(got) > 0, all(v != 0 for i in got for v in space.get(i).values())  # (0, 0) measured
    (True, True)
    """
    pool = space.sample(n_pool, rng)
    if not measured or not pool:
        return pool
    a, b = space.knobs(pool), space.knobs(list(measured))
    dist = np.empty(len(pool), dtype=np.int64)
    for s in range(0, len(pool), 256):  # bounded memory: 256 x len(measured) x params
        dist[s:s + 256] = (a[s:s + 256, None, :] != b[None, :, :]).sum(axis=2).min(axis=1)
    far = [i for i, d in zip(pool, dist) if d >= min_dist]
    return far or pool


def sweep_candidates(model: CostModel, space: Space, elite: Sequence[int], k: int,
                     exclude: Collection[int]) -> list[int]:
    """``k`` unmeasured Hamming-1 neighbours of the ``elite`` configurations, the best
    elite's first (the model orders each elite's neighbours): a local search that
    completes the best configurations' neighbourhoods whatever the model thinks of them.

    Examples
    --------
    >>> from search.grid_space import GridSpace
    >>> class ByA:
    ...     def predict(self, X): return X[:, 0]
    >>> line = GridSpace({"a": list(range(10))})
    >>> sweep_candidates(ByA(), line, [5, 0], 3, exclude={5, 0, 4})
    [6, 1]
    """
    out: list[int] = []
    taken = set(exclude)
    for e in elite:
        if len(out) >= k:
            break
        got = best_predicted(model, space, space.neighbours(e), k - len(out), taken)
        out += got
        taken.update(got)
    return out


def spread_elites(space: Space, ranked: Sequence[int], k: int, min_dist: int = 2,
                  scan: int = 256) -> list[int]:
    """Up to ``k`` of the ``ranked`` configurations (best first), each at Hamming distance
    at least ``min_dist`` from those taken before it: the best of distinct regions
    rather than the best one and its neighbours (whose neighbourhoods mostly overlap
    it). ``min_dist=1`` is simply the ``k`` first; only the ``scan`` first are looked at.

    Examples
    --------
    >>> from search.grid_space import GridSpace
    >>> line = GridSpace({"a": list(range(10)), "b": [0, 1]})
    >>> ranked = [line.index(c) for c in ({"a": 5, "b": 0}, {"a": 5, "b": 1},
    ...                                   {"a": 6, "b": 0}, {"a": 2, "b": 1})]
    >>> [line.get(i) for i in spread_elites(line, ranked, 2)]
    [{'a': 5, 'b': 0}, {'a': 2, 'b': 1}]
    """
    ranked = [int(i) for i in ranked[:scan]]
    if min_dist <= 1 or not ranked:
        return ranked[:k]
    knobs = space.knobs(ranked)
    taken: list[int] = []
    for row in range(len(ranked)):
        if len(taken) >= k:
            break
        if all((knobs[row] != knobs[t]).sum() >= min_dist for t in taken):
            taken.append(row)
    return [ranked[t] for t in taken]


def best_predicted(model: CostModel, space: Space, candidates: Sequence[int], k: int,
                   exclude: Collection[int]) -> list[int]:
    """The ``k`` distinct candidates outside ``exclude`` with the lowest predictions.

    >>> from search.grid_space import GridSpace
    >>> class Bowl:  # predicted cost: distance from a = 3
    ...     def predict(self, X): return np.abs(X[:, 0] - 3.0)
    >>> best_predicted(Bowl(), GridSpace({"a": list(range(8))}), [7, 3, 2, 4, 3], 2, exclude={3})
    [2, 4]
    """
    cand = [int(c) for c in dict.fromkeys(candidates) if int(c) not in exclude]
    if not cand or k <= 0:
        return []
    pred = checked_predict(model, space.features(cand))
    return [cand[j] for j in np.argsort(pred, kind="stable")[:k]]


def stall_candidates(options: StallOptions, model: CostModel, space: Space, best: Sequence[int],
                     k: int, exclude: Collection[int], rng: np.random.Generator) -> list[int]:
    """Up to ``k`` configurations outside ``exclude`` from ``options.source``; ``best`` are the
    successfully measured configurations, best first (``"far"`` keeps away from all of them).

    >>> from search.grid_space import GridSpace
    >>> class ByA:  # predicted cost grows with a
    ...     def predict(self, X): return X[:, 0]
    >>> line, rng = GridSpace({"a": list(range(10))}), np.random.default_rng(0)
    >>> far = StallOptions(source="far", min_dist=1)
    >>> stall_candidates(far, ByA(), line, [5, 8], 2, {5, 8}, rng)
    [0, 1]
    """
    elite = list(best[:options.n_elite])
    if options.source == "sweep":
        return sweep_candidates(model, space, elite, k, exclude)
    if options.source == "elite":
        cand = elite_candidates(space, elite, rng)
    else:
        cand = far_candidates(space, list(best), rng, options.n_pool, options.min_dist)
    return best_predicted(model, space, cand, k, exclude)
