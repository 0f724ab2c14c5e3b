"""Tests of the model optimizers: valid, distinct, unmeasured proposals, and quality."""

import functools

import numpy as np
import pytest
from hypothesis import given, strategies as st

from search.cost_model import XGBCostModel, XGBOptions
from search.optimizers import (AnnealOptimizer, AnnealOptions, WalkOptimizer, WalkOptions,
                               make_optimizer)
from search.grid_space import GridSpace

SPACE = GridSpace({"a": list(range(10)), "b": list(range(10)), "c": [0, 1, 2]})
X = SPACE.features(range(len(SPACE)))
COST = 1.0 + (X[:, 0] - 6) ** 2 + (X[:, 1] - 2) ** 2 + X[:, 2]


@functools.cache
def _model() -> XGBCostModel:
    """The cost model every test proposes with, trained on first use (not at import)."""
    return XGBCostModel(XGBOptions(n_estimators=60), seed=0).fit(X, COST)


SMALL = {"walk": WalkOptions(n_walkers=8, max_steps=10),
         "anneal": AnnealOptions(n_chains=8, n_iter=20)}
FULL = {"walk": WalkOptions(), "anneal": AnnealOptions(n_chains=32, n_iter=200)}


@pytest.mark.parametrize("kind", sorted(SMALL))
@given(exclude=st.sets(st.integers(0, len(SPACE) - 1), max_size=280), n=st.integers(1, 40),
       seed=st.integers(0, 2**31))
def test_never_returns_excluded_invalid_or_duplicate(kind, exclude, n, seed):
    """Proposals are distinct members of the space outside exclude, as many as possible."""
    got = make_optimizer(SMALL[kind]).propose(_model(), SPACE, n, exclude, np.random.default_rng(seed))
    assert len(got) == len(set(got)) == min(n, len(SPACE) - len(exclude))
    assert all(0 <= i < len(SPACE) for i in got) and not set(got) & exclude


@pytest.mark.parametrize("kind", sorted(FULL))
def test_finds_the_model_optimum(kind):
    """With a good model the first proposal is the true optimum."""
    got = make_optimizer(FULL[kind]).propose(_model(), SPACE, 5, set(), np.random.default_rng(0))
    assert SPACE.get(got[0]) == {"a": 6, "b": 2, "c": 0}


@pytest.mark.parametrize("kind", sorted(FULL))
def test_excluding_the_optimum_gives_the_runner_up(kind):
    """When the optimum is measured already, a next-best neighbour comes first."""
    opt = SPACE.index({"a": 6, "b": 2, "c": 0})
    got = make_optimizer(FULL[kind]).propose(_model(), SPACE, 3, {opt}, np.random.default_rng(0),
                                             best=[opt])
    assert COST[got[0]] == sorted(COST)[1]


@pytest.mark.parametrize("kind", sorted(SMALL))
def test_reproducible_for_a_seed(kind):
    """Same rng seed, same proposals (a fresh optimizer each time)."""
    a = make_optimizer(SMALL[kind]).propose(_model(), SPACE, 6, set(), np.random.default_rng(5))
    b = make_optimizer(SMALL[kind]).propose(_model(), SPACE, 6, set(), np.random.default_rng(5))
    assert a == b


def test_one_model_call_per_step():
    """All walkers' candidates of a step are scored in a single predict call."""
    calls = []

    class Counting:
        def predict(self, feats):
            calls.append(len(feats))
            return _model().predict(feats)

    ex = WalkOptimizer(WalkOptions(n_walkers=16, max_steps=5, patience=100))
    ex.propose(Counting(), SPACE, 4, set(), np.random.default_rng(0))
    assert len(calls) <= 1 + ex.last_steps and max(calls) > 16


def test_annealing_chains_persist_between_calls():
    """The second search starts from where the chains ended, not from new random points."""
    opt = AnnealOptimizer(AnnealOptions(n_chains=8, n_iter=30))
    opt.propose(_model(), SPACE, 4, set(), np.random.default_rng(0))
    ends = opt.points.copy()
    seen = []

    class Spy:
        def predict(self, feats):
            seen.append(feats.copy())
            return _model().predict(feats)

    opt.propose(Spy(), SPACE, 4, set(), np.random.default_rng(1))
    assert np.array_equal(seen[0], SPACE.features(ends))


def test_optimizer_rejects_foreign_options():
    """An optimizer refuses the other optimizer's options, naming both."""
    with pytest.raises(ValueError, match="WalkOptimizer takes WalkOptions, got AnnealOptions"):
        WalkOptimizer(AnnealOptions())
