"""The XGBoost cost model and the history-row helpers checked against independent references.

- the model's options against ``xgboost.train`` called directly with the XGBoost parameters
  that ``XGBOptions`` documents (same names, same seed, same labels ``make_targets``);
- the ``auto`` objective against a ``reg`` and a ``rank`` model fitted on the same data;
- the ``blend`` against its definition: a ``mean`` (8 pairs) and a ``topk`` model's
  scores, each standardised by its training-set mean and standard deviation, added;
- bootstrap resamples against sampling with replacement from every row;
- :func:`training_rows` against counting over many seeds (the fastest ``cap // 2`` always,
  the others a uniform sample) and :func:`source_caps` against a brute-force search of the
  largest common cap.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import xgboost as xgb
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from iobound.errors import InvalidInputError
from search.cost_model import XGBCostModel, XGBOptions, make_targets, source_caps, training_rows
from tests.search.test_cost_model import _data


def _direct_booster(X, label, params, rounds, group=False):
    """``xgboost.train`` with the documented parameter names, one query group when ranking."""
    d = xgb.DMatrix(X, label=label, nthread=1)
    if group:
        d.set_group([len(label)])
    base = {"nthread": 1, "tree_method": "hist", "verbosity": 0}
    return xgb.train({**base, **params}, d, num_boost_round=rounds)


def test_targets_are_finite_and_a_zero_or_negative_time_counts_as_a_failure():
    """log(time) of a zero time would be -inf and poison the fit: any cost that is not a
    positive finite time gets the failure target log(worst ok time) + log 2."""
    t = make_targets(np.array([0.0, -1.0, 2.0, np.inf, np.nan]))
    assert np.all(np.isfinite(t))
    fail = math.log(2.0) + math.log(2.0)
    assert t.tolist() == pytest.approx([fail, fail, math.log(2.0), fail, fail])


def test_fit_on_no_data_and_predict_before_fit_are_refused():
    with pytest.raises(ValueError, match="no data"):
        XGBCostModel().fit(np.empty((0, 2)), np.empty(0))
    with pytest.raises(InvalidInputError, match="before fit"):
        XGBCostModel().predict(np.zeros((1, 2)))


def test_regression_on_equal_costs_predicts_their_log_time():
    """``reg`` predicts log time; with nothing to learn that is log of the one cost."""
    X = np.arange(6, dtype=float).reshape(-1, 1)
    p = XGBCostModel(XGBOptions(objective="reg")).fit(X, np.full(6, 2.0)).predict(X)
    assert p.tolist() == pytest.approx([math.log(2.0)] * 6)


def test_regression_options_are_xgboosts_own_parameters():
    """Every booster option and the seed reach XGBoost as the parameters they are named
    after (subsample and colsample below 1, so the seed matters)."""
    X, y = _data(3)
    o = XGBOptions(objective="reg", n_estimators=7, max_depth=2, learning_rate=0.3,
                   subsample=0.7, min_child_weight=2.0, colsample_bynode=0.67)
    got = XGBCostModel(o, seed=5).fit(X, y).predict(X)
    ref = _direct_booster(X, make_targets(y), {
        "objective": "reg:squarederror", "max_depth": 2, "eta": 0.3, "subsample": 0.7,
        "min_child_weight": 2.0, "colsample_bynode": 0.67, "seed": 5}, 7)
    assert np.array_equal(got, ref.inplace_predict(X))


def test_ranking_options_are_xgboosts_lambdarank_parameters():
    """``rank`` is ``rank:pairwise`` on the relevance -log(time) in one query group, with the
    pair method and pairs per sample given; predict is minus the score."""
    X, y = _data(4)
    o = XGBOptions(n_estimators=9, pair_method="topk", pairs_per_sample=3, subsample=0.8)
    got = XGBCostModel(o, seed=2).fit(X, y).predict(X)
    ref = _direct_booster(X, -make_targets(y), {
        "objective": "rank:pairwise", "lambdarank_pair_method": "topk",
        "lambdarank_num_pair_per_sample": 3, "max_depth": 6, "eta": 0.1, "subsample": 0.8,
        "seed": 2}, 9, group=True)
    assert np.array_equal(got, -ref.inplace_predict(X))


@pytest.mark.parametrize("n, like", [(9, "reg"), (10, "rank"), (11, "rank")])
def test_auto_objective_is_reg_below_auto_rank_min_and_rank_from_it(n, like):
    X, y = _data(5)
    X, y = X[:n], y[:n]
    fit = lambda objective: XGBCostModel(XGBOptions(objective=objective, n_estimators=10,
                                                    auto_rank_min=10), seed=1).fit(X, y).predict(X)
    assert np.array_equal(fit("auto"), fit(like))


def test_blend_adds_the_standardised_scores_of_a_mean_and_a_topk_model():
    """blend = -(z_mean8 + z_topk), z the part's score standardised by its training scores."""
    X, y = _data(6)
    Xt, Xs = X[:80], X[80:]
    opts = dict(n_estimators=12, pairs_per_sample=5)
    blend = XGBCostModel(XGBOptions(pair_method="blend", **opts), seed=0).fit(Xt, y[:80])

    def z(method, pairs):
        m = XGBCostModel(XGBOptions(**{**opts, "pair_method": method, "pairs_per_sample": pairs}),
                         seed=0).fit(Xt, y[:80])
        train, test = -m.predict(Xt).astype(float), -m.predict(Xs).astype(float)
        return (test - train.mean()) / train.std()

    want = -(z("mean", 8) + z("topk", 5))
    assert blend.predict(Xs) == pytest.approx(want, rel=1e-5, abs=1e-5)


def test_bootstrap_resamples_every_row_with_replacement():
    """Two rows: a resample holds only the first, only the second, or both (each seed one
    draw); over 16 seeds all three happen, so no row is left out of the draw."""
    X = np.array([[0.0], [1.0]])
    seen = set()
    for seed in range(16):
        p = XGBCostModel(XGBOptions(objective="reg", bootstrap=True, n_estimators=5),
                         seed=seed).fit(X, np.array([1.0, math.e])).predict(X)
        if p[0] == p[1]:  # one row only: the constant is its log time, 0 or 1
            seen.add(round(float(p[0]), 6))
        else:
            seen.add("both")
    assert seen == {0.0, 1.0, "both"}


def test_training_rows_come_back_in_increasing_order():
    rows = training_rows(np.arange(20.0)[::-1], 6, np.random.default_rng(0))
    assert len(rows) == 6 and np.all(np.diff(rows) > 0)
    assert {19, 18, 17} <= set(rows.tolist())  # the three fastest (rel 0, 1, 2)


def test_training_rows_keep_exactly_the_fastest_half_and_sample_the_rest_uniformly():
    """cap 5 of 10 distinct times: rows 0 and 1 (the 5 // 2 fastest) always; the other 3
    a uniform sample of rows 2..9 (each in 3/8 of 800 draws, chi-square)."""
    counts = np.zeros(10)
    for seed in range(800):
        counts[training_rows(np.arange(10.0), 5, np.random.default_rng(seed))] += 1
    assert counts[0] == counts[1] == 800
    assert chisquare(counts[2:]).pvalue > 1e-3


def test_training_rows_break_ties_by_position():
    """Equal times: the earlier rows are the fastest ones kept (a stable order)."""
    rel = np.array([2.0, 1.0] * 30)  # rows 1, 3, 5, ... share the best time
    for seed in range(5):
        rows = set(training_rows(rel, 10, np.random.default_rng(seed)).tolist())
        assert {1, 3, 5, 7, 9} <= rows


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(0, 40), min_size=1, max_size=6), per_source=st.integers(1, 50),
       total=st.integers(0, 120))
def test_source_caps_is_the_largest_common_cap_at_least_one(sizes, per_source, total):
    """Brute force: below ``total`` each source keeps min(size, per_source); above it the
    largest common cap c >= 1 with sum(min(n, c)) <= total (1 when none fits)."""
    caps = [min(n, per_source) for n in sizes]
    if sum(caps) <= total:
        want = caps
    else:
        fits = [c for c in range(1, max(caps) + 1) if sum(min(n, c) for n in caps) <= total]
        c = max(fits) if fits else 1
        want = [min(n, c) for n in caps]
    assert source_caps(sizes, per_source, total) == want
