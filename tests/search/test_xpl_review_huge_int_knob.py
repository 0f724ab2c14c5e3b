"""A knob value beyond float64 (an int such as 10**400) is the largest value, in order,
for the model-based strategies and for the history prior built from records of it."""
import math

from search.measure.base import MeasureRecord, Measurer
from search.grid_space import GridSpace
from search.space import knob_value
from search.tuner import tune


class _Time(Measurer):
    name = "time"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=1.0 + (c["a"] == 10**400) + 0.1 * c["b"]) for c in configs]


def test_knob_value_of_an_int_beyond_float64():
    assert knob_value(10**400, [1, 10**400]) == math.inf
    assert knob_value(-10**400, [-10**400, 1]) == -math.inf


def test_explorer_tunes_a_space_with_an_int_beyond_float64():
    space = GridSpace({"a": [1, 2, 10**400], "b": list(range(8))})
    result = tune(space, _Time(), budget=20, strategy="explorer", seed=0)
    assert result.evaluations == 20
    assert result.best.config["a"] != 10**400
