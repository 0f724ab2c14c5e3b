"""Grid search: the space in index order, as Kernel Tuner's brute force does.

With a budget smaller than the space, plain index order visits one corner; the
``spread`` option (on by default) instead walks the index range with a step near
the golden ratio of its length and coprime to it, so a partial run covers the
whole range evenly; ``spread=False`` is plain index order.

Examples
--------
>>> import numpy as np
>>> from search.grid_space import GridSpace
>>> s = GridStrategy(GridSpace({"a": list(range(6))}), GridOptions(spread=False), rng=np.random.default_rng(0))
>>> s.ask(4), s.ask(4)
([0, 1, 2, 3], [4, 5])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..option_checks import check_flag
from .base import Strategy, StrategyOptions, check_rng

__all__ = ["GridStrategy", "GridOptions"]


@dataclass(frozen=True)
class GridOptions(StrategyOptions):
    """``spread``: visit the index range with a golden-ratio stride (coprime to its length).

    >>> GridOptions(spread=1)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: spread must be True or False, got 1
    """

    spread: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        check_flag("spread", self.spread)


class GridStrategy(Strategy):
    """Every configuration once, in a fixed deterministic order.

    >>> import numpy as np
    >>> from search.grid_space import GridSpace
    >>> s = GridStrategy(GridSpace({"a": list(range(5))}), rng=np.random.default_rng(0))
    >>> s.ask(5), s.ask(1)  # spread: stride 3 over 5 indices; then nothing is left
    ([0, 3, 1, 4, 2], [])
    """

    name = "grid"
    Options = GridOptions

    def __init__(self, space, options=None, rng=None):
        super().__init__(space, options, rng)
        check_rng(rng)
        size = len(space)
        step = 1
        if self.options.spread and size > 2:
            step = max(1, int(round(size * 0.6180339887)))
            while math.gcd(step, size) != 1:
                step += 1
        self._step = step
        self._next = 0

    def ask(self, n: int) -> list[int]:
        size = len(self.space)
        out = []
        while len(out) < n and self._next < size:
            out.append((self._next * self._step) % size)
            self._next += 1
        return out
