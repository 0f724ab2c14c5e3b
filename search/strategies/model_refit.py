"""The model-based strategy's cost model: fitting it, and when to fit it again.

On the every-round cadence (:mod:`.model_based`, ``plan_size=None``) a round refits
while the last fit learnt from at most ``refit_all_until`` measurements (and hints);
beyond, only once they have grown by a ``refit_growth`` share since that fit, and the
rounds between propose from the last model: a fit takes time in proportion to what it
learns from, so refitting every round makes a run quadratic in its length (a
4,362-configuration space tuned to exhaustion spent 650 s in 1,090 fits), while a model
that learnt from hundreds changes little with a few more. A space whose features change
(``features_version``: the history's rank columns gated,
:mod:`search.transfer.prior_feature`) is refitted on at once. The plan cadence
(``plan_size=k``) fits whenever it is asked to.

Examples
--------
>>> import numpy as np
>>> from search.grid_space import GridSpace
>>> from search.strategies.base import Observations
>>> from search.measure.base import MeasureRecord
>>> space = GridSpace({"a": list(range(6))})
>>> seen = Observations()
>>> seen.add([0, 3, 5], [MeasureRecord.ok(space.get(i), time_ms=1.0 + i) for i in (0, 3, 5)])
>>> m = train_model(space, seen, XGBOptions(n_estimators=10), seed=0, min_ok=2)
>>> m is not None and m.fitted
True
"""

from __future__ import annotations

import time

import numpy as np

from iobound import limits
from iobound.errors import InvalidInputError

from ..cost_model import CostModel, XGBCostModel, XGBOptions
from ..option_checks import check_count, check_type
from ..space import Space
from .base import Observations

__all__ = ["train_model", "ModelRefit", "XGBOptions"]


def train_model(space: Space, seen: Observations, options: XGBOptions, seed: int,
                min_ok: int = 2) -> CostModel | None:
    """An XGBoost model fitted on everything told so far; ``None`` when fewer than
    ``min_ok`` successful measurements exist (nothing to learn from yet): a positive
    finite cost each, as the model's targets count them (a 0 ms record told directly,
    not through the tuner, which makes it invalid, is none). InvalidInputError naming the
    argument for a ``space`` that is no :class:`~search.space.Space`, ``seen`` that is no
    :class:`~.base.Observations` of it (an index past the space), ``options`` that are no
    :class:`~search.cost_model.XGBOptions`, a ``seed`` past :data:`iobound.limits.SEED` or a
    ``min_ok`` below 1.

    >>> from search.grid_space import GridSpace
    >>> from search.measure.base import MeasureRecord
    >>> space, seen = GridSpace({"a": list(range(6))}), Observations()
    >>> seen.add([0], [MeasureRecord.ok(space.get(0), time_ms=1.0)])
    >>> train_model(space, seen, XGBOptions(n_estimators=10), seed=0) is None  # one is too few
    True
    """
    check_type("space", space, Space)
    check_type("seen", seen, Observations)
    check_type("options", options, XGBOptions)
    limits.check_int("seed", seed, limits.SEED)
    check_count("min_ok", min_ok, low=1)
    idx, cost = seen.arrays()
    if len(idx) and not 0 <= int(idx.min()) <= int(idx.max()) < len(space):
        bad = int(idx.max()) if int(idx.max()) >= len(space) else int(idx.min())
        raise InvalidInputError(f"seen holds index {bad}, outside the space of {len(space)} "
                                f"configurations (0..{len(space) - 1})")
    if int(np.count_nonzero(np.isfinite(cost) & (cost > 0))) < min_ok:
        return None
    # a cost that is no number (a record told directly, not through the tuner, which makes
    # it invalid) is a failure here, as it always was: the model refuses NaN from callers
    cost = np.where(np.isnan(cost) | (cost == -np.inf), np.inf, cost)
    return XGBCostModel(options, seed=seed).fit(space.features(idx), cost)


class ModelRefit:
    """The last fitted model and the rule that keeps it (module doc); every fit is seeded
    ``seed + fits``, so that a subsampling model does not draw the same rows each time
    (wrapped to 0 past :data:`iobound.limits.SEED`, so that a large ``seed``, within the
    limit, never fails a fit mid-run).

    >>> from search.measure.base import MeasureRecord
    >>> from search.grid_space import GridSpace
    >>> from search.strategies.model_based import ModelBasedOptions
    >>> space, seen = GridSpace({"a": list(range(6))}), Observations()
    >>> seen.add([0, 3, 5], [MeasureRecord.ok(space.get(i), time_ms=1.0 + i) for i in (0, 3, 5)])
    >>> refit = ModelRefit(seed=0)
    >>> m = refit.model(space, seen, ModelBasedOptions(refit_all_until=2, refit_growth=1.0))
    >>> refit.model(space, seen, ModelBasedOptions(refit_all_until=2, refit_growth=1.0)) is m
    True
    >>> refit.fits
    1
    """

    def __init__(self, seed: int):
        self.seed = limits.check_int("seed", seed, limits.SEED)
        self.fits = 0
        self.seconds = 0.0  # spent fitting
        self._model: CostModel | None = None
        self._fitted_size = 0  # the training set's size at the last fit
        self._fitted_version = 0  # the space's features_version at the last fit

    def model(self, space: Space, training: Observations, options) -> CostModel | None:
        """A model fitted now on ``training``, or on the every-round cadence the last one
        while its training set is past ``refit_all_until``, has not grown by
        ``refit_growth`` and the space's features are those it was fitted on
        (``options``: a :class:`~.model_based.ModelBasedOptions`; InvalidInputError naming
        the argument that is not what it should be)."""
        from .model_based import ModelBasedOptions  # (that module imports this one)
        check_type("space", space, Space)
        check_type("training", training, Observations)
        o = check_type("options", options, ModelBasedOptions)
        version = getattr(space, "features_version", 0)
        if (o.plan_size is None and self._model is not None
                and self._fitted_size > o.refit_all_until
                and len(training) < self._fitted_size * (1 + o.refit_growth)
                and version == self._fitted_version):
            return self._model
        t0 = time.perf_counter()
        model = train_model(space, training, o.model, self._fit_seed(), o.min_ok)
        self.seconds += time.perf_counter() - t0
        if model is not None:
            self.fits += 1
            self._model, self._fitted_size, self._fitted_version = model, len(training), version
        return model

    def _fit_seed(self) -> int:
        """``seed + fits``, the next fit's seed, wrapped into :data:`iobound.limits.SEED`
        (unchanged while it is inside)."""
        return (self.seed + self.fits) % (limits.SEED.high + 1)
