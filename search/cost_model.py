"""Cost models: predict a configuration's cost from its features; lower is better.

:class:`CostModel` is the seam (``fit(X, costs)``, ``predict(X)``);
:class:`XGBCostModel` is the XGBoost implementation used by the ``explorer`` and
``sa`` strategies. Costs are times in ms; a failed configuration has cost
``inf`` (a zero or negative cost is taken as a failure too: :func:`make_targets`).

Two objectives (``XGBOptions.objective``):

- ``"rank"`` (default): pairwise ranking (``rank:pairwise``, one query group,
  8 sampled pairs per item) on the relevance ``-log(time)``; failed
  configurations rank below the worst that ran. ``predict`` returns minus the
  ranking score; only the order of predictions means anything.
- ``"reg"``: squared-error regression on ``log(time)``; failed configurations
  get ``log(worst ok time) + log(2)`` (worse than anything that ran).
  ``predict`` returns the predicted log time.

Why ranking is the default: a tuner only needs the order of configurations, and
the recorded times are heavy-tailed (a few configurations 5-10x slower than the
optimum, plus failures); squared error spends its capacity on fitting that tail,
pairwise ranking on getting the order right near the top. What the two scored
with the explorer on the recorded spaces is in
``benchmarks/results/explorer_experiments.md``.

Examples
--------
>>> import numpy as np
>>> X = np.arange(20, dtype=float).reshape(-1, 1)
>>> y = (X[:, 0] - 7.0) ** 2 + 1.0
>>> m = XGBCostModel(XGBOptions(n_estimators=30), seed=0).fit(X, y)
>>> int(np.argmin(m.predict(X)))
7
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass

import numpy as np

from iobound import limits
from iobound.errors import InvalidInputError

from .model_rows import F32_MAX as _F32_MAX
from .history_rows import source_caps, training_rows
from .model_rows import _cost_vector, _numbers, check_training, feature_rows, model_rows
from .option_checks import INT64_LOW, check_count, check_flag, check_number, shown

__all__ = ["CostModel", "XGBOptions", "XGBCostModel", "OBJECTIVES", "make_targets",
           "model_rows", "feature_rows", "check_training", "training_rows", "source_caps",
           "checked_predict", "check_model", "xgb_seed"]

OBJECTIVES = ("rank", "reg", "auto")
_F32_TINY = float(np.finfo(np.float32).tiny)
_XGB_INT = limits.Limit(-(1 << 31), (1 << 31) - 1, "XGBoost reads it as a C int")
_XGB_ROUNDS = limits.Limit(1, 1 << 14, "boosting rounds: one tree each, a fit past this takes minutes")
_XGB_PAIRS = limits.Limit(1, 1 << 10, "ranking pairs per row: a fit past this takes minutes")
_XGB_SEEDS = 1 << 32  # XGBoost keeps a seed's low 32 bits
PAIR_METHODS = ("mean", "topk", "blend")


class CostModel(abc.ABC):
    """A model of configuration cost; lower predictions are better.

    >>> m = XGBCostModel(seed=0)
    >>> isinstance(m, CostModel), m.fitted  # nothing to predict from before ``fit``
    (True, False)
    """

    @abc.abstractmethod
    def fit(self, X: np.ndarray, costs: np.ndarray) -> "CostModel":
        """Train on features ``X`` (rows) and costs (ms, ``inf`` for failures); returns self."""

    @abc.abstractmethod
    def predict(self, X: np.ndarray) -> np.ndarray:
        """Predicted cost scores (lower is better), one per row of ``X``."""

    @property
    def fitted(self) -> bool:
        """Whether :meth:`fit` has been called with enough data to predict."""
        return getattr(self, "_fitted", False)


@dataclass(frozen=True)
class XGBOptions:
    """Options of :class:`XGBCostModel` (XGBoost's own parameter names where they exist).

    ``objective="auto"`` fits ``reg`` on fewer than ``auto_rank_min`` points and
    ``rank`` from then on. For ``rank``: ``pair_method="mean"`` (default) samples
    ``pairs_per_sample`` pairs for every configuration; ``"topk"`` pairs only the
    ``pairs_per_sample`` best with all others (the loss then cares about the top
    of the ranking); ``"blend"`` adds a ``mean`` (8 pairs) and a ``topk`` model's
    standardised scores. ``bootstrap=True`` fits on a resample (with replacement,
    seeded by ``seed``) of the data: a Thompson-sampling draw of the model.
    The alternatives to the defaults were tried and not kept
    (``benchmarks/results/explorer_experiments.md``).

    Refused at construction (InvalidInputError naming the field), as XGBoost would refuse
    them mid-run or fail silently: ``learning_rate`` outside [0, 1] (XGBoost's ``eta``; a
    larger one made a regression predict NaN), ``min_child_weight`` below 0, ``subsample`` or
    ``colsample_bynode`` outside (0, 1], any non-finite number, a real number XGBoost's
    float32 parameters cannot hold (nonzero below 2^-126, above float32's maximum),
    ``max_depth`` or ``n_jobs`` outside a C ``int``; and counts that would make a fit
    run for hours (``n_estimators`` above 2^14, ``pairs_per_sample`` above 2^10).

    >>> XGBOptions(objective="reg", n_estimators=20).max_depth
    6
    >>> XGBOptions(learning_rate=2)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: learning_rate must be a finite number in [0, 1], got 2
    """

    objective: str = "rank"
    n_estimators: int = 150
    max_depth: int = 6
    learning_rate: float = 0.1
    subsample: float = 1.0
    min_child_weight: float = 1.0
    n_jobs: int = 1
    auto_rank_min: int = 32
    pair_method: str = "mean"
    pairs_per_sample: int = 8
    colsample_bynode: float = 1.0
    bootstrap: bool = False

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise InvalidInputError(f"objective must be one of {', '.join(OBJECTIVES)}; got {self.objective!r}")
        if self.pair_method not in PAIR_METHODS:
            raise InvalidInputError(f"pair_method must be one of {', '.join(PAIR_METHODS)}; "
                                    f"got {self.pair_method!r}")
        for name in ("n_estimators", "max_depth", "pairs_per_sample"):
            check_count(name, getattr(self, name), low=1)
        for name in ("n_jobs", "auto_rank_min"):
            check_count(name, getattr(self, name), low=INT64_LOW)
        # XGBoost reads these as C ints: past them it refuses the fit ("expect int")
        for name in ("max_depth", "n_jobs"):
            limits.check_int(name, getattr(self, name), _XGB_INT)
        # a round per tree and pairs per row: past these one fit takes hours
        limits.check_int("n_estimators", self.n_estimators, _XGB_ROUNDS)
        limits.check_int("pairs_per_sample", self.pairs_per_sample, _XGB_PAIRS)
        # XGBoost's documented range of eta is [0, 1]: past it a regression's trees
        # overshoot and predict NaN (1e30 did)
        check_number("learning_rate", self.learning_rate, 0, 1)
        check_number("min_child_weight", self.min_child_weight, 0, _F32_MAX)  # [0, inf)
        for name in ("subsample", "colsample_bynode"):  # fractions: (0, 1]
            check_number(name, getattr(self, name), 0, 1, low_open=True)
        for name in ("learning_rate", "min_child_weight", "subsample", "colsample_bynode"):
            value = getattr(self, name)
            if 0 < value < _F32_TINY:  # XGBoost parses float32: "Out of range value"
                raise InvalidInputError(f"{name}={value!r} is below the smallest float32 "
                                        f"XGBoost takes ({_F32_TINY:g}); use 0 or more")
        check_flag("bootstrap", self.bootstrap)


def make_targets(costs: np.ndarray) -> np.ndarray:
    """log(time) per config; failures get log(worst ok time) + log 2 (``log 2`` when
    nothing ran). A failure is any cost that is not a positive finite time: ``inf``, zero,
    a negative number or NaN. ``costs`` must be a 1-D array of numbers: InvalidInputError
    naming ``costs`` otherwise (text such as ``"2.5"`` and ``None`` too, which numpy would
    parse or make a NaN).

    Examples
    --------
    >>> make_targets(np.array([1.0, np.inf, np.e])).round(3).tolist()
    [0.0, 1.693, 1.0]
    """
    costs = _cost_vector(costs)
    ok = np.isfinite(costs) & (costs > 0)
    out = np.empty(len(costs))
    out[ok] = np.log(costs[ok])
    worst = out[ok].max() if ok.any() else 0.0
    out[~ok] = worst + math.log(2.0)
    return out


class XGBCostModel(CostModel):
    """XGBoost cost model (see module doc for the two objectives).

    Parameters
    ----------
    options : XGBOptions
        Objective and booster settings.
    seed : int
        The random seed, 0..2^63-1 (:data:`iobound.limits.SEED`; training is
        deterministic for a fixed seed). XGBoost keeps only a seed's low 32 bits, so a
        seed of 2^32 or more is mixed down to 32 bits (:func:`xgb_seed`): seeds below 2^32
        reach XGBoost unchanged, and ``0``, ``2**32`` and ``2**40`` are different seeds.

    Examples
    --------
    >>> from search.grid_space import GridSpace
    >>> space = GridSpace({"a": list(range(6)), "b": list(range(6))})
    >>> X = space.features(range(len(space)))  # 36 configurations, the best a=2, b=4
    >>> m = XGBCostModel(XGBOptions(n_estimators=10), seed=0).fit(X, (X[:, 0] - 2) ** 2
    ...                                                          + (X[:, 1] - 4) ** 2 + 1.0)
    >>> p = m.predict(X)
    >>> p.shape, space.get(int(np.argmin(p)))
    ((36,), {'a': 2, 'b': 4})
    """

    def __init__(self, options: XGBOptions | None = None, seed: int = 0):
        if options is not None and not isinstance(options, XGBOptions):
            raise InvalidInputError(f"options must be an XGBOptions, got {options!r}")
        self.options = options or XGBOptions()
        # XGBoost's seed is a C long: an integer (numpy's too), never a truncated 2.5 or "4"
        self.seed = limits.check_int("seed", seed, limits.SEED)
        self._booster = None
        self._parts: list = []  # ranking: (booster, mean, std of its training scores) per part
        self._fitted = False
        self._columns: int | None = None  # the feature columns fit saw
        self._const = 0.0
        self._objective = self.options.objective
        self.fit_count = 0  # which fit the predictions are of (a memo of them checks it)

    def fit(self, X: np.ndarray, costs: np.ndarray) -> "XGBCostModel":
        """Train on ``X`` (:func:`model_rows`: values beyond float32 clipped) and costs
        (checked by :func:`check_training`: one per row, ``inf`` for a failure, no NaN).

        >>> XGBCostModel().fit([[1.0], [2.0]], [1.0, float("nan")])
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: costs[1] is nan: a cost is a number (inf for a failed configuration)
        """
        X, costs = check_training(X, costs)
        y = make_targets(costs)
        self.fit_count += 1
        self._columns = X.shape[1]
        o = self.options
        if o.bootstrap:  # Thompson sampling: each fit sees one bootstrap resample of the data
            pick = np.random.default_rng(self.seed).integers(0, len(y), len(y))
            X, y = X[pick], y[pick]
        self._fitted = True
        if np.ptp(y) == 0.0:  # nothing to learn: every prediction equal
            self._booster, self._parts, self._const = None, [], float(y[0])
            return self
        self._objective = o.objective
        if o.objective == "auto":
            self._objective = "reg" if len(y) < o.auto_rank_min else "rank"
        if self._objective == "reg":
            self._booster = self._train(X, y, {"objective": "reg:squarederror"})
            return self
        methods = [("mean", 8), ("topk", o.pairs_per_sample)] if o.pair_method == "blend" \
            else [(o.pair_method, o.pairs_per_sample)]
        self._parts = []
        for method, pairs in methods:
            b = self._train(X, -y, {"objective": "rank:pairwise", "lambdarank_pair_method": method,
                                    "lambdarank_num_pair_per_sample": pairs})
            train = b.inplace_predict(X)  # a blend adds the parts' scores in training-set units
            self._parts.append((b, float(train.mean()), float(train.std()) or 1.0))
        self._booster = self._parts[0][0]
        return self

    def _train(self, X: np.ndarray, label: np.ndarray, extra: dict):
        """One booster on ``label`` (one query group for the ranking objectives)."""
        import xgboost as xgb

        o = self.options
        params = {
            "max_depth": o.max_depth, "eta": o.learning_rate, "subsample": o.subsample,
            "min_child_weight": o.min_child_weight, "colsample_bynode": o.colsample_bynode,
            "nthread": o.n_jobs, "seed": xgb_seed(self.seed), "tree_method": "hist",
            "verbosity": 0, **extra,
        }
        dtrain = xgb.DMatrix(X, label=label, nthread=o.n_jobs)
        if extra["objective"].startswith("rank:"):
            dtrain.set_group([len(label)])
        return xgb.train(params, dtrain, num_boost_round=o.n_estimators)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Scores of the rows of ``X`` (lower is better), which must have the columns the
        model was fitted on; before :meth:`fit`, InvalidInputError.

        >>> XGBCostModel().predict([[1.0]])
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: predict() before fit(): the cost model is not fitted
        """
        if not self._fitted:
            raise InvalidInputError("predict() before fit(): the cost model is not fitted")
        X = feature_rows(X, columns=self._columns)  # as fit saw them
        if self._booster is None:
            return np.full(len(X), self._const)
        if self._objective == "reg":
            return self._booster.inplace_predict(X)
        if len(self._parts) == 1:
            return -self._booster.inplace_predict(X)
        return -sum((b.inplace_predict(X) - m) / sd for b, m, sd in self._parts)


def xgb_seed(seed: int) -> int:
    """The seed XGBoost is given for ``seed`` (0..2^63-1): ``seed`` itself below 2^32,
    else a 32-bit mix of all its bits (``numpy.random.SeedSequence(seed)``'s first word).
    XGBoost keeps a seed's low 32 bits only, which made ``0``, ``2**32`` and ``2**40`` one
    seed; seeds below 2^32 give the models they always gave.

    >>> xgb_seed(7), xgb_seed(2**32) == xgb_seed(0), xgb_seed(2**32) < 2**32
    (7, False, True)
    """
    seed = limits.check_int("seed", seed, limits.SEED)
    if seed < _XGB_SEEDS:
        return seed
    return int(np.random.SeedSequence(seed).generate_state(1, np.uint32)[0])


def check_model(model):
    """``model`` when it has a callable ``predict`` (a :class:`CostModel`, or any object
    with ``predict(X)``); else InvalidInputError naming ``model`` (was an AttributeError
    deep in an optimizer).

    >>> check_model(None)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: model must be a cost model with a callable predict, got None
    """
    if not callable(getattr(model, "predict", None)):
        raise InvalidInputError(f"model must be a cost model with a callable predict, "
                                f"got {shown(model)}")
    return model


def checked_predict(model, X: np.ndarray) -> np.ndarray:
    """``model.predict(X)`` as one float per row of ``X``; else InvalidInputError naming
    what the model gave (a wrong shape or type failed deep in an optimizer), or naming
    ``model`` when it has no callable ``predict`` (:func:`check_model`).

    >>> class Half:
    ...     def predict(self, X): return X[:, 0] / 2
    >>> checked_predict(Half(), np.array([[4.0], [6.0]])).tolist()
    [2.0, 3.0]
    """
    got = check_model(model).predict(X)
    try:  # text, None, bools and complex numbers are refused, not read by float()
        out = _numbers("predict", got, "numbers", booleans=False)
    except InvalidInputError:
        out = None
    if out is None or out.shape != (len(X),):
        raise InvalidInputError(f"the cost model's predict must give one number per row "
                                f"({len(X)}), got {type(got).__name__} {got!r:.60}")
    if np.isnan(out).any():  # NaN compares false both ways: it would break the optimizers' order
        raise InvalidInputError(f"the cost model's predict gave NaN for "
                                f"{int(np.isnan(out).sum())} of {len(X)} rows")
    return out
