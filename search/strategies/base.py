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
from iobound.wording import counted

from ..measure.base import MeasureRecord
from ..option_checks import check_count, check_type, shown
from ..space import Space

__all__ = ["Strategy", "StrategyOptions", "Observations", "check_told", "check_rng"]


@dataclass(frozen=True)
class StrategyOptions:
    """Options every strategy understands.

    Attributes
    ----------
    batch_size : int
        Indices asked per round (the tuner asks ``min(batch_size, budget left)``), within
        :data:`iobound.limits.BATCH_SIZE`.

    >>> StrategyOptions().batch_size
    8
    >>> StrategyOptions(batch_size=0)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: batch_size=0 is below the minimum 1
    """

    batch_size: int = 8

    def __post_init__(self) -> None:
        object.__setattr__(self, "batch_size",
                           limits.check_int("batch_size", self.batch_size, limits.BATCH_SIZE))


class Observations:
    """What a strategy has been told so far: indices, their costs, best first on demand.

    >>> seen = Observations()
    >>> seen.add([4, 1, 7], [MeasureRecord.ok({"a": 4}, time_ms=2.0),
    ...                      MeasureRecord.ok({"a": 1}, time_ms=0.5),
    ...                      MeasureRecord.failed({"a": 7}, "compile_error", "")])
    >>> seen.best(), len(seen), 7 in seen  # a failure is told but never best
    ([1, 4], 3, True)
    """

    def __init__(self) -> None:
        self.cost: dict[int, float] = {}

    def add(self, indices: Sequence[int], records: Sequence[MeasureRecord]) -> None:
        """Record the costs of ``records``, one per index of ``indices`` (integers from 0,
        none twice; an index told before gets its new cost); else InvalidInputError
        naming ``indices`` or ``records``, as :func:`check_told` (which checks them
        against a space too) gives."""
        indices, records = _told_pairs("Observations.add", indices, records, _ANY_INDEX)
        for i, r in zip(indices, records):
            self.cost[i] = r.cost

    def __len__(self) -> int:
        return len(self.cost)

    def __contains__(self, i: int) -> bool:
        return int(i) in self.cost

    def best(self, k: int | None = None) -> list[int]:
        """Told indices with a finite cost, lowest cost first (ties by index); the first
        ``k`` (a count: an ``int`` >= 0) of them, or all for ``None``."""
        if k is not None:
            k = check_count("k", k)
        ok = sorted((c, i) for i, c in self.cost.items() if math.isfinite(c))  # no NaN either
        return [i for _, i in ok[:k]]

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(indices, costs) as arrays, in the order told."""
        idx = np.fromiter(self.cost.keys(), dtype=np.int64, count=len(self.cost))
        cost = np.fromiter(self.cost.values(), dtype=float, count=len(self.cost))
        return idx, cost


class Strategy(abc.ABC):
    """Base class of search strategies (see module doc).

    >>> from search.grid_space import GridSpace
    >>> class InOrder(Strategy):  # the unasked indices, lowest first
    ...     name = "in_order"
    ...     def ask(self, n):
    ...         return [i for i in range(len(self.space)) if i not in self.seen][:n]
    >>> s = InOrder(GridSpace({"a": [1, 2, 3]}), rng=np.random.default_rng(0))
    >>> s.tell([0], [MeasureRecord.ok({"a": 1}, time_ms=1.0)]); s.ask(5), s.batch_size
    ([1, 2], 8)
    """

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
        # a dict or None fails here, not at the first ask (or as a silent wrong answer:
        # len() of a dict is no space's size); each strategy of this package refuses an rng
        # that is no Generator (check_rng; a wrapper may take one that only has its methods)
        check_type("space", space, Space)
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


def check_rng(rng) -> np.random.Generator:
    """``rng`` when it is an ``np.random.Generator``; else InvalidInputError naming ``rng``
    (an int seed or a ``RandomState`` failed at the first draw, mid-run, as an
    AttributeError; a strategy that draws nothing accepted it silently).

    >>> check_rng(5)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: rng must be a numpy.random._generator.Generator, got 5
    """
    return check_type("rng", rng, np.random.Generator)


def check_told(space: Space, indices, records, *,
               what: str = "tell") -> tuple[list[int], list[MeasureRecord]]:
    """``(indices, records)`` as lists once ``indices`` are integers indexing ``space``, none
    twice, and ``records`` as many :class:`~search.measure.base.MeasureRecord`, each a
    record of its index's configuration; else InvalidInputError naming ``what`` (the
    method told) and the argument (1.5 or "3" were taken as an index, a longer list was
    cut to the shorter, an index past the space failed at a later ask, a record of
    another configuration was learnt as this one's cost, a repeated index kept its last
    record only).

    >>> from search.grid_space import GridSpace
    >>> told = [MeasureRecord.ok({"a": 2}, time_ms=1.0)]
    >>> check_told(GridSpace({"a": [1, 2]}), [np.int64(1)], told)[0]
    [1]
    >>> check_told(GridSpace({"a": [1, 2]}), [0], told)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: tell: records[0] is a record of {'a': 2}, not of ...
    """
    check_type("space", space, Space)
    where = limits.Limit(0, len(space) - 1, f"an index of the space of {len(space)}")
    indices, records = _told_pairs(what, indices, records, where)
    for k, (i, r) in enumerate(zip(indices, records)):
        if not is_record_of(space, i, r):
            raise InvalidInputError(f"{what}: records[{k}] is a record of {shown(r.config)}, "
                                    f"not of configuration {i} {shown(space.get(i))}")
    return indices, records


def is_record_of(space: Space, i: int, record: MeasureRecord) -> bool:
    """Whether ``record`` is a record of configuration ``i`` of ``space``: its config is
    the space's member of index ``i`` (the space's own equality: ``1`` and ``1.0``, or a
    numpy value and its Python one, are one value where the space takes them as one).

    >>> from search.grid_space import GridSpace
    >>> is_record_of(GridSpace({"a": [1, 2]}), 1, MeasureRecord.ok({"a": 2.0}, time_ms=1.0))
    True
    """
    return space.index(dict(record.config)) == i


def _told_pairs(what: str, indices, records,
                where: limits.Limit) -> tuple[list[int], list[MeasureRecord]]:
    """The check :func:`check_told` and :meth:`Observations.add` share: ``indices`` a
    sequence of integers in ``where``, none twice, ``records`` as many MeasureRecords."""
    def listed(name, values):
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence | np.ndarray):
            raise InvalidInputError(f"{what}: {name} must be a sequence, got "
                                    f"{type(values).__name__} {values!r:.60}")
        return list(values)
    indices, records = listed("indices", indices), listed("records", records)
    if len(indices) != len(records):
        raise InvalidInputError(f"{what}: {counted(len(indices), 'index', plural='indices')} "
                                f"but {counted(len(records), 'record')}")
    indices = [limits.check_int(f"{what}: index", i, where) for i in indices]
    bad = [r for r in records if not isinstance(r, MeasureRecord)]
    if bad:
        raise InvalidInputError(f"{what}: records must be MeasureRecords, got "
                                f"{type(bad[0]).__name__} {bad[0]!r:.60}")
    if len(set(indices)) < len(indices):
        first: dict[int, int] = {}
        for k, i in enumerate(indices):
            if i in first:
                raise InvalidInputError(f"{what}: indices[{first[i]}] and indices[{k}] are both "
                                        f"{i}; one record per index (the other would be lost)")
            first[i] = k
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
#: The indices :meth:`Observations.add` takes (it knows no space): those of any space.
_ANY_INDEX = limits.Limit(0, limits.SPACE_INDEX.high, "an index of a space")
