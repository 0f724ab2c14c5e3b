"""The history's ranking as one more feature of the target's cost model (stacking).

:class:`PriorFeatureSpace` is a space with the same configurations under the same
indices as the one it wraps, whose :meth:`~PriorFeatureSpace.features` gain one
column, ``history_rank``: a configuration's position in the prior's order
(:meth:`~search.transfer.prior.HistoryPrior.order`: consensus first, then the
history model's ranking) divided by the order's
length, 1.0 for a configuration the prior did not rank. A model-based strategy
that learns on it fits its cost model on the target's measurements only, with
the history's opinion as an input it may use or ignore: where the history ranks
the target well, trees split on the column; where it misleads, the column
explains nothing the target's data shows and is not used. Unlike history rounds
(:mod:`.guided`) this needs no decision about trusting the history: the target's
own data decides, a little more at every refit.

Why: the history's *best* configurations can miss a device's optimum while its
*ranking* still separates good regions from bad ones (on the recorded
convolution spaces, the A100's optimum is 366th of 3,886 in the other two
GPUs' order, but in their top 10%); measured in
``benchmarks/results/transfer_experiments.md``.

Examples
--------
>>> import numpy as np
>>> from search.space import GridSpace
>>> space = GridSpace({"x": list(range(4))})
>>> s = PriorFeatureSpace(space, np.array([2, 0]))
>>> s.feature_names()
['x', 'history_rank']
>>> s.features([2, 0, 1])[:, 1].tolist()
[0.0, 0.5, 1.0]
>>> s.neighbours(1) == space.neighbours(1) and len(s) == len(space)
True
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..space import Space

__all__ = ["PriorFeatureSpace"]


class PriorFeatureSpace(Space):
    """``space`` with the prior's rank as an extra feature column (see module doc)."""

    def __init__(self, space: Space, order: Sequence[int]):
        self.inner = space
        order = np.asarray(order, dtype=np.int64)
        self._rank = np.ones(len(space))
        if len(order):
            self._rank[order] = np.arange(len(order)) / len(order)

    @property
    def params(self) -> tuple[str, ...]:
        return self.inner.params

    def __len__(self) -> int:
        return len(self.inner)

    def get(self, i: int) -> dict:
        return self.inner.get(i)

    def index(self, config) -> int | None:
        return self.inner.index(config)

    def neighbours(self, i: int) -> list[int]:
        return self.inner.neighbours(i)

    def is_valid(self, config) -> bool:
        return self.inner.is_valid(config)

    def sample(self, n: int, rng: np.random.Generator) -> list[int]:
        return self.inner.sample(n, rng)

    def values(self, param: str) -> list:
        return self.inner.values(param)

    def feature_names(self) -> list[str]:
        return [*self.inner.feature_names(), "history_rank"]

    def knobs(self, indices: Sequence[int]) -> np.ndarray:
        return self.inner.knobs(indices)

    def features(self, indices: Sequence[int]) -> np.ndarray:
        idx = np.asarray(indices, dtype=np.int64)
        return np.hstack([self.inner.features(idx), self._rank[idx][:, None]])

    def describe(self) -> dict:
        return {**self.inner.describe(), "features": self.feature_names()}

    def __getattr__(self, name: str):  # what a particular space adds (status, cache, ...)
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)
