"""Hints: a model-based strategy's cost model learns from measurements it did not ask for
(a history round's, ``GuidedOptions(share="hints")``) only where they are no better than
its own best, and nothing else of the strategy sees them."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from search.measure.base import MeasureRecord
from search.grid_space import GridSpace
from search.strategies import make_strategy
from search.strategies.model_based import ModelBasedStrategy
from search.transfer import GuidedOptions, HistoryPrior, with_history
from search.tuner import tune

from tests.search.test_transfer import SPACE, Bowl, _bowl, _hist

costs = st.one_of(st.floats(0.1, 100.0), st.just(math.inf))


def _record(space, i: int, cost: float) -> MeasureRecord:
    if math.isinf(cost):
        return MeasureRecord.failed(space.get(i), "compile_error", "no")
    return MeasureRecord.ok(space.get(i), time_ms=cost)


@settings(max_examples=60, deadline=None)
@given(own=st.dictionaries(st.integers(0, 39), costs, max_size=10),
       hints=st.dictionaries(st.integers(0, 39), costs, max_size=10))
def test_the_model_learns_from_hints_no_better_than_its_own_best(own, hints):
    """The training set is every own observation plus the hints whose cost is at least
    the best finite own cost (none before there is one); an own observation wins over a
    hint of the same configuration; the strategy's observations are its own only."""
    space = GridSpace({"a": list(range(40))})
    s = ModelBasedStrategy(space, rng=np.random.default_rng(0))
    s.hint(list(hints), [_record(space, i, c) for i, c in hints.items()])
    s.tell(list(own), [_record(space, i, c) for i, c in own.items()])
    finite = [c for c in own.values() if math.isfinite(c)]
    want = {i: c for i, c in hints.items() if finite and c >= min(finite)}
    want.update(own)
    assert s.training_set().cost == want
    assert s.seen.cost == own


def test_hints_train_the_model_but_start_no_walk():
    """With share='hints' the explorer's observations are the configurations it asked,
    its hints the history rounds' picks, and its model fits the hints that are no better
    than its best (here: history points at a region 4x slower than the optimum)."""
    prior = HistoryPrior.fit(SPACE, _hist("gpu0", _bowl((0, 0, 1))), seed=0)
    inner = make_strategy("explorer", SPACE, None, np.random.default_rng(3))
    s = with_history(inner, prior, GuidedOptions(share="hints"), seed=3)
    res = tune(SPACE, Bowl((7, 5, 4), local=(0, 0, 1)), s, budget=40)
    rounds = s.stats()["history"]["history_rounds"]
    first_round = {t.index for t in res.trials[:inner.batch_size]}
    hinted = set(inner.hints.cost)
    assert rounds >= 1 and first_round <= hinted and len(hinted) == rounds * inner.batch_size
    # the inner's observations are what it asked (history's picks it asked too are told
    # to it at no cost); every measurement is one or the other
    assert len(inner.seen) + len(hinted - set(inner.seen.cost)) == len(res.trials) == 40
    best_own = min(inner.seen.cost.values())
    trained = inner.training_set().cost
    assert all(trained[i] >= best_own for i in hinted - set(inner.seen.cost) if i in trained)
    assert set(trained) >= set(inner.seen.cost)


def test_isolated_gives_no_hints():
    prior = HistoryPrior.fit(SPACE, _hist("gpu0", _bowl((0, 0, 1))), seed=0)
    inner = make_strategy("explorer", SPACE, None, np.random.default_rng(3))
    s = with_history(inner, prior, GuidedOptions(share="isolated"), seed=3)
    tune(SPACE, Bowl((7, 5, 4)), s, budget=24)
    assert len(inner.hints) == 0
