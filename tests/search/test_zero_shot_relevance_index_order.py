"""NDCG@K on a recorded space is computed against the relevance of the configuration at
each *space index*. ReplaySpace numbers configurations in Kernel Tuner's enumeration order
(value positions), not the file's entry order (search/replay_space.py), so a cache whose
entries are listed in another order (the shipped convolution_A6000 is one) must still give
every index its own optimum / time. Reference: the time ReplayMeasurer measures for
space.get(i), and NDCG@K written out by hand (gain 2**rel - 1, discount log2(rank + 1))."""

from __future__ import annotations

import math

import numpy as np
import pytest

from search.kt_cache import KtCache
from search.measure.replay import ReplayMeasurer
from search.replay_space import ReplaySpace
from search.zero_shot import measure_top, recorded_relevance

TIMES = {0: 4.0, 1: 1.0, 2: 2.0, 3: "RuntimeFailedConfig", 4: 8.0, 5: 1.6}


def _space(order):
    cache = KtCache(tune_params={"x": list(range(6))},
                    entries=[{"x": x, "time": TIMES[x]} for x in order])
    return ReplaySpace(cache)


def _true_relevance(space):
    recs = ReplayMeasurer(space.cache).measure([space.get(i) for i in range(len(space))])
    t = np.array([r.time_ms if r.is_ok else np.inf for r in recs])
    return np.where(np.isfinite(t), t[np.isfinite(t)].min() / t, 0.0)


@pytest.mark.parametrize("order", [[0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0], [2, 5, 0, 3, 1, 4]])
def test_recorded_relevance_follows_the_space_index(order):
    space = _space(order)
    assert recorded_relevance(space).tolist() == pytest.approx(_true_relevance(space).tolist())


@pytest.mark.parametrize("k", [1, 2, 3, 6])
def test_measure_top_ndcg_is_that_of_the_configurations_it_ranked(k):
    space = _space([5, 4, 3, 2, 1, 0])
    rel = _true_relevance(space)
    ranked = np.array([4, 0, 2, 1, 5, 3])  # a ranking by space index, worst-ish first
    scores = np.arange(len(ranked), dtype=float)
    gain = [2 ** r - 1 for r in rel]
    dcg = sum(gain[i] / math.log2(p + 2) for p, i in enumerate(ranked[:k]))
    ideal = sum(g / math.log2(p + 2) for p, g in enumerate(sorted(gain, reverse=True)[:k]))
    res = measure_top(space, ReplayMeasurer(space.cache), (ranked, scores, 0), k)
    assert res.ndcg == pytest.approx(dcg / ideal)
