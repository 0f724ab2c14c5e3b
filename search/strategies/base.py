"""The strategy interface: ask for indices to measure, tell what was measured.

A strategy never measures and never enforces the budget: the :func:`search.tuner.tune`
loop tells it the run's budget once (:meth:`Strategy.set_horizon`, so that it can plan
for the end of the run), asks ``ask(n)`` for up to ``n`` indices, removes the ones already measured
(telling the strategy their stored records instead of measuring again), measures
the rest and calls ``tell(indices, records)`` with everything it asked. A strategy
may return fewer than ``n`` indices, or an empty list when it has nothing left.

Every strategy takes the space, its own frozen options dataclass and an explicit
``np.random.Generator``; for a fixed seed, and the same records told, it asks for
the same indices (the tuner relies on this to resume a killed run exactly).

Examples
--------
>>> import numpy as np
>>> from search.grid_space import GridSpace
>>> from search.strategies.random import RandomStrategy
>>> s = RandomStrategy(GridSpace({"a": [1, 2, 3]}), rng=np.random.default_rng(0))
>>> sorted(s.ask(5))
[0, 1, 2]
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from iobound import limits
from iobound.errors import InvalidInputError

from ..measure.base import MeasureRecord
from ..space import Space

__all__ = ["Strategy", "StrategyOptions", "Observations"]


@dataclass(frozen=True)
class StrategyOptions:
    """Options every strategy understands.

    Attributes
    ----------
    batch_size : int
        Indices asked per round (the tuner asks ``min(batch_size, budget left)``), within
        :data:`iobound.limits.BATCH_SIZE`.
    """

    batch_size: int = 8

    def __post_init__(self) -> None:
        object.__setattr__(self, "batch_size",
                           limits.check_int("batch_size", self.batch_size, limits.BATCH_SIZE))


class Observations:
    """What a strategy has been told so far: indices, their costs, best first on demand."""

    def __init__(self) -> None:
        self.cost: dict[int, float] = {}

    def add(self, indices: Sequence[int], records: Sequence[MeasureRecord]) -> None:
        for i, r in zip(indices, records):
            self.cost[int(i)] = r.cost

    def __len__(self) -> int:
        return len(self.cost)

    def __contains__(self, i: int) -> bool:
        return int(i) in self.cost

    def best(self, k: int | None = None) -> list[int]:
        """Told indices with a finite cost, lowest cost first (ties by index)."""
        ok = sorted((c, i) for i, c in self.cost.items() if math.isfinite(c))  # no NaN either
        return [i for _, i in ok[:k]]

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(indices, costs) as arrays, in the order told."""
        idx = np.fromiter(self.cost.keys(), dtype=np.int64, count=len(self.cost))
        cost = np.fromiter(self.cost.values(), dtype=float, count=len(self.cost))
        return idx, cost


class Strategy(abc.ABC):
    """Base class of search strategies (see module doc)."""

    name: str = ""
    Options: type = StrategyOptions

    def __init__(self, space: Space, options=None, rng: np.random.Generator | None = None):
        if rng is None:
            raise InvalidInputError(f"strategy {self.name!r} needs an explicit rng (np.random.Generator)")
        if options is None:
            options = self.Options()
        if not isinstance(options, self.Options):
            raise InvalidInputError(f"strategy {self.name!r} takes {self.Options.__name__}, "
                             f"got {type(options).__name__}")
        self.space = space
        self.options = options
        self.rng = rng
        self.seen = Observations()
        self.horizon: int | None = None

    def set_horizon(self, budget: int | None) -> None:
        """The number of unique configurations the run will measure (``None``: unknown).

        The tuner calls it before the first ask; a strategy may plan for it (the
        explorer ends the run with a local search) but the tuner alone stops the run.
        """
        self.horizon = budget

    @property
    def batch_size(self) -> int:
        return self.options.batch_size

    @abc.abstractmethod
    def ask(self, n: int) -> list[int]:
        """Up to ``n`` distinct indices to measure next."""

    def tell(self, indices: Sequence[int], records: Sequence[MeasureRecord]) -> None:
        """Results for indices (in the order asked); the base records their costs."""
        self.seen.add(indices, records)

    def stats(self) -> dict:
        """Diagnostics (e.g. model fit counts); JSON-able."""
        return {}
