"""The explorer's endgame: the budget's last share completes the best configurations'
neighbourhoods; nothing before it changes, and without a budget there is none."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iobound.errors import InvalidInputError
from search.measure.base import MeasureRecord, Measurer
from search.space import GridSpace
from search.strategies import make_strategy
from search.tuner import tune

GRID = GridSpace({"a": list(range(8)), "b": list(range(8)), "c": list(range(6))})


class Rugged(Measurer):
    """A bowl with a seeded ripple, so runs differ by seed and stall somewhere."""

    name = "rugged"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=1.0 + (c["a"] - 6) ** 2 + abs(c["b"] - 2) * 3
                                 + ((c["a"] * 7 + c["b"] * 3 + c["c"] * 5) % 4))
                for c in configs]


def _elite_before(trials, k, n):
    """The ``n`` best of the first ``k`` trials (lowest time, ties by index)."""
    return [t.index for t in sorted(trials[:k], key=lambda t: (t.record.cost, t.index))[:n]]


#: a light explorer (few walkers, small models): the property does not depend on its strength
LIGHT = {"optimizer": {"n_walkers": 16, "max_steps": 20}, "model": {"n_estimators": 30}}


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([24, 40, 60]), st.sampled_from([0.15, 0.25, 0.5]))
def test_the_last_share_is_neighbours_of_the_best_measured(seed, budget, share):
    """A round that reaches into the budget's last ``share`` measures unmeasured one-change
    neighbours of the 8 best measured before it, as many as are left (up to the batch);
    every earlier round is what the explorer without the endgame asks."""
    res = tune(GRID, Rugged(), "explorer", budget=budget, seed=seed,
               options={**LIGHT, "endgame": share})
    plain = tune(GRID, Rugged(), "explorer", budget=budget, seed=seed, options={**LIGHT, "endgame": 0})
    start = next(k for k in range(0, budget, 4) if k + 4 > (1 - share) * budget)
    assert [t.index for t in res.trials[:start]] == [t.index for t in plain.trials[:start]]
    swept = 0
    for k in range(start, budget, 4):
        measured = {t.index for t in res.trials[:k]}
        near = {j for e in _elite_before(res.trials, k, 8) for j in GRID.neighbours(e)} - measured
        batch = [t.index for t in res.trials[k:k + 4]]
        n_near = min(len(batch), len(near))
        assert set(batch[:n_near]) <= near  # the sweep first, then the walks fill the batch
        swept += n_near
    assert res.strategy_stats["swept"] == swept > 0
    assert plain.strategy_stats["swept"] == 0


def test_tune_tells_the_strategy_its_budget_and_no_budget_means_no_endgame():
    s = make_strategy("explorer", GRID, None, np.random.default_rng(0))
    tune(GRID, Rugged(), s, budget=20)
    assert s.horizon == 20
    free = make_strategy("explorer", GRID, None, np.random.default_rng(0))
    for _ in range(10):  # ask/tell by hand: no horizon
        got = free.ask(4)
        free.tell(got, Rugged().measure([GRID.get(i) for i in got]))
    assert free.horizon is None and free.stats()["swept"] == 0


def test_sa_has_no_endgame_and_bad_shares_are_refused():
    assert make_strategy("sa", GRID, None, np.random.default_rng(0)).options.endgame == 0
    with pytest.raises(InvalidInputError, match="endgame"):
        make_strategy("explorer", GRID, {"endgame": 1.0}, np.random.default_rng(0))
    with pytest.raises(InvalidInputError, match="endgame_elite"):
        make_strategy("explorer", GRID, {"endgame_elite": 0}, np.random.default_rng(0))
