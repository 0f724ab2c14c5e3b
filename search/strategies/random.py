"""Random search: uniform samples without replacement.

Examples
--------
>>> import numpy as np
>>> from search.space import GridSpace
>>> s = RandomStrategy(GridSpace({"a": list(range(10))}), rng=np.random.default_rng(1))
>>> first = s.ask(4); second = s.ask(10)
>>> len(first), len(second), sorted(first + second) == list(range(10))
(4, 6, True)
"""

from __future__ import annotations

from .base import Strategy, StrategyOptions

__all__ = ["RandomStrategy"]


class RandomStrategy(Strategy):
    """Uniform random configurations, never the same one twice."""

    name = "random"
    Options = StrategyOptions

    def __init__(self, space, options=None, rng=None):
        super().__init__(space, options, rng)
        self._asked: set[int] = set()

    def ask(self, n: int) -> list[int]:
        left = len(self.space) - len(self._asked)
        n = min(n, left)
        out: list[int] = []
        while len(out) < n:
            if left <= 4 * n:  # nearly exhausted: draw from what is left
                rest = [i for i in range(len(self.space)) if i not in self._asked]
                pick = self.rng.permutation(len(rest))[: n - len(out)]
                new = [rest[j] for j in pick]
            else:
                new = [i for i in self.space.sample(2 * n, self.rng) if i not in self._asked]
            for i in new:
                if i not in self._asked and len(out) < n:
                    self._asked.add(i)
                    out.append(i)
        return out
