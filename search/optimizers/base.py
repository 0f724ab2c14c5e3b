"""The model-optimizer interface: propose ``n`` configurations that a cost model likes.

AutoTVM's split (``ModelOptimizer.find_maximums(model, num, exclusive)``): a
model-based strategy decides *when* to train the cost model and how many
configurations to take from it; a :class:`ModelOptimizer` decides *how* to search
the space for configurations with low predicted cost. Implementations: the
parallel random walks of the paper (:class:`~search.optimizers.walk.WalkOptimizer`)
and AutoTVM's simulated annealing (:class:`~search.optimizers.anneal.AnnealOptimizer`).

:meth:`ModelOptimizer.propose` returns ``min(n, len(space) - len(exclude))``
distinct, valid indices outside ``exclude``, lowest prediction first; when the
search found fewer, random unexcluded indices fill the batch. An optimizer may
keep state between calls (annealing chains persist), so each strategy owns its
own instance; all randomness comes from the ``rng`` passed in.

Examples
--------
>>> import numpy as np
>>> from search.grid_space import GridSpace
>>> from search.cost_model import XGBCostModel
>>> from search.optimizers import make_optimizer, WalkOptions
>>> space = GridSpace({"a": list(range(12)), "b": list(range(12))})
>>> X = space.features(range(len(space)))
>>> model = XGBCostModel(seed=0).fit(X, (X[:, 0] - 3) ** 2 + (X[:, 1] - 8) ** 2 + 1.0)
>>> opt = make_optimizer(WalkOptions())
>>> got = opt.propose(model, space, 4, exclude=set(), rng=np.random.default_rng(0))
>>> len(got), space.get(got[0])
(4, {'a': 3, 'b': 8})
"""

from __future__ import annotations

import abc
from typing import Collection, Iterable, Sequence

import numpy as np

from iobound import limits
from iobound.errors import InvalidInputError

from ..cost_model import CostModel, checked_predict
from ..option_checks import check_count, check_type
from ..space import Space, sample_excluding

__all__ = ["ModelOptimizer", "score_memo", "NeighbourMemo", "PredictionMemo"]


class ModelOptimizer(abc.ABC):
    """Finds configurations with low predicted cost (see module doc).

    Subclasses set ``Options`` (their frozen options dataclass) and implement
    :meth:`search`.

    Examples
    --------
    >>> import dataclasses
    >>> from search.grid_space import GridSpace
    >>> @dataclasses.dataclass(frozen=True)
    ... class NoOptions: pass
    >>> class Exhaustive(ModelOptimizer):  # score every configuration, keep the n lowest
    ...     Options = NoOptions
    ...     def search(self, model, space, n, exclude, rng, best):
    ...         order = np.argsort(model.predict(space.features(range(len(space)))), kind="stable")
    ...         return [int(i) for i in order if int(i) not in exclude][:n]
    >>> class Bowl:  # predicted cost: distance from a = 5
    ...     def predict(self, X): return np.abs(X[:, 0] - 5.0)
    >>> line = GridSpace({"a": list(range(10))})
    >>> Exhaustive().propose(Bowl(), line, 3, exclude={5}, rng=np.random.default_rng(0))
    [4, 6, 3]
    """

    Options: type

    def __init__(self, options=None):
        if options is None:
            options = self.Options()
        if not isinstance(options, self.Options):
            raise InvalidInputError(f"{type(self).__name__} takes {self.Options.__name__}, "
                             f"got {type(options).__name__}")
        self.options = options

    def propose(self, model: CostModel, space: Space, n: int, exclude: Collection[int],
                rng: np.random.Generator, best: Sequence[int] = ()) -> list[int]:
        """``min(n, len(space) - len(exclude))`` distinct, valid, unexcluded indices.

        Parameters
        ----------
        model : CostModel
            A fitted model over ``space.features`` (lower is better); the walk and the
            annealing refuse one without a callable ``predict`` (InvalidInputError naming
            ``model``, :func:`~search.cost_model.check_model`).
        space : Space
            The space to search.
        n : int
            How many configurations to return (fewer only when the space runs out).
        exclude : collection of int
            Indices never to return (the measured ones).
        rng : numpy.random.Generator
            The only source of randomness.
        best : sequence of int
            Measured indices, best first (starting points, thresholds).
        """
        n = check_count("n", n)
        check_type("rng", rng, np.random.Generator)
        check_type("space", space, Space)
        exclude = _indices("exclude", exclude, len(space))
        best = list(_indices("best", best, len(space), keep_order=True))
        n = min(n, len(space) - len(exclude))
        if n <= 0:
            return []
        out = self.search(model, space, n, exclude, rng, best)[:n]
        if len(out) < n:
            out += sample_excluding(space, n - len(out), exclude | set(out), rng)
        return out

    @abc.abstractmethod
    def search(self, model: CostModel, space: Space, n: int, exclude: set[int],
               rng: np.random.Generator, best: Sequence[int]) -> list[int]:
        """Up to ``n`` distinct unexcluded indices, lowest prediction first (``n >= 1``)."""


def _indices(name: str, values, size: int, keep_order: bool = False):
    """``values`` as a set (or, with ``keep_order``, a list) of indices of a space of
    ``size``; else InvalidInputError (an index past the space cut the count returned, or
    failed deep in a walk)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise InvalidInputError(f"{name} must be a collection of indices, got "
                                f"{type(values).__name__} {values!r:.60}")
    where = limits.Limit(0, size - 1, f"an index of the space of {size}")
    out = [limits.check_int(f"{name}: index", i, where) for i in values]
    return out if keep_order else set(out)


def score_memo(model: CostModel, space: Space, idx: np.ndarray, memo: dict[int, float],
               known: dict[int, float] | None = None) -> np.ndarray:
    """Predictions for ``idx`` in one model call, remembering new ones in ``memo``;
    ``known`` (a :class:`PredictionMemo`'s) are the same model's from earlier calls,
    taken instead of predicted and added to.

    Examples
    --------
    >>> from search.grid_space import GridSpace
    >>> class Double:
    ...     def predict(self, X): return 2 * X[:, 0]
    >>> memo, known = {}, {1: 12.0}
    >>> score_memo(Double(), GridSpace({"a": [5, 6, 7]}), np.array([2, 1, 2]), memo, known).tolist()
    [14.0, 12.0, 14.0]
    >>> sorted(memo), sorted(known)
    ([1, 2], [1, 2])
    """
    new = [int(i) for i in dict.fromkeys(idx.tolist()) if int(i) not in memo]
    if known:
        for i in new:
            if i in known:
                memo[i] = known[i]
        new = [i for i in new if i not in memo]
    if new:
        for i, s in zip(new, checked_predict(model, space.features(new))):
            memo[i] = float(s)
        if known is not None:
            known.update((i, memo[i]) for i in new)
    return np.array([memo[int(i)] for i in idx], dtype=float)


class PredictionMemo:
    """One fitted model's predictions over one space, kept across searches: between two
    refits a strategy proposes from the same model round after round
    (:mod:`search.strategies.model_based`), and the walks score the same configurations
    again.

    Kept only for a model that counts its fits (``fit_count``, as
    :class:`~search.cost_model.XGBCostModel` does), so a model refitted in place is
    never answered from its earlier fit; another model, fit or space starts afresh, and
    past ``limit`` predictions it starts afresh too.

    Examples
    --------
    >>> from search.grid_space import GridSpace
    >>> class Fitted:
    ...     fit_count = 1
    >>> memo, model, space = PredictionMemo(), Fitted(), GridSpace({"a": [1, 2]})
    >>> memo(model, space)[0] = 3.0
    >>> memo(model, space), memo(object(), space)
    ({0: 3.0}, None)
    >>> model.fit_count = 2
    >>> memo(model, space)
    {}
    """

    def __init__(self, limit: int = 1_000_000):
        self.limit = limit
        self._key: tuple | None = None
        self._memo: dict[int, float] = {}

    def __call__(self, model: CostModel, space: Space) -> dict[int, float] | None:
        count = getattr(model, "fit_count", None)
        if count is None:
            return None
        last = self._key
        version = getattr(space, "features_version", 0)  # features changed under the model
        if (last is None or last[0] is not model or last[1] != count or last[2] is not space
                or last[3] != version or len(self._memo) > self.limit):
            self._key, self._memo = (model, count, space, version), {}
        return self._memo


class NeighbourMemo:
    """``space.neighbours(i)``, remembered: a space's neighbourhoods never change, and walks
    and chains come back to the same configurations round after round.

    At most ``limit`` configurations are remembered (the oldest are forgotten), so a
    huge space cannot grow it without bound; a different space starts it afresh.

    Examples
    --------
    >>> from search.grid_space import GridSpace
    >>> space = GridSpace({"a": [1, 2, 3]})
    >>> nb = NeighbourMemo(limit=2)
    >>> nb(space, 0), nb(space, 0) is nb(space, 0), len(nb.memo)
    ([1], True, 1)
    """

    def __init__(self, limit: int = 200_000):
        self.limit = limit
        self.memo: dict[int, list[int]] = {}
        self._space: Space | None = None

    def __call__(self, space: Space, i: int) -> list[int]:
        if space is not self._space:
            self._space, self.memo = space, {}
        i = int(i)
        got = self.memo.get(i)
        if got is None:
            if len(self.memo) >= self.limit:
                del self.memo[next(iter(self.memo))]
            got = self.memo[i] = space.neighbours(i)
        return got
