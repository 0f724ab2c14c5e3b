"""XGBOptions refuses, at construction and naming the field, the values XGBoost would
refuse mid-run (reviewer finding)."""

from __future__ import annotations

import pytest

from iobound.errors import InvalidInputError
from search.cost_model import XGBOptions
from search.measure.base import MeasureRecord, Measurer
from search.grid_space import GridSpace
from search.tuner import tune

BAD = [("subsample", 1.5), ("subsample", 0.0), ("subsample", -0.5),
       ("colsample_bynode", 1.5), ("colsample_bynode", 0.0), ("learning_rate", -0.1),
       ("min_child_weight", -1.0)]


@pytest.mark.parametrize("field, value", BAD)
def test_out_of_range_values_are_refused(field, value):
    with pytest.raises(InvalidInputError, match=field):
        XGBOptions(**{field: value})


def test_range_ends_are_accepted():
    XGBOptions(subsample=1.0, colsample_bynode=1.0, learning_rate=0.0, min_child_weight=0.0)
    XGBOptions(subsample=1e-3, colsample_bynode=1e-3)


class Counting(Measurer):
    name = "counting"

    def __init__(self):
        self.n = 0

    def measure(self, configs):
        self.n += len(configs)
        return [MeasureRecord.ok(c, time_ms=1.0 + c["a"]) for c in configs]


def test_tune_refuses_the_option_before_measuring():
    m = Counting()
    with pytest.raises(InvalidInputError, match="subsample"):
        tune(GridSpace({"a": list(range(20))}), m, "explorer", budget=12, seed=0,
             options={"model": {"subsample": 1.5}})
    assert m.n == 0
