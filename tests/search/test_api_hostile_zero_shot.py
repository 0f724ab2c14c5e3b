"""Hostile calls of zero-shot's measure_top and ndcg_at_k (search/zero_shot.py): a ranking
that is none, a measurer that is none, repeated indices or costs that are no numbers are an
InvalidInputError naming the argument, before anything is measured.

Reference: measure_top's doc (a history_ranking of the space: each configuration once, a
score each) and the NDCG@K definition of the module doc.
"""

from __future__ import annotations

import numpy as np
import pytest

from iobound.errors import InvalidInputError
from search.kt_cache import KtCache
from search.measure.replay import ReplayMeasurer
from search.replay_space import ReplaySpace
from search.zero_shot import measure_top, ndcg_at_k


class _Counting(ReplayMeasurer):
    def __init__(self, cache):
        super().__init__(cache)
        self.asked = 0

    def measure(self, configs):
        self.asked += len(configs)
        return super().measure(configs)


@pytest.fixture
def replay():
    cache = KtCache({"x": list(range(12))},
                    [{"x": x, "time": 1.0 + abs(x - 3)} for x in range(12)])
    return ReplaySpace(cache), _Counting(cache)


@pytest.mark.parametrize("ranking, words", [
    (([], [], 0), "non-empty"), ((np.array([3, 3, 3]), np.array([1.0, 2.0, 3.0]), 0), "once"),
    ((np.array([3, 4, 5]), ["a", "b", "c"], 0), "scores"),
    ((np.array([3, 4, 5]), np.array([1.0, 2.0]), 0), "one per index")])
def test_measure_top_refuses_a_ranking_that_is_none_before_measuring(replay, ranking, words):
    space, measurer = replay
    with pytest.raises(InvalidInputError, match=words):
        measure_top(space, measurer, ranking, 3)
    assert measurer.asked == 0


def test_measure_top_refuses_a_measurer_that_is_none(replay):
    space, _ = replay
    with pytest.raises(InvalidInputError, match="measurer"):
        measure_top(space, None, (np.arange(12), np.arange(12.0), 0), 1)


def test_measure_top_still_measures_a_ranking_of_distinct_indices(replay):
    space, measurer = replay
    res = measure_top(space, measurer, (np.array([5, 3, 4]), np.array([1.0, 2.0, 3.0]), 0), 3)
    assert res.best[0] == 3 and measurer.asked == 3 and res.ndcg < 1.0


@pytest.mark.parametrize("predicted", [["a"], [1j], np.array([1j]), [[1.0], [2.0, 3.0]], None])
def test_ndcg_refuses_costs_that_are_no_real_numbers(predicted):
    with pytest.raises(InvalidInputError, match="predicted"):
        ndcg_at_k(predicted, [1.0], 1)
    with pytest.raises(InvalidInputError, match="relevance"):
        ndcg_at_k([1.0], predicted, 1)
