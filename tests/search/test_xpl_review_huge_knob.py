"""A knob value that is infinite or beyond float32 no longer stops the model strategies:
the cost model clips such features to +-float32 max (NaN kept as missing)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from search.cost_model import XGBCostModel, XGBOptions, model_rows
from search.measure.base import MeasureRecord, Measurer
from search.grid_space import GridSpace
from search.tuner import tune

F32_MAX = float(np.finfo(np.float32).max)


class ByB(Measurer):
    name = "by_b"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=1.0 + c["b"] + (c["a"] == 2)) for c in configs]


@pytest.mark.parametrize("big", [math.inf, -math.inf, 2**200])
@pytest.mark.parametrize("strategy", ["explorer", "sa"])
def test_model_strategies_tune_a_space_with_a_huge_knob_value(big, strategy):
    space = GridSpace({"a": [1, 2, big], "b": list(range(4))})
    opts = {"plan_size": 4, "init_random": 4, "model": {"n_estimators": 5}}
    if strategy == "explorer":
        opts = {"init_random": 4, "model": {"n_estimators": 5}}
    res = tune(space, ByB(), strategy, budget=len(space), seed=0, options=opts)
    assert res.evaluations == len(space)
    assert res.best.config["b"] == 0


def test_model_rows_clip_beyond_float32_and_keep_nan():
    got = model_rows([[math.inf, -math.inf, 1e300, math.nan, 2.0]])
    assert got[0, :3].tolist() == [F32_MAX, -F32_MAX, F32_MAX]
    assert math.isnan(got[0, 3]) and got[0, 4] == 2.0


@pytest.mark.parametrize("objective", ["rank", "reg"])
def test_cost_model_fits_and_predicts_an_infinite_column(objective):
    X = np.array([[1.0, 0], [2.0, 1], [math.inf, 2], [1.0, 3]])
    m = XGBCostModel(XGBOptions(n_estimators=5, objective=objective)).fit(
        X, np.array([1.0, 2.0, 3.0, 4.0]))
    assert np.all(np.isfinite(m.predict(X)))
