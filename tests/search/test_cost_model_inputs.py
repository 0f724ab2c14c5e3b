"""Tests of what XGBCostModel refuses (search/cost_model.py).

Bad training data or rows to predict are one InvalidInputError naming the problem, never
a silently constant model (NaN labels, or no successful configuration at all), XGBoost's
C++ error (labels of the wrong length), its ValueError (1-D rows, wrong columns) or an
IndexError (None). ``inf`` stays what it always was: a failed configuration's cost,
as the strategies give it (train_model: a NaN told directly is a failure there too).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iobound.errors import InvalidInputError
from search.cost_model import XGBCostModel, XGBOptions

X = np.random.default_rng(0).random((20, 3))
COSTS = np.arange(1.0, 21.0)
FAST = XGBOptions(n_estimators=5)


@pytest.mark.parametrize("rows, costs, needle", [
    (X, np.full(20, np.nan), r"costs\[0\] is nan"),
    (X, np.r_[COSTS[:-1], -np.inf], r"costs\[19\] is -inf"),
    (X, np.full(20, np.inf), "no positive finite time .* all failures"),
    (X, np.ones(5), r"one number per row of X \(20 rows\), got shape \(5,\)"),
    (X, np.ones((20, 1)), r"one number per row of X"),
    (X, None, r"one number per row of X"),
    (X, ["a"] * 20, "costs must be an array of numbers"),
    (np.ones(20), COSTS, r"X must be a 2-D array of features .* got shape \(20,\)"),
    (np.ones((20, 0)), COSTS, "X has no feature columns"),
    (None, COSTS, "X must be a 2-D array"),
    ([["a"]] * 20, COSTS, "X must be a 2-D array of numbers"),
    (np.ones((0, 3)), np.ones(0), "cannot fit a cost model on no data"),
])
def test_bad_training_data_is_refused(rows, costs, needle):
    with pytest.raises(InvalidInputError, match=needle):
        XGBCostModel(FAST).fit(rows, costs)


@pytest.mark.parametrize("rows, needle", [
    (None, "X must be a 2-D array"),
    (np.ones(3), r"got shape \(3,\)"),
    (np.ones((4, 5)), "X has 5 feature columns; the model was fitted on 3"),
    (np.ones((4, 2)), "X has 2 feature columns; the model was fitted on 3"),
])
@pytest.mark.parametrize("costs", [COSTS, np.full(20, 2.0)], ids=["booster", "constant"])
def test_bad_rows_to_predict_are_refused(rows, needle, costs):
    model = XGBCostModel(FAST).fit(X, costs)
    with pytest.raises(InvalidInputError, match=needle):
        model.predict(rows)


def test_predict_before_fit_is_bad_input():
    with pytest.raises(InvalidInputError, match="before fit"):
        XGBCostModel().predict(X)


@settings(max_examples=25, deadline=None)
@given(failed=st.lists(st.booleans(), min_size=20, max_size=20))
def test_inf_is_a_failure_and_a_nan_told_to_a_strategy_too(failed):
    """Property: with at least one success, inf costs train (the failures rank last), and
    train_model takes a NaN cost as such a failure, as before (same model, same scores)."""
    from search.grid_space import GridSpace
    from search.strategies.base import Observations
    from search.strategies.model_based import train_model
    from search.measure.base import MeasureRecord
    failed[0] = False
    space = GridSpace({"a": list(range(20))})
    costs = np.where(failed, np.inf, COSTS)
    if sum(not f for f in failed) >= 2:
        seen_inf, seen_nan = Observations(), Observations()
        seen_inf.add(range(20), [MeasureRecord.ok({"a": i}, surrogate_cost=c) for i, c in enumerate(costs)])
        seen_nan.add(range(20), [MeasureRecord.ok({"a": i}, surrogate_cost=np.nan if f else c)
                                 for i, (c, f) in enumerate(zip(costs, failed))])
        a, b = train_model(space, seen_inf, FAST, 0), train_model(space, seen_nan, FAST, 0)
        rows = space.features(np.arange(20))
        assert np.array_equal(a.predict(rows), b.predict(rows))
    assert len(XGBCostModel(FAST).fit(X, costs).predict(X)) == 20
