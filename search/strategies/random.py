"""Random search: uniform samples without replacement.

Examples
--------
>>> import numpy as np
>>> from search.grid_space import GridSpace
>>> s = RandomStrategy(GridSpace({"a": list(range(10))}), rng=np.random.default_rng(1))
>>> first = s.ask(4); second = s.ask(10)
>>> len(first), len(second), sorted(first + second) == list(range(10))
(4, 6, True)
"""

from __future__ import annotations

from ..space import sample_excluding
from .base import Strategy, StrategyOptions, check_rng

__all__ = ["RandomStrategy"]


class RandomStrategy(Strategy):
    """Uniform random configurations, never the same one twice.

    >>> import numpy as np
    >>> from search.grid_space import GridSpace
    >>> s = RandomStrategy(GridSpace({"a": list(range(3))}), rng=np.random.default_rng(0))
    >>> len(s.ask(2)), len(s.ask(2)), s.ask(2)  # three in all, then none
    (2, 1, [])
    """

    name = "random"
    Options = StrategyOptions

    def __init__(self, space, options=None, rng=None):
        super().__init__(space, options, rng)
        check_rng(rng)
        self._asked: set[int] = set()

    def ask(self, n: int) -> list[int]:
        out = sample_excluding(self.space, n, self._asked, self.rng)
        self._asked.update(out)
        return out
