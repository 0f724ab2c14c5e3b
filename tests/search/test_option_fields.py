"""The strategies', model optimizers' and cost model's option dataclasses, and ``tune``'s
seed, refuse NaN, infinities, non-integers, bools and strings where they are given,
naming the field.

Before, only ``<`` comparisons guarded them: ``batch_size=2.5`` or ``population=2.5``
were accepted, ``mutation=nan`` or ``n_iter=nan`` passed (NaN compares False),
``batch_size="4"`` was a TypeError, and ``tune(seed=-1)`` was numpy's own ValueError.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from iobound import limits
from iobound.errors import InvalidInputError
from search.cost_model import XGBOptions
from search.measure.base import MeasureRecord, Measurer
from search.optimizers import AnnealOptions, WalkOptions
from search.grid_space import GridSpace
from search.strategies.base import StrategyOptions
from search.strategies.ga import GAOptions
from search.strategies.gga import GuidedGAOptions
from search.strategies.grid import GridOptions
from search.strategies.model_based import ModelBasedOptions
from search.strategies.sa import SAOptions
from search.strategies.stall import StallOptions
from search.tuner import tune

NAN, INF = math.nan, math.inf
NOT_INT = [NAN, INF, 2.5, True, "4", None, np.float64(4.0)]

BAD = [
    (StrategyOptions, "batch_size", NOT_INT + [0]),
    (GridOptions, "spread", ["no", 1, None]),
    (GAOptions, "population", NOT_INT + [1]),
    (GAOptions, "tournament", NOT_INT + [0]),
    (GAOptions, "mutation", [NAN, INF, "0.3", True, -0.1, 1.5]),
    (GAOptions, "max_tries", NOT_INT),
    (GuidedGAOptions, "population", [NAN, 2.5]),
    (ModelBasedOptions, "batch_size", [NAN, 2.5]),
    (ModelBasedOptions, "init_random", NOT_INT + [-1]),
    (ModelBasedOptions, "epsilon", [NAN, INF, "0.1", True, -0.1, 1.5]),
    (ModelBasedOptions, "min_ok", NOT_INT + [0]),
    (ModelBasedOptions, "plan_size", [NAN, INF, 2.5, True, "4", 0]),
    (ModelBasedOptions, "endgame", [NAN, INF, "0.1", True, -0.1, 1.0]),
    (ModelBasedOptions, "endgame_elite", NOT_INT + [0]),
    (ModelBasedOptions, "endgame_spread", NOT_INT + [0]),
    (SAOptions, "init_random", [NAN, 2.5]),
    (AnnealOptions, "n_chains", NOT_INT + [0]),
    (AnnealOptions, "n_iter", NOT_INT + [0]),
    (AnnealOptions, "early_stop", NOT_INT + [0]),
    (AnnealOptions, "temp", [(NAN, 0.0), (1.0, -0.5), (1.0, INF), (1.0,), (1.0, 0.0, 0.0), "10", 1.0,
                             (True, 0.0), ("1", "0")]),
    (WalkOptions, "n_walkers", NOT_INT + [0]),
    (WalkOptions, "max_steps", NOT_INT + [-1]),
    (WalkOptions, "patience", NOT_INT + [0]),
    (WalkOptions, "neighbours_per_step", NOT_INT + [0]),
    (WalkOptions, "best_starts", [NAN, INF, "0.5", True, -0.1, 1.5]),
    (WalkOptions, "threshold", [NAN, INF, -INF, "1", True]),
    (WalkOptions, "diverse", ["no", 1, None]),
    (StallOptions, "rate", [NAN, INF, "0.1", True, -0.1]),
    (StallOptions, "cap", [NAN, INF, "0.5", True, -0.1, 1.5]),
    (StallOptions, "grace", NOT_INT + [0]),
    (StallOptions, "n_elite", NOT_INT + [0]),
    (StallOptions, "n_pool", NOT_INT + [0]),
    (StallOptions, "min_dist", NOT_INT + [0]),
    (XGBOptions, "n_estimators", NOT_INT + [0]),
    (XGBOptions, "max_depth", NOT_INT + [0]),
    (XGBOptions, "learning_rate", [NAN, INF, "0.1", True]),
    (XGBOptions, "subsample", [NAN, INF, "1", True]),
    (XGBOptions, "min_child_weight", [NAN, INF, "1", True]),
    (XGBOptions, "n_jobs", NOT_INT),
    (XGBOptions, "auto_rank_min", NOT_INT),
    (XGBOptions, "pairs_per_sample", NOT_INT + [0]),
    (XGBOptions, "colsample_bynode", [NAN, INF, "1", True]),
    (XGBOptions, "bootstrap", ["no", 1, None]),
]


@pytest.mark.parametrize("cls, field, value", [(c, f, v) for c, f, vals in BAD for v in vals],
                         ids=lambda x: x.__name__ if isinstance(x, type) else repr(x))
def test_bad_values_are_refused_naming_the_field(cls, field, value):
    """Each bad value: InvalidInputError at construction, its message naming the field."""
    with pytest.raises(InvalidInputError, match=field):
        cls(**{field: value})


@pytest.mark.parametrize("cls, kw", [
    (StrategyOptions, {"batch_size": 1}),
    (GridOptions, {"spread": False}),
    (GAOptions, {"population": 2, "tournament": 1, "mutation": 0, "max_tries": -3}),
    (GAOptions, {"mutation": 1}),
    (ModelBasedOptions, {"init_random": 0, "epsilon": 1, "min_ok": 1, "plan_size": 1,
                         "endgame": 0, "endgame_elite": 1, "endgame_spread": 1}),
    (ModelBasedOptions, {"epsilon": 0.0, "endgame": 0.999, "plan_size": None}),
    (AnnealOptions, {"n_chains": 1, "n_iter": 1, "early_stop": 1, "temp": (2, 0.5)}),
    (WalkOptions, {"n_walkers": 1, "max_steps": 0, "patience": 1, "neighbours_per_step": 1,
                   "best_starts": 1, "threshold": -2, "diverse": True}),
    (StallOptions, {"rate": 0, "cap": 1, "grace": 1, "n_elite": 1, "n_pool": 1, "min_dist": 1}),
    (StallOptions, {"rate": 7.5, "cap": 0}),
    (XGBOptions, {"n_estimators": 1, "max_depth": 1, "learning_rate": 1, "subsample": 0.5,
                  "min_child_weight": 0, "n_jobs": -1, "auto_rank_min": 0,
                  "pairs_per_sample": 1, "colsample_bynode": 1, "bootstrap": True}),
])
def test_valid_values_are_kept_as_given(cls, kw):
    """Edges of each range, ints for float fields: accepted and stored unchanged."""
    opts = cls(**kw)
    assert all(getattr(opts, k) == v and type(getattr(opts, k)) is type(v) for k, v in kw.items())


def test_anneal_temp_from_json_is_a_tuple():
    """A list (as JSON gives it) is kept as the tuple the field's type names."""
    assert AnnealOptions(temp=[1, 0.5]).temp == (1, 0.5) == AnnealOptions(temp=(1, 0.5)).temp


COUNTS = [(StrategyOptions, "batch_size", 1), (GAOptions, "population", 2),
          (GAOptions, "tournament", 1), (ModelBasedOptions, "init_random", 0),
          (ModelBasedOptions, "endgame_elite", 1), (AnnealOptions, "n_iter", 1),
          (WalkOptions, "max_steps", 0), (StallOptions, "n_pool", 1),
          (XGBOptions, "max_depth", 1)]
#: Counts with a limit of their own (iobound.limits), past which they are refused.
HIGHS = {"batch_size": limits.BATCH_SIZE.high, "n_iter": limits.SEARCH_STEPS.high,
         "max_steps": limits.SEARCH_STEPS.high}


def _kept_or_refused(cls, field, value):
    """``cls(field=value)``'s field as given when in range, refused above its own limit."""
    if value > HIGHS.get(field, math.inf):
        with pytest.raises(InvalidInputError, match=f"{field}=.* is above the limit"):
            cls(**{field: value})
        return value
    return getattr(cls(**{field: value}), field)


@given(st.sampled_from(COUNTS), st.floats().filter(lambda x: not x.is_integer()))
def test_any_non_integer_float_is_refused_for_a_count(case, x):
    """Property: a float that is no whole number (NaN, inf, 2.5...) never makes a count."""
    cls, field, _ = case
    with pytest.raises(InvalidInputError, match=field):
        cls(**{field: x})


@given(st.sampled_from(COUNTS), st.integers(0, 1 << 20))
def test_any_int_in_range_is_accepted_for_a_count(case, k):
    """Property: every int from the field's minimum up is kept as given (up to its own
    limit, where it has one)."""
    cls, field, low = case
    assert _kept_or_refused(cls, field, low + k) == low + k


@given(st.floats(0, 1))
def test_any_probability_is_accepted_and_nan_is_not(p):
    """Property: every p in [0, 1] is a mutation rate and a random share."""
    assert GAOptions(mutation=p).mutation == p == ModelBasedOptions(epsilon=p).epsilon


class _Flat(Measurer):
    name = "flat"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=1.0) for c in configs]


SPACE = GridSpace({"a": list(range(4))})


@pytest.mark.parametrize("seed", [-1, 2.5, True, "1", NAN, 1 << 63, np.float64(3.0)])
def test_tune_refuses_a_bad_seed_naming_it(seed):
    """A seed that is no int in [0, 2**63) is InvalidInputError naming seed, before any
    measurement (was numpy's ValueError for -1, a silent run for True)."""
    with pytest.raises(InvalidInputError, match="seed"):
        tune(SPACE, _Flat(), "random", budget=2, seed=seed)


@pytest.mark.parametrize("seed", [None, 0, (1 << 63) - 1, np.int64(3), np.uint8(3)])
def test_tune_takes_none_and_the_seed_range_edges(seed):
    """``None`` is still 0; both ends of the seed range run; a numpy integer is an integer
    (it was refused, while ``budget=np.int64(...)`` was taken)."""
    res = tune(SPACE, _Flat(), "random", budget=np.int64(2), seed=seed)
    assert res.seed == (0 if seed is None else seed) and type(res.seed) is int



@pytest.mark.parametrize("kw", [{"budget": None}, {"budget": 2.5}, {"budget": NAN}, {"budget": "4"},
                                {"budget": True}, {"patience": 1.5}, {"patience": "3"}])
def test_tune_refuses_a_budget_or_patience_that_is_no_integer(kw):
    """Was a TypeError (None, 2.5, NaN, "4") or a silent budget of 1 (True)."""
    name = next(iter(kw))
    with pytest.raises(InvalidInputError, match=f"{name} must be an integer"):
        tune(SPACE, _Flat(), "random", **{"budget": 2, **kw})


@given(st.sampled_from(COUNTS), st.integers(0, 1 << 20),
       st.sampled_from([np.int64, np.int32, np.uint16, np.intp]))
def test_a_numpy_integer_is_an_integer_for_a_count(case, k, kind):
    """Property: a numpy integer in range is accepted like the int it equals (a count
    read from a numpy array was refused as 'must be an integer')."""
    cls, field, low = case
    value = low + k
    if value > np.iinfo(kind).max:
        return
    assert _kept_or_refused(cls, field, kind(value)) == value


@pytest.mark.parametrize("kw, needle", [
    ({"budget": "4"}, "budget must be an integer"),      # was TypeError ('<' str and int)
    ({"budget": [4]}, "budget must be an integer"),
    ({"patience": "3"}, "patience must be an integer"),
    ({"options": "batch_size=4"}, "options must be a mapping"),  # was AttributeError (.get)
    ({"options": [("batch_size", 4)]}, "options must be a mapping"),
    ({"options": 0}, "options must be a mapping"),       # was taken as no options
])
def test_tune_settings_refuse_values_of_another_type(kw, needle):
    """TuneSettings: a value of the wrong type is InvalidInputError naming the field."""
    from search.session import TuneSettings
    with pytest.raises(InvalidInputError, match=needle):
        TuneSettings(**kw)


def test_tune_settings_take_numpy_integers():
    """A numpy budget, patience and seed are integers (the limits are checked on them)."""
    from search.session import TuneSettings
    s = TuneSettings(strategy="random", budget=np.int64(4), patience=np.int32(2), seed=np.int64(1))
    assert (s.budget, s.patience, s.seed) == (4, 2, 1)
