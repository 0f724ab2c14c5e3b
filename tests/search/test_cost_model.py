"""Tests of the XGBoost cost model (both objectives)."""

import numpy as np
import pytest

from iobound.errors import InvalidInputError
from search.cost_model import XGBCostModel, XGBOptions, make_targets


def _data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 16, size=(120, 3)).astype(float)
    y = 1.0 + (X[:, 0] - 5) ** 2 + 0.5 * (X[:, 1] - 9) ** 2 + 0.1 * X[:, 2]
    return X, y


@pytest.mark.parametrize("objective", ["reg", "rank"])
def test_model_ranks_held_out_configs(objective):
    """Predictions on unseen configs correlate strongly with the true cost (Spearman > 0.8)."""
    X, y = _data()
    m = XGBCostModel(XGBOptions(objective=objective, n_estimators=100), seed=0).fit(X[:80], y[:80])
    p = m.predict(X[80:])
    rank = lambda v: np.argsort(np.argsort(v))
    assert np.corrcoef(rank(p), rank(y[80:]))[0, 1] > 0.8


@pytest.mark.parametrize("objective", ["reg", "rank"])
def test_failures_predicted_worse(objective):
    """Configs that failed (cost inf) are predicted worse than the ones that ran."""
    X = np.arange(40, dtype=float).reshape(-1, 1)
    y = np.where(X[:, 0] < 20, 1.0 + X[:, 0] * 0.01, np.inf)
    p = XGBCostModel(XGBOptions(objective=objective, n_estimators=50), seed=0).fit(X, y).predict(X)
    assert p[:20].max() < p[20:].min()


def test_training_is_deterministic():
    """Same data and seed, same predictions."""
    X, y = _data(1)
    a = XGBCostModel(seed=3).fit(X, y).predict(X)
    b = XGBCostModel(seed=3).fit(X, y).predict(X)
    assert np.array_equal(a, b)


def test_constant_targets_predict_constant():
    """With nothing to learn, every prediction is equal."""
    X = np.arange(6, dtype=float).reshape(-1, 1)
    p = XGBCostModel().fit(X, np.full(6, 2.0)).predict(X)
    assert np.ptp(p) == 0.0


def test_targets_put_failures_above_worst():
    """make_targets gives failures log(worst) + log 2."""
    t = make_targets(np.array([1.0, 4.0, np.inf]))
    assert t[2] == pytest.approx(np.log(8.0))


def test_bad_objective_rejected():
    """Unknown objectives are rejected with the allowed list."""
    with pytest.raises(ValueError, match="rank, reg, auto"):
        XGBOptions(objective="huber")


@pytest.mark.parametrize("options", [dict(pair_method="topk", pairs_per_sample=16),
                                     dict(pair_method="blend", pairs_per_sample=16),
                                     dict(bootstrap=True)])
def test_ranking_variants_rank_held_out_configs(options):
    """Top-k pairs, the blend of mean and top-k pairs, and bootstrap fits still rank unseen configs."""
    X, y = _data()
    m = XGBCostModel(XGBOptions(n_estimators=100, **options), seed=0).fit(X[:80], y[:80])
    rank = lambda v: np.argsort(np.argsort(v))
    assert np.corrcoef(rank(m.predict(X[80:])), rank(y[80:]))[0, 1] > 0.7


def test_bootstrap_fits_differ_by_seed_only():
    """A bootstrap fit is a function of its seed: same seed same model, another seed another."""
    X, y = _data(2)
    fit = lambda seed: XGBCostModel(XGBOptions(bootstrap=True, n_estimators=30), seed=seed).fit(X, y).predict(X)
    assert np.array_equal(fit(1), fit(1)) and not np.array_equal(fit(1), fit(2))


@pytest.mark.parametrize("bad", [dict(pair_method="all"), dict(pairs_per_sample=0)])
def test_bad_pair_options_rejected(bad):
    """Unknown pair methods and non-positive pair counts are refused as bad input."""
    with pytest.raises(InvalidInputError):
        XGBOptions(**bad)
