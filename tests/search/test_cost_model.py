"""Tests of the XGBoost cost model (both objectives)."""

import numpy as np
import pytest

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
