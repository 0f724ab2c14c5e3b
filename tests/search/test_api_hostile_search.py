"""Hostile arguments to the search API's strategies, optimizers, estimate and workloads
(a third probe): an index past the space, a float index, lists of two lengths, a string
count, an overflowing estimate are each one InvalidInputError naming them, never a
silently cut or coerced answer nor a raw error at a later call."""

from __future__ import annotations

import math

import numpy as np
import pytest

from iobound.errors import InvalidInputError
from search.grid_space import GridSpace
from search.measure.base import MeasureRecord

SPACE = GridSpace({"a": list(range(6)), "b": [1, 2]})
REC = MeasureRecord.ok(SPACE.get(0), time_ms=1.0)


def _strategies():
    from search.strategies import make_strategy, strategy_names
    return [(name, lambda name=name: make_strategy(name, SPACE, rng=np.random.default_rng(0)))
            for name in strategy_names() if name not in ("zero_shot",)]


@pytest.fixture(params=[n for n, _ in _strategies()])
def strategy(request):
    return dict(_strategies())[request.param]()


@pytest.mark.parametrize("indices, records, what", [
    ([1.5], [REC], "index"), (["3"], [REC], "index"), ([-1], [REC], "index"),
    ([len(SPACE)], [REC], "index"), ([10 ** 20], [REC], "index"), ([None], [REC], "index"),
    ([0, 1, 2], [REC], "3 indices but 1 record"), ([0], ["x"], "MeasureRecord"),
    (5, [REC], "sequence")])
def test_tell_checks_what_it_is_told(strategy, indices, records, what):
    """1.5 was recorded as index 1, "3" as 3, a longer list cut to the shorter, -1 or an
    index past the space failed at the next ask (IndexError, OverflowError)."""
    with pytest.raises(InvalidInputError, match=what):
        strategy.tell(indices, records)
    strategy.tell([np.int64(0)], [REC])
    assert len(strategy.ask(3)) <= 3


@pytest.mark.parametrize("n", ["3", None, 2.5, math.nan, True])
def test_ask_takes_an_integer(strategy, n):
    """"3" and None were TypeErrors; NaN gave the whole space to some strategies and
    nothing to others; 2.5 three indices to grid."""
    with pytest.raises(InvalidInputError, match="ask: n"):
        strategy.ask(n)


@pytest.mark.parametrize("budget", ["x", -5, math.nan, 0, True])
def test_set_horizon_takes_a_budget(strategy, budget):
    with pytest.raises(InvalidInputError, match="budget"):
        strategy.set_horizon(budget)
    strategy.set_horizon(None)


class _Flat:
    def predict(self, X):
        return np.zeros(len(X))


@pytest.mark.parametrize("kind", ["walk", "anneal"])
def test_propose_refuses_indices_outside_the_space(kind):
    """Excluded indices past the space cut the count returned ([0, 1] for 3 asked);
    best=[-1] or [10**30] was an IndexError / OverflowError."""
    from search.optimizers.anneal import AnnealOptimizer
    from search.optimizers.walk import WalkOptimizer
    opt = WalkOptimizer() if kind == "walk" else AnnealOptimizer()
    space, rng = GridSpace({"a": list(range(5))}), np.random.default_rng(0)
    assert len(opt.propose(_Flat(), space, 3, {1}, rng)) == 3
    for exclude, best in (({100, 101, 102}, ()), (set(), [-1]), (set(), [10 ** 30]),
                          ([None], ()), (5, ()), (set(), ["x"])):
        with pytest.raises(InvalidInputError, match="exclude|best"):
            opt.propose(_Flat(), space, 3, exclude, rng, best)
    with pytest.raises(InvalidInputError, match="space"):
        opt.propose(_Flat(), None, 3, set(), rng)


@pytest.mark.parametrize("args, kwargs", [
    ((1, 1, 1, 1, 1, "v100"), {"loop_steps": 1e308}), (("1", 1, 1, 1, 1, "v100"), {}),
    ((10 ** 400, 1, 1, 1, 1, "v100"), {}), (([1, 2], [1, 2, 3], 1, 1, 1, "v100"), {}),
    ((np.array(["1"]), 1, 1, 1, 1, "v100"), {})])
def test_estimate_ms_takes_counts_it_can_time(args, kwargs):
    """loop_steps=1e308 gave inf, a string was parsed, 10**400 an OverflowError, arrays
    that do not broadcast a ValueError."""
    from kernels.perf_model import estimate_ms
    with pytest.raises(InvalidInputError):
        estimate_ms(*args, **kwargs)
    assert math.isfinite(estimate_ms(9e8, 0.0, 64, 8, 1.0, "v100"))


def test_a_learning_rate_past_xgboosts_range_is_refused():
    """1e30 was taken, and a regression then predicted NaN everywhere."""
    from search.cost_model import XGBOptions
    with pytest.raises(InvalidInputError, match="learning_rate"):
        XGBOptions(objective="reg", learning_rate=1e30)
    assert XGBOptions(learning_rate=1.0).learning_rate == 1.0


def test_workloads_check_their_problem_and_names():
    """A NaN problem, a parameter named twice or blank were taken; a numpy integer in the
    problem was refused as 'not JSON serializable' where README says it works."""
    from search.db.model import Workload
    assert Workload("k", [np.int64(64)], ("x",)) == Workload("k", [64], ("x",))
    for problem, params, what in (([math.nan], ("x",), "NaN"), ([1], ("x", "x"), "twice"),
                                  ([1], ("",), "blank"), ([1], ("a\x00",), "printable")):
        with pytest.raises(InvalidInputError, match=what):
            Workload("k", problem, params)


@pytest.mark.parametrize("values, what", [({"x": [math.nan]}, "no parameter value"),
                                          ({"zz": [1]}, "no parameter of the workload"),
                                          ({"x": [{"a": 1}]}, "no parameter value")])
def test_tune_params_hold_the_workloads_parameters_and_values(values, what):
    """NaN was stored and read back; a name the workload lacks was stored as its own."""
    from search.db import TuningDB
    from search.db.model import Measurement, Workload
    w = Workload("k", [8], ("x",))
    m = Measurement(w, "gpu", "t", MeasureRecord.ok({"x": 1}, time_ms=1.0))
    with TuningDB(":memory:") as db:
        with pytest.raises(InvalidInputError, match=what):
            db.add([m], {w: values})
        assert db.count() == 0
        db.add([m], {w: {"x": [1, 2]}})
        assert db.tune_params(w) == {"x": [1, 2]}


@pytest.mark.parametrize("call", [
    lambda cm: cm.training_rows(np.array([3.0, 1.0, 2.0]), -1, np.random.default_rng(0)),
    lambda cm: cm.training_rows(np.array([1.0, math.nan]), 1, np.random.default_rng(0)),
    lambda cm: cm.training_rows(np.array([1.0, 2.0]), 1, None),
    lambda cm: cm.source_caps([-10, 20], 5, 3),
    lambda cm: cm.source_caps("ab", 5, 3),
    lambda cm: cm.source_caps([10, 20], 0, 3)])
def test_history_row_budgets_check_their_arguments(call):
    """training_rows(cap=-1) was a numpy ValueError; source_caps([-10, 20], 5, 3) gave a
    negative cap of -10."""
    import search.cost_model as cm
    with pytest.raises(InvalidInputError):
        call(cm)


class _Shapeless:
    def __init__(self, out):
        self.out = out

    def predict(self, X):
        return self.out(X)


@pytest.mark.parametrize("out", [lambda X: np.zeros((len(X), 2)), lambda X: np.zeros(1),
                                 lambda X: ["a"] * len(X), lambda X: None])
@pytest.mark.parametrize("kind", ["walk", "anneal"])
def test_a_model_that_predicts_no_number_per_row_is_named(kind, out):
    """A wrong shape or type was a KeyError, IndexError, ValueError or UFuncTypeError deep
    in the walk."""
    from search.optimizers.anneal import AnnealOptimizer
    from search.optimizers.walk import WalkOptimizer
    opt = WalkOptimizer() if kind == "walk" else AnnealOptimizer()
    with pytest.raises(InvalidInputError, match="one number per row"):
        opt.propose(_Shapeless(out), GridSpace({"a": list(range(50))}), 3, set(),
                    np.random.default_rng(0))
