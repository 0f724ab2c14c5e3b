"""Exploration when rounds stop improving: the share, the tracker, the candidate sources."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from search.grid_space import GridSpace
from search.strategies.model_based import ModelBasedOptions, ModelBasedStrategy
from search.strategies.stall import (SOURCES, StallOptions, StallTracker, best_predicted, elite_candidates,
                                     far_candidates)

GRID = GridSpace({"a": list(range(8)), "b": list(range(6)), "c": [0, 1, 2]})


@given(st.floats(0, 1), st.floats(0, 1), st.integers(1, 5), st.integers(0, 40))
def test_share_grows_with_stalled_rounds_up_to_the_cap(rate, cap, grace, rounds):
    """The share is 0 before the grace, never above the cap and never falls as rounds pass."""
    o = StallOptions(rate=rate, cap=cap, grace=grace)
    assert 0.0 <= o.share(rounds) <= cap
    assert o.share(rounds) <= o.share(rounds + 1)
    assert o.share(grace - 1) == 0.0


def test_bad_options_are_rejected_by_name():
    """An unknown source is refused with the allowed ones; a cap above 1 too."""
    with pytest.raises(ValueError, match="elite, far"):
        StallOptions(source="tabu")
    with pytest.raises(ValueError, match="cap"):
        StallOptions(cap=1.5)
    with pytest.raises(ValueError, match="plan_size"):
        ModelBasedOptions(stall=StallOptions(), plan_size=16)


def test_tracker_resets_on_improvement_only():
    """Equal or worse rounds count; a better one resets; a failed round (inf) counts."""
    t = StallTracker()
    assert [t.update(c) for c in (3.0, 3.0, float("inf"), 2.0, 2.5)] == [0, 1, 2, 0, 1]


@given(st.integers(0, len(GRID) - 1), st.integers(0, 2**32 - 1))
def test_elite_candidates_stay_within_two_changes(i, seed):
    """Mutations of one configuration differ from it in at most two parameters (a second
    step may come back), and some in two."""
    base = GRID.get(i)
    dist = [sum(GRID.get(j)[p] != base[p] for p in base)
            for j in elite_candidates(GRID, [i], np.random.default_rng(seed))]
    assert max(dist) == 2


@given(st.sets(st.integers(0, len(GRID) - 1), min_size=1, max_size=6), st.integers(0, 2**32 - 1))
def test_far_candidates_keep_their_distance(measured, seed):
    """Every far candidate is at Hamming distance >= min_dist from each measured one,
    unless none of the pool was (then the pool is returned)."""
    measured = sorted(measured)
    cand = far_candidates(GRID, measured, np.random.default_rng(seed), n_pool=64, min_dist=2)
    dist = [min(sum(GRID.get(j)[p] != GRID.get(m)[p] for p in GRID.params) for m in measured)
            for j in cand]
    assert cand and (min(dist) >= 2 or len(cand) == 64)


def test_best_predicted_ranks_and_excludes():
    """The lowest predictions first, excluded and repeated candidates dropped."""
    class ByA:
        def predict(self, X):
            return X[:, 0]
    cand = [GRID.index({"a": a, "b": 1, "c": 0}) for a in (5, 2, 7, 2, 0)]
    got = best_predicted(ByA(), GRID, cand, 2, exclude={cand[-1]})
    assert [GRID.get(i)["a"] for i in got] == [2, 5]


@pytest.mark.parametrize("source", SOURCES)
def test_strategy_explores_after_stalled_rounds(source):
    """On a flat landscape every round stalls: the stall source fills part of later batches,
    and asks stay distinct and new."""
    from search.measure.base import MeasureRecord

    o = ModelBasedOptions(stall=StallOptions(rate=0.5, cap=1.0, source=source))
    s = ModelBasedStrategy(GRID, o, rng=np.random.default_rng(0))
    asked: set[int] = set()
    for _ in range(12):
        got = s.ask(4)
        assert len(set(got)) == len(got) and not asked & set(got)
        asked.update(got)
        s.tell(got, [MeasureRecord.ok(GRID.get(i), time_ms=1.0 + (i == 0)) for i in got])
    assert s.stalled.rounds >= 10 and s.stats()["explored"] > 0


def test_stall_options_from_a_dict_for_the_explorer():
    """The explorer takes stall options as a plain dict (CLI/JSON); unknown keys are refused."""
    from search.strategies import make_options

    o = make_options("explorer", {"stall": {"source": "sweep", "grace": 3}})
    assert o.stall == StallOptions(source="sweep", grace=3)
    assert make_options("explorer").stall is None  # off by default
    with pytest.raises(ValueError, match="allowed: rate, cap, grace"):
        make_options("explorer", {"stall": {"graze": 3}})
