"""probe42 findings on the cost model and the model optimizers: seeds past 2^32 (#10),
source_caps below one row per source (#13), unbounded walk/annealing options (#17, #18),
annealing chains reused on another space (#27), a model without predict (#28), unchecked
make_targets/model_rows (#33) and feature_rows(columns=) (#39), and training data given as
text or None (#41). Bad input is one InvalidInputError naming the argument; valid input
behaves as before."""

from __future__ import annotations

import math

import numpy as np
import pytest

from iobound.errors import InvalidInputError
from search.cost_model import XGBCostModel, XGBOptions, checked_predict, make_targets, source_caps
from search.grid_space import GridSpace
from search.model_rows import check_training, feature_rows, model_rows
from search.optimizers import AnnealOptions, WalkOptions, make_optimizer
from search.strategies import make_strategy

FAST = XGBOptions(n_estimators=5)
SPACE = GridSpace({"a": list(range(8)), "b": list(range(8))})


class Bowl:
    """A model of a bowl around (3, 5) over the knob columns."""

    def predict(self, X):
        return (X[:, 0] - 3.0) ** 2 + (X[:, 1] - 5.0) ** 2


# -- #10: XGBoost keeps a seed's low 32 bits --------------------------------------------

def _predictions(seed):
    X = np.random.default_rng(0).random((40, 3))
    C = np.random.default_rng(1).random(40) + 1
    opts = XGBOptions(n_estimators=10, subsample=0.5, colsample_bynode=0.5)
    return XGBCostModel(opts, seed=seed).fit(X, C).predict(X).tolist()


def test_seeds_a_multiple_of_2_32_apart_give_different_models():
    got = {s: _predictions(s) for s in (0, 1, 2**32, 2**32 + 1, 2**40, 2**63 - 1)}
    assert got[0] != got[2**32] != got[2**40] != got[0]
    assert got[1] != got[2**32 + 1] and got[0] != got[2**63 - 1]
    from search.cost_model import xgb_seed
    assert [xgb_seed(s) for s in (0, 7, 2**31, 2**32 - 1)] == [0, 7, 2**31, 2**32 - 1]
    assert xgb_seed(2**40) == xgb_seed(2**40) < 2**32
    assert _predictions(2**40) == got[2**40]  # the mix is deterministic


def test_seeds_below_2_32_reach_xgboost_unchanged():
    """The models of seeds below 2^32 are the ones they always were: XGBoost given the
    seed itself (the mix applies from 2^32 on, and is deterministic)."""
    import xgboost as xgb

    X = np.random.default_rng(0).random((30, 2))
    y = np.log(np.random.default_rng(1).random(30) + 1)
    for seed in (5, 2**32 - 1):
        m = XGBCostModel(XGBOptions(objective="reg", n_estimators=5, subsample=0.5), seed=seed)
        d = xgb.DMatrix(X, label=make_targets(np.exp(y)))
        ref = xgb.train({"max_depth": 6, "eta": 0.1, "subsample": 0.5, "min_child_weight": 1.0,
                         "colsample_bynode": 1.0, "nthread": 1, "seed": seed,
                         "tree_method": "hist", "verbosity": 0,
                         "objective": "reg:squarederror"}, d, num_boost_round=5)
        assert m.fit(X, np.exp(y)).predict(X).tolist() == ref.inplace_predict(X).tolist()


# -- #13: source_caps keeps a row of every source ----------------------------------------

def test_source_caps_documents_one_row_per_source_below_the_total():
    assert source_caps([5, 5], 4, 0) == [1, 1]
    assert source_caps([5, 0, 5], 4, 1) == [1, 0, 1]
    doc = " ".join(source_caps.__doc__.split())
    assert "every source with rows keeps at least one" in doc
    assert "``total=0`` included" in doc


# -- #17, #18: option bounds ------------------------------------------------------------

@pytest.mark.parametrize("cls, field, value", [
    (WalkOptions, "max_steps", 10**5), (WalkOptions, "max_steps", 2**62),
    (WalkOptions, "patience", 10**5), (WalkOptions, "patience", 2**62),
    (WalkOptions, "n_walkers", 4097), (WalkOptions, "neighbours_per_step", 2**62),
    (AnnealOptions, "n_iter", 2**62), (AnnealOptions, "early_stop", 2**62),
    (AnnealOptions, "n_iter", 4097), (AnnealOptions, "n_chains", 4097)])
def test_optimizer_steps_and_width_are_bounded(cls, field, value):
    with pytest.raises(InvalidInputError, match=rf"^{field}={value} is above the limit 4096"):
        cls(**{field: value})


def test_optimizer_bounds_keep_the_low_ends_and_take_the_limit():
    assert WalkOptions(max_steps=0).max_steps == 0
    w = WalkOptions(max_steps=4096, patience=4096, n_walkers=4096, neighbours_per_step=4096)
    assert (w.max_steps, w.patience, w.n_walkers, w.neighbours_per_step) == (4096,) * 4
    a = AnnealOptions(n_iter=4096, early_stop=4096, n_chains=4096)
    assert (a.n_iter, a.early_stop, a.n_chains) == (4096,) * 3
    for cls, field in ((WalkOptions, "patience"), (AnnealOptions, "n_iter")):
        with pytest.raises(InvalidInputError, match=rf"{field}=0 is below the minimum 1"):
            cls(**{field: 0})


def test_unbounded_walk_options_are_refused_through_make_strategy():
    with pytest.raises(InvalidInputError, match="max_steps"):
        make_strategy("explorer", SPACE, {"optimizer": {"max_steps": 10**5}},
                      np.random.default_rng(0))


# -- #27: annealing chains on another space ---------------------------------------------

def test_annealing_on_a_smaller_space_starts_new_chains():
    o = make_optimizer(AnnealOptions(n_chains=8, n_iter=5))
    big = GridSpace({"a": list(range(20)), "b": list(range(20))})
    o.propose(Bowl(), big, 4, set(), np.random.default_rng(0))
    small = GridSpace({"a": [1, 2], "b": [1, 2]})
    got = o.propose(Bowl(), small, 2, set(), np.random.default_rng(0))
    assert len(got) == 2 and all(0 <= i < 4 for i in got)
    assert all(0 <= i < 4 for i in o.points)


def test_annealing_on_a_larger_space_is_a_fresh_search_of_it():
    small = GridSpace({"a": [1, 2], "b": [1, 2]})
    big = GridSpace({"a": list(range(20)), "b": list(range(20))})
    used = make_optimizer(AnnealOptions(n_chains=8, n_iter=5))
    used.propose(Bowl(), small, 2, set(), np.random.default_rng(0))
    got = used.propose(Bowl(), big, 4, set(), np.random.default_rng(1))
    fresh = make_optimizer(AnnealOptions(n_chains=8, n_iter=5))
    assert got == fresh.propose(Bowl(), big, 4, set(), np.random.default_rng(1))
    assert used.points.tolist() == fresh.points.tolist()


def test_annealing_on_the_same_space_continues_its_chains():
    o = make_optimizer(AnnealOptions(n_chains=8, n_iter=3))
    o.propose(Bowl(), SPACE, 2, set(), np.random.default_rng(0))
    ends = o.points.copy()
    o2 = make_optimizer(AnnealOptions(n_chains=8, n_iter=3))
    o2.points = ends.copy()  # the same chains, set by hand
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    assert o.propose(Bowl(), SPACE, 2, set(), rng_a) == o2.propose(Bowl(), SPACE, 2, set(), rng_b)
    assert o.points.tolist() == o2.points.tolist()


# -- #28: a model without predict -------------------------------------------------------

@pytest.mark.parametrize("options", [WalkOptions(n_walkers=4, max_steps=2),
                                     AnnealOptions(n_chains=4, n_iter=2)])
@pytest.mark.parametrize("model", [None, object(), type("P", (), {"predict": 5})()])
def test_propose_refuses_a_model_without_predict(options, model):
    with pytest.raises(InvalidInputError, match=r"^model must be a cost model"):
        make_optimizer(options).propose(model, SPACE, 4, set(), np.random.default_rng(0))


def test_checked_predict_refuses_a_model_without_predict():
    with pytest.raises(InvalidInputError, match=r"^model must be a cost model.*None"):
        checked_predict(None, np.ones((2, 2)))
    assert checked_predict(Bowl(), np.array([[3.0, 5.0]])).tolist() == [0.0]


# -- #33: make_targets and model_rows ---------------------------------------------------

@pytest.mark.parametrize("costs", ["abc", None, 5.0, [[1.0, 2.0]], ["1.0", "2.0"], [1.0, None],
                                   [b"1"], [1.0, [2.0]]])
def test_make_targets_refuses_what_is_no_1d_array_of_numbers(costs):
    with pytest.raises(InvalidInputError, match=r"^costs must be"):
        make_targets(costs)


def test_make_targets_keeps_its_rule_for_numbers():
    t = make_targets([0.0, -1.0, 2.0, math.inf, math.nan])
    fail = 2 * math.log(2.0)
    assert t.tolist() == pytest.approx([fail, fail, math.log(2.0), fail, fail])
    assert make_targets(np.array([], dtype=float)).tolist() == []


@pytest.mark.parametrize("X", ["ab", None, [1.0, 2.0], [["1", "2"]], [[None, 1.0]], 5,
                               np.empty((2, 0))])
def test_model_rows_refuses_what_is_no_2d_array_of_numbers(X):
    with pytest.raises(InvalidInputError, match=r"^X "):
        model_rows(X)


def test_model_rows_keeps_clipping_and_nan():
    got = model_rows([[math.inf, -1e300, math.nan, 2]])
    assert got[0, 0] == -got[0, 1] == np.finfo(np.float32).max and math.isnan(got[0, 2])


# -- #39: feature_rows(columns=) --------------------------------------------------------

@pytest.mark.parametrize("columns", [2.5, "1", 0, -1, True, [1]])
def test_feature_rows_checks_columns(columns):
    with pytest.raises(InvalidInputError, match=r"^columns"):
        feature_rows([[1.0]], columns=columns)


def test_feature_rows_takes_a_count_of_columns():
    assert feature_rows([[1.0, 2.0]], columns=np.int64(2)).tolist() == [[1.0, 2.0]]
    with pytest.raises(InvalidInputError, match="X has 2 feature columns; the model was "
                                                "fitted on 3"):
        feature_rows([[1.0, 2.0]], columns=3)


# -- #41: training data -----------------------------------------------------------------

X20 = np.random.default_rng(0).random((20, 3))
C20 = np.arange(1.0, 21.0)


@pytest.mark.parametrize("X, costs, name", [
    (X20, [str(c) for c in C20], "costs"),
    (X20, np.array([str(c) for c in C20]), "costs"),
    (X20, [None] + list(C20[1:]), "costs"),
    ([[str(v) for v in r] for r in X20], C20, "X"),
    ([[None, 1.0, 2.0]] * 20, C20, "X"),
    ([[1.0, "2", 3.0]] * 20, C20, "X")])
def test_fit_refuses_text_and_none_in_training_data(X, costs, name):
    with pytest.raises(InvalidInputError, match=rf"^{name} must be"):
        XGBCostModel(FAST).fit(X, costs)
    with pytest.raises(InvalidInputError, match=rf"^{name} must be"):
        check_training(X, costs)


def test_fit_keeps_nan_features_and_non_positive_costs_as_documented():
    """NaN is XGBoost's missing feature value; a zero or negative cost is a failure (a
    0 ms record told straight to a strategy reaches the fit), as the docstring says."""
    Xn = X20.copy()
    Xn[0, 0] = math.nan
    assert XGBCostModel(FAST).fit(Xn, C20).predict(Xn).shape == (20,)
    neg = XGBCostModel(FAST, seed=3).fit(X20, np.r_[-1.0, C20[1:]]).predict(X20)
    inf = XGBCostModel(FAST, seed=3).fit(X20, np.r_[math.inf, C20[1:]]).predict(X20)
    assert neg.tolist() == inf.tolist()
    doc = " ".join(check_training.__doc__.split())
    assert "A zero or negative cost is taken as a failure" in doc
    assert "zero" in " ".join(make_targets.__doc__.split())
