"""The explorer's endgame: the budget's last share completes the neighbourhoods of the best
configurations of distinct regions; nothing before it changes, and without a budget there
is none."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iobound.errors import InvalidInputError
from search.measure.base import MeasureRecord, Measurer
from search.grid_space import GridSpace
from search.strategies import make_strategy
from search.strategies.stall import spread_elites
from search.tuner import tune

GRID = GridSpace({"a": list(range(8)), "b": list(range(8)), "c": list(range(6))})


class Rugged(Measurer):
    """A bowl with a seeded ripple, so runs differ by seed and stall somewhere."""

    name = "rugged"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=1.0 + (c["a"] - 6) ** 2 + abs(c["b"] - 2) * 3
                                 + ((c["a"] * 7 + c["b"] * 3 + c["c"] * 5) % 4))
                for c in configs]


def _hamming(i: int, j: int) -> int:
    a, b = GRID.get(i), GRID.get(j)
    return sum(a[p] != b[p] for p in a)


def _elite_before(trials, k, n, spread=2):
    """The ``n`` best of the first ``k`` trials (lowest time, ties by index), each at least
    ``spread`` changes from every better one taken."""
    out: list[int] = []
    for t in sorted(trials[:k], key=lambda t: (t.record.cost, t.index)):
        if len(out) < n and all(_hamming(t.index, e) >= spread for e in out):
            out.append(t.index)
    return out


#: a light explorer (few walkers, small models): the property does not depend on its strength
LIGHT = {"optimizer": {"n_walkers": 16, "max_steps": 20}, "model": {"n_estimators": 30}}


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([24, 40, 60]), st.sampled_from([0.15, 0.25, 0.5]))
def test_the_last_share_is_neighbours_of_the_best_measured(seed, budget, share):
    """A round that reaches into the budget's last ``share`` measures unmeasured one-change
    neighbours of the 8 spread elites measured before it (the best, each two changes or
    more from the better ones), as many as are left (up to the batch); every earlier
    round is what the explorer without the endgame asks."""
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
    beyond = make_strategy("explorer", GRID, LIGHT, np.random.default_rng(0))
    res = tune(GRID, Rugged(), beyond, budget=len(GRID) + 50)
    # the horizon is what the run measures: a budget past the space ends with the space
    assert beyond.horizon == len(GRID) == res.evaluations
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
    with pytest.raises(InvalidInputError, match="endgame_spread"):
        make_strategy("explorer", GRID, {"endgame_spread": 0}, np.random.default_rng(0))


@settings(max_examples=40, deadline=None)
@given(st.permutations(range(len(GRID))).map(lambda p: p[:60]), st.integers(1, 10),
       st.integers(1, 3))
def test_spread_elites_are_the_greedy_best_of_distinct_regions(ranked, k, d):
    """Each taken elite is ``d`` changes or more from every better taken one; a skipped
    configuration ranked before the last taken is within ``d - 1`` changes of a better
    taken one; fewer than ``k`` only when the list ran out."""
    got = spread_elites(GRID, ranked, k, d)
    assert len(got) <= k and got == [i for i in ranked if i in set(got)]
    for a, i in enumerate(got):
        assert all(_hamming(i, j) >= d for j in got[:a])
    last = ranked.index(got[-1])
    for i in ranked[:last]:
        if i not in got:
            better = [j for j in got if ranked.index(j) < ranked.index(i)]
            assert any(_hamming(i, j) < d for j in better)
    if len(got) < k:
        assert all(i in got or any(_hamming(i, j) < d for j in got) for i in ranked)
    if d == 1:
        assert got == list(ranked[:k])
