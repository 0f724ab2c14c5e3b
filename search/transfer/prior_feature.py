"""The history's rankings as more features of the target's cost model (stacking).

:class:`PriorFeatureSpace` is a space with the same configurations under the same
indices as the one it wraps, whose :meth:`~PriorFeatureSpace.features` gain
columns of ranks, a configuration's position in an order divided by the order's
length (1.0 for a configuration the order lacks):

- ``history_rank``: in the prior's order
  (:meth:`~search.transfer.prior.HistoryPrior.order`: the consensus of all
  sources first, then the history model's ranking);
- ``history_rank[<source>]``, one per source (a workload on a device,
  :meth:`~search.transfer.prior.HistoryPrior.source_orders`): in that source's
  own measurements, fastest first.

A model-based strategy that learns on it fits its cost model on the target's
measurements only, with the history's opinions as inputs it may use or ignore:
where the history ranks the target well, trees split on its columns; where it
misleads, they explain nothing the target's data shows and are not used. The
per-source columns let the target's data pick *which* device to believe: the
consensus averages the sources, so a target that behaves like one of them and
unlike the rest sees its nearest device's ranking only diluted. Unlike history
rounds (:mod:`.guided`) this needs no decision about trusting the history: the
target's own data decides, a little more at every refit.

With few measurements a tree splits on any column that happens to separate them, so
history that says nothing about the target (devices unlike it) only adds noise to the
model (on a small space of four made-up devices with independent effects the explorer lost
0.06 at 25 evaluations with the columns, nothing without). :meth:`PriorFeatureSpace.gate`
keeps a source's column only while it orders the target's measurements as they are
(Kendall's tau, one-sided, significant at ``alpha``); a column that does not is constant,
so no tree uses it, until it does. The prior's own column, the pooled opinion of every
source, is never gated: in leave-network-out it is the only column, informative, and its
order is not yet visible in the first few measurements. The gate is off by default
(:class:`~search.transfer.guided_options.GuidedOptions` ``feature_alpha=1``): where history
is informative but the first measurements do not show it yet, it costs about 0.01 at 50.

Why: the history's *best* configurations can miss a device's optimum while its
*ranking* still separates good regions from bad ones (on the recorded
convolution spaces, the A100's optimum is 366th of 3,886 in the other two
GPUs' order, but in their top 10%); measured, with and without the per-source
columns, in ``benchmarks/results/transfer_experiments.md``.

Examples
--------
>>> import numpy as np
>>> from search.grid_space import GridSpace
>>> space = GridSpace({"x": list(range(4))})
>>> s = PriorFeatureSpace(space, np.array([2, 0]))
>>> s.feature_names()
['x', 'history_rank']
>>> s.features([2, 0, 1])[:, 1].tolist()
[0.0, 0.5, 1.0]
>>> t = PriorFeatureSpace(space, np.array([2, 0]), sources=[("k@gpu0", np.array([0, 3, 2]))])
>>> t.feature_names()
['x', 'history_rank', 'history_rank[k@gpu0]']
>>> t.features([2, 1])[:, 2].round(3).tolist()
[0.667, 1.0]
>>> s.neighbours(1) == space.neighbours(1) and len(s) == len(space)
True
>>> u = PriorFeatureSpace(GridSpace({"x": list(range(8))}), np.arange(8),
...                       sources=[("k@gpu0", np.arange(8))])
>>> u.gate({i: float(8 - i) for i in range(8)}, alpha=0.05)  # the target reverses the order
>>> u.active.tolist(), u.features([0, 7])[:, 2].tolist()
([True, False], [1.0, 1.0])
>>> u.gate({i: float(i) for i in range(8)}, alpha=0.05)
>>> u.active.tolist(), u.features([0, 7])[:, 2].tolist()
([True, True], [0.0, 0.875])
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from iobound.errors import InvalidInputError

from ..option_checks import check_number, check_type, shown
from ..space import Space
from .checks import check_costs, check_order
from .rank_test import kendall_greater

__all__ = ["PriorFeatureSpace"]


def _checked_sources(sources, size: int) -> list[tuple[str, np.ndarray]]:
    """``sources`` as ``(name, order)`` pairs, or InvalidInputError naming the bad one."""
    if isinstance(sources, (str, bytes, Mapping)) or not hasattr(sources, "__iter__"):
        raise InvalidInputError(f"sources must be a sequence of (name, order) pairs, "
                                f"got {shown(sources)}")
    out = []
    for k, pair in enumerate(sources):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise InvalidInputError(f"sources[{k}] must be a (name, order) pair, "
                                    f"got {shown(pair)}")
        name = check_type(f"sources[{k}] name", pair[0], str)
        out.append((name, check_order(f"sources[{k}] order", pair[1], size)))
    return out


def _ranks(n: int, order: Sequence[int]) -> np.ndarray:
    """Position in ``order`` over its length for each of ``n`` indices, 1.0 where absent."""
    order = np.asarray(order, dtype=np.int64)
    rank = np.ones(n)
    if len(order):
        rank[order] = np.arange(len(order)) / len(order)
    return rank


class PriorFeatureSpace(Space):
    """``space`` with rank columns: the prior's order, then each of ``sources``
    (``(name, order)`` pairs) (see module doc). Each order is a sequence of the space's
    configuration indices.

    >>> from search.grid_space import GridSpace
    >>> PriorFeatureSpace(GridSpace({"x": [1, 2]}), [1, -1])
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: order: index -1 is not a configuration of the space (0..1)
    """

    def __init__(self, space: Space, order: Sequence[int],
                 sources: Sequence[tuple[str, Sequence[int]]] = ()):
        check_type("space", space, Space)
        order = check_order("order", order, len(space))
        sources = _checked_sources(sources, len(space))
        self.inner = space
        self._names = ["history_rank"] + [f"history_rank[{name}]" for name, _ in sources]
        self._rank = np.column_stack([_ranks(len(space), o)
                                      for o in [order, *(o for _, o in sources)]])
        self.active = np.ones(self._rank.shape[1], dtype=bool)
        #: counts the changes of :meth:`features` (a gated column): a model fitted before
        #: one, or predictions kept from it, no longer match the features
        self.features_version = 0

    MIN_JUDGED = 5  # measurements before a column is judged at all

    def gate(self, known: Mapping[int, float], alpha: float) -> None:
        """Judge each source's rank column on the target's costs ``known`` (index -> cost;
        the finite ones count): active while its ranks order them with Kendall's tau
        significantly above 0 (one-sided p <= ``alpha``); below :attr:`MIN_JUDGED`
        measurements every column stays as it is, and the prior's column always does.
        ``known`` maps configuration indices to numbers (those of the finite ones must be
        the space's), ``alpha`` is in (0, 1]."""
        check_costs("known", known, finite=False)
        check_number("alpha", alpha, 0, 1, low_open=True)
        done = [(i, c) for i, c in known.items() if np.isfinite(c)]
        check_costs("known", dict(done), len(self))
        if len(done) < self.MIN_JUDGED:
            return
        idx = np.array([i for i, _ in done], dtype=np.int64)
        cost = np.array([c for _, c in done])
        before = self.active.copy()
        for k in range(1, self._rank.shape[1]):
            tau, p = kendall_greater(self._rank[idx, k], cost)
            self.active[k] = bool(np.isfinite(tau) and p <= alpha)
        self.features_version += int(not np.array_equal(before, self.active))

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
        return [*self.inner.feature_names(), *self._names]

    def knobs(self, indices: Sequence[int]) -> np.ndarray:
        return self.inner.knobs(indices)

    def features(self, indices: Sequence[int]) -> np.ndarray:
        idx = np.asarray(indices, dtype=np.int64)
        return np.hstack([self.inner.features(idx), np.where(self.active, self._rank[idx], 1.0)])

    def describe(self) -> dict:
        return {**self.inner.describe(), "features": self.feature_names()}

    def __getattr__(self, name: str):  # what a particular space adds (status, cache, ...)
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)
