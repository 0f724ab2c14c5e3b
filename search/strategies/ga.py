"""Genetic algorithm: tournament selection, uniform crossover, neighbour mutation.

The population is the ``population`` best configurations told so far (elitist);
each child mixes two tournament-selected parents parameter by parameter and is
mutated to a random neighbour with probability ``mutation``. A child that is not a
member of the space (crossover can break constraints) or was already asked is
redrawn; after ``max_tries`` failures a random unasked configuration takes its
place. The first generation is random.

Examples
--------
>>> import numpy as np
>>> from search.grid_space import GridSpace
>>> s = GeneticStrategy(GridSpace({"a": list(range(8)), "b": list(range(8))}), rng=np.random.default_rng(0))
>>> len(set(s.ask(8)))
8
"""

from __future__ import annotations

from dataclasses import dataclass

from iobound import limits

from ..option_checks import INT64_LOW, check_count, check_number
from ..space import sample_excluding
from .base import Strategy, StrategyOptions, check_rng

__all__ = ["GeneticStrategy", "GAOptions"]

#: ``max_tries``: :data:`iobound.limits.GA_TRIES` at most; below, no minimum of its own.
_MAX_TRIES = limits.Limit(INT64_LOW, limits.GA_TRIES.high, limits.GA_TRIES.reason)


@dataclass(frozen=True)
class GAOptions(StrategyOptions):
    """Population size, tournament size, mutation probability, redraw attempts (at most
    :data:`iobound.limits.GA_TRIES`; 0 or less draws no child).

    >>> GAOptions(population=8).tournament
    3
    >>> GAOptions(population=1)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: population=1 is below the minimum 2
    """

    population: int = 16
    tournament: int = 3
    mutation: float = 0.3
    max_tries: int = 30

    def __post_init__(self) -> None:
        super().__post_init__()
        check_count("population", self.population, low=2)
        check_count("tournament", self.tournament, low=1)
        check_number("mutation", self.mutation, 0, 1)
        # at most GA_TRIES (an ask tries max_tries * n crossovers: 10**7 ran for minutes);
        # no minimum, as before (0 or less: a random unasked configuration at once)
        limits.check_int("max_tries", self.max_tries, _MAX_TRIES)


class GeneticStrategy(Strategy):
    """A steady-state elitist genetic algorithm over the space's configurations.

    >>> import numpy as np
    >>> from search.grid_space import GridSpace
    >>> from search.measure.base import MeasureRecord
    >>> s = GeneticStrategy(GridSpace({"a": list(range(6)), "b": list(range(6))}),
    ...                     GAOptions(population=4), rng=np.random.default_rng(0))
    >>> first = s.ask(4)
    >>> s.tell(first, [MeasureRecord.ok(s.space.get(i), time_ms=1.0 + i) for i in first])
    >>> children = s.ask(4); len(children), set(children).isdisjoint(first)  # never asked twice
    (4, True)
    """

    name = "ga"
    Options = GAOptions

    def __init__(self, space, options=None, rng=None):
        super().__init__(space, options, rng)
        check_rng(rng)
        self._asked: set[int] = set()

    def _take(self, i: int, out: list[int]) -> bool:
        if i in self._asked:
            return False
        self._asked.add(i)
        out.append(i)
        return True

    def _random(self, n: int, out: list[int]) -> None:
        for i in sample_excluding(self.space, n - len(out), self._asked, self.rng):
            self._take(i, out)

    def _select(self, pop: list[int]) -> int:
        k = min(self.options.tournament, len(pop))
        picks = self.rng.choice(len(pop), size=k, replace=False)
        return pop[int(min(picks))]  # pop is best first: the smallest position wins

    def _child(self, pop: list[int]) -> int | None:
        a, b = self.space.get(self._select(pop)), self.space.get(self._select(pop))
        mask = self.rng.random(len(self.space.params)) < 0.5
        child = {p: (a[p] if m else b[p]) for p, m in zip(self.space.params, mask)}
        i = self.space.index(child)
        if i is None:
            return None
        if self.rng.random() < self.options.mutation:
            nb = self.space.neighbours(i)
            if nb:
                i = int(nb[int(self.rng.integers(len(nb)))])
        return i

    def ask(self, n: int) -> list[int]:
        n = min(n, len(self.space) - len(self._asked))
        out: list[int] = []
        pop = self.seen.best(self.options.population)
        if len(pop) >= 2:
            tries = 0
            while len(out) < n and tries < self.options.max_tries * n:
                tries += 1
                i = self._child(pop)
                if i is not None:
                    self._take(i, out)
        if len(out) < n:
            self._random(n, out)
        return out
