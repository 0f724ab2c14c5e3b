"""Numeric edges of the search API found by probing (session 45): each was a raw numpy or
Python error, or a silent wrong answer, where the contract is one InvalidInputError (or a
MeasurerError naming the measurer) or the answer of the equal plain input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, strategies as st

from iobound.errors import InvalidInputError
from search import GridSpace, MeasureRecord, Measurer
from search.cost_model import XGBCostModel, XGBOptions, checked_predict, make_targets
from search.measure.base import MeasurerError
from search.optimizers import AnnealOptimizer, AnnealOptions, WalkOptimizer, WalkOptions
from search.space import knob_value
from search.tuner import tune

LINE = GridSpace({"a": list(range(10))})


class _Predicts:
    """A model whose predict gives ``values`` (one per row asked)."""

    def __init__(self, make):
        self.make = make

    def predict(self, X):
        return self.make(X)


def _nan_at_7(X):
    out = np.abs(X[:, 0] - 5.0)
    out[X[:, 0] == 7] = np.nan
    return out


@pytest.mark.parametrize("optimizer", [AnnealOptimizer(AnnealOptions(n_chains=4, n_iter=50)),
                                       WalkOptimizer(WalkOptions(n_walkers=4))])
def test_a_nan_prediction_is_refused_not_ranked(optimizer):
    """NaN compares false both ways: the annealing's heap lost the optimum (a = 5) and the
    walk ranked the NaN configuration second."""
    with pytest.raises(InvalidInputError, match="predict gave NaN for 1 of"):
        optimizer.propose(_Predicts(_nan_at_7), LINE, 3, set(), np.random.default_rng(0))


@pytest.mark.parametrize("given", [
    lambda X: [str(v) for v in X[:, 0]],          # text numpy would parse
    lambda X: [None] + [1.0] * (len(X) - 1),      # None numpy would make a NaN
    lambda X: [True] * len(X),                    # bools read as 1
    lambda X: X[:, 0] + 1j,                       # complex: the imaginary part dropped
])
def test_a_prediction_that_is_no_real_number_is_refused(given):
    with pytest.raises(InvalidInputError, match="one number per row"):
        checked_predict(_Predicts(given), np.arange(4.0).reshape(4, 1))


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=6))
def test_real_predictions_pass_as_floats(values):
    """A list, a float32 array and an object array of real numbers are the floats they are."""
    X = np.zeros((len(values), 1))
    for shaped in (values, np.array(values, dtype=np.float32), np.array(values, dtype=object)):
        out = checked_predict(_Predicts(lambda _X, v=shaped: v), X)
        assert out.dtype == float
        assert out.tolist() == np.asarray(shaped, dtype=float).tolist()


class _Times(Measurer):
    name = "times"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=1.0 + c["a"]) for c in configs]


class _NumpyPositions(_Times):
    """Yields the batch last-first with numpy integers as positions (np.argsort's)."""

    def measure_unordered(self, configs):
        records = self.measure(configs)
        for k in np.argsort([-r.time_ms for r in records]):
            yield k, records[k]


def test_numpy_integer_positions_are_positions():
    result = tune(GridSpace({"a": list(range(6))}), _NumpyPositions(), "grid", budget=6, seed=0)
    assert result.evaluations == 6 and result.best.config == {"a": 0}


class _BoolPosition(_Times):
    def measure_unordered(self, configs):
        yield True, self.measure(configs)[1]


class _Dicts(Measurer):
    name = "dicts"

    def measure(self, configs):
        return [{"config": c, "time_ms": 1.0} for c in configs]


class _Nothing(Measurer):
    name = "nothing"

    def measure(self, configs):
        return None


@pytest.mark.parametrize("measurer, message", [
    (_BoolPosition(), "position True of a batch"),
    (_Dicts(), "returned dict .* not a MeasureRecord"),
    (_Nothing(), "the measure of measurer 'nothing' returned NoneType None"),
])
def test_a_measurer_breaking_its_contract_is_named(measurer, message):
    """A bool is no position; a dict or None is no record (they were a silent position 1,
    an AttributeError and a TypeError from deep inside)."""
    with pytest.raises(MeasurerError, match=message):
        tune(GridSpace({"a": list(range(4))}), measurer, "grid", budget=4, seed=0)


@pytest.mark.parametrize("indices", [3, np.int64(3), [3], np.array([3])])
def test_features_of_one_index_as_every_space_reads_it(indices):
    """GridSpace's features (the Space default) took len() of its argument: a scalar was a
    TypeError while ReplaySpace and ConvSpace read it as one index."""
    assert GridSpace({"a": [1, 2], "b": ["x", "y"]}).features(indices).tolist() == [[2.0, 1.0]]


@pytest.mark.parametrize("indices", [None, (i for i in range(2)), "ab", [True]])
def test_features_refuse_what_is_no_index_list(indices):
    with pytest.raises(InvalidInputError, match="indices must be integers"):
        GridSpace({"a": [1, 2], "b": ["x", "y"]}).features(indices)


def test_a_knob_value_that_is_no_choice_is_named():
    with pytest.raises(InvalidInputError, match="knob value 'z' is none of the choices"):
        knob_value("z", ["a", "b"])


def test_a_zero_dimensional_array_is_no_value_list():
    with pytest.raises(InvalidInputError, match="the values must be a list, got array"):
        GridSpace({"a": np.array(5)})


@pytest.mark.parametrize("costs", [[True, 2.0], np.array([True, False]), [2.0, np.bool_(True)]])
def test_a_bool_is_no_cost(costs):
    """A bool cost was a 1 ms success (True) or a failure (False); records refuse bools."""
    with pytest.raises(InvalidInputError, match="a bool is no time"):
        make_targets(costs)
    with pytest.raises(InvalidInputError, match="a bool is no time"):
        XGBCostModel(XGBOptions(n_estimators=5)).fit(np.arange(len(costs) * 1.0)[:, None], costs)


@given(st.lists(st.floats(1e-6, 1.7e308), min_size=1, max_size=7))
@example([1e308, 1.7e308])
def test_a_records_time_is_the_median_of_its_costs(costs):
    """statistics.median adds the middle two first (1e308 and 1.7e308 gave inf, then the
    record was refused naming time_ms, which was never given); halves give the same median
    wherever the sum does not overflow."""
    import statistics
    time = MeasureRecord.ok({}, costs=costs).time_ms
    assert time == statistics.median(costs) or not np.isfinite(sum(costs))
    assert min(costs) <= time <= max(costs)


def test_costs_whose_median_is_no_time_are_named():
    with pytest.raises(InvalidInputError, match=r"costs \[1.0, inf, inf\]: their median inf"):
        MeasureRecord.ok({}, costs=[1.0, float("inf"), float("inf")])
