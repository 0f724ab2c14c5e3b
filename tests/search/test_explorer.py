"""Tests of the random-walk explorer: valid, distinct, unmeasured proposals, and quality."""

import numpy as np
from hypothesis import given, strategies as st

from search.cost_model import XGBCostModel, XGBOptions
from search.explorer import Explorer, ExplorerOptions
from search.space import GridSpace

SPACE = GridSpace({"a": list(range(10)), "b": list(range(10)), "c": [0, 1, 2]})
X = SPACE.features(range(len(SPACE)))
COST = 1.0 + (X[:, 0] - 6) ** 2 + (X[:, 1] - 2) ** 2 + X[:, 2]
MODEL = XGBCostModel(XGBOptions(n_estimators=60), seed=0).fit(X, COST)
SMALL = ExplorerOptions(n_walkers=8, max_steps=10)


@given(st.sets(st.integers(0, len(SPACE) - 1), max_size=280), st.integers(1, 40),
       st.integers(0, 2**31))
def test_never_returns_excluded_invalid_or_duplicate(exclude, n, seed):
    """Proposals are distinct members of the space outside exclude, as many as possible."""
    got = Explorer(SMALL).propose(MODEL, SPACE, n, exclude, np.random.default_rng(seed))
    assert len(got) == len(set(got)) == min(n, len(SPACE) - len(exclude))
    assert all(0 <= i < len(SPACE) for i in got) and not set(got) & exclude


def test_finds_the_model_optimum():
    """With a good model the first proposal is the true optimum."""
    got = Explorer().propose(MODEL, SPACE, 5, set(), np.random.default_rng(0))
    assert SPACE.get(got[0]) == {"a": 6, "b": 2, "c": 0}


def test_excluding_the_optimum_gives_the_runner_up():
    """When the optimum is measured already, a next-best neighbour comes first."""
    opt = SPACE.index({"a": 6, "b": 2, "c": 0})
    got = Explorer().propose(MODEL, SPACE, 3, {opt}, np.random.default_rng(0), best=[opt])
    assert COST[got[0]] == sorted(COST)[1]


def test_reproducible_for_a_seed():
    """Same rng seed, same proposals."""
    a = Explorer().propose(MODEL, SPACE, 6, set(), np.random.default_rng(5))
    b = Explorer().propose(MODEL, SPACE, 6, set(), np.random.default_rng(5))
    assert a == b


def test_one_model_call_per_step():
    """All walkers' candidates of a step are scored in a single predict call."""
    calls = []

    class Counting:
        def predict(self, feats):
            calls.append(len(feats))
            return MODEL.predict(feats)

    ex = Explorer(ExplorerOptions(n_walkers=16, max_steps=5, patience=100))
    ex.propose(Counting(), SPACE, 4, set(), np.random.default_rng(0))
    assert len(calls) <= 1 + ex.last_steps and max(calls) > 16
