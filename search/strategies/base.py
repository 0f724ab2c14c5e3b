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
import functools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from iobound import limits
from iobound.errors import InvalidInputError

from ..measure.base import MeasureRecord
from ..space import Space

__all__ = ["Strategy", "StrategyOptions", "Observations", "check_told"]


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

    def __init_subclass__(cls, **kwargs) -> None:
        # every strategy's own ask and tell check their arguments first, here, once for all
        super().__init_subclass__(**kwargs)
        for name, check in (("ask", _checked_ask), ("tell", _checked_tell)):
            if name in cls.__dict__ and not getattr(cls.__dict__[name], "_checked", False):
                setattr(cls, name, check(cls.__dict__[name]))

    def set_horizon(self, budget: int | None) -> None:
        """The number of unique configurations the run will measure (``None``: unknown).

        The tuner calls it before the first ask; a strategy may plan for it (the
        explorer ends the run with a local search) but the tuner alone stops the run.
        """
        self.horizon = None if budget is None else limits.check_int("budget", budget,
                                                                    limits.BUDGET)

    @property
    def batch_size(self) -> int:
        return self.options.batch_size

    @abc.abstractmethod
    def ask(self, n: int) -> list[int]:
        """Up to ``n`` distinct indices to measure next."""

    def tell(self, indices: Sequence[int], records: Sequence[MeasureRecord]) -> None:
        """Results for indices (in the order asked); the base records their costs."""
        self.seen.add(*check_told(self.space, indices, records))

    def stats(self) -> dict:
        """Diagnostics (e.g. model fit counts); JSON-able."""
        return {}


def check_told(space: Space, indices, records) -> tuple[list[int], list[MeasureRecord]]:
    """``(indices, records)`` as lists once ``indices`` are integers indexing ``space`` and
    ``records`` as many :class:`~search.measure.base.MeasureRecord`; else InvalidInputError
    (1.5 or "3" were taken as an index, a longer list was cut to the shorter, an index past
    the space failed at a later ask).

    >>> from search.grid_space import GridSpace
    >>> told = [MeasureRecord.ok({"a": 2}, time_ms=1.0)]
    >>> check_told(GridSpace({"a": [1, 2]}), [np.int64(1)], told)[0]
    [1]
    """
    def listed(name, values):
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence | np.ndarray):
            raise InvalidInputError(f"tell: {name} must be a sequence, got "
                                    f"{type(values).__name__} {values!r:.60}")
        return list(values)
    indices, records = listed("indices", indices), listed("records", records)
    if len(indices) != len(records):
        raise InvalidInputError(f"tell: {len(indices)} indices but {len(records)} records")
    where = limits.Limit(0, len(space) - 1, f"an index of the space of {len(space)}")
    indices = [limits.check_int("tell: index", i, where) for i in indices]
    bad = [r for r in records if not isinstance(r, MeasureRecord)]
    if bad:
        raise InvalidInputError(f"tell: records must be MeasureRecords, got "
                                f"{type(bad[0]).__name__} {bad[0]!r:.60}")
    return indices, records


def _checked_ask(ask):
    def checked(self, n):  # an integer (a bool, 2.5 or NaN is none); below 0 asks nothing
        return ask(self, max(limits.check_int("ask: n", n, _ASK_N), 0))
    checked._checked = True
    return functools.wraps(ask)(checked)


def _checked_tell(tell):
    def checked(self, indices, records):
        return tell(self, *check_told(self.space, indices, records))
    checked._checked = True
    return functools.wraps(tell)(checked)


_ASK_N = limits.Limit(-(1 << 63), (1 << 63) - 1, "a count")
