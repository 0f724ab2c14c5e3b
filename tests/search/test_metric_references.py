"""The benchmark metrics and the guided GA's filtering metric against plain reference
computations: NDCG@K as its textbook formula (gain 2**rel - 1, discount 1 / log2(rank + 1),
divided by the ideal order's), the recorded relevance as optimum / time (0 for failures),
and Mu et al.'s filtering metric (relative throughput times match score squared, averaged
over the records of a configuration)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from search.db import Measurement, Workload
from search.kt_cache import KtCache
from search.measure.base import MeasureRecord
from search.grid_space import GridSpace
from search.replay_space import ReplaySpace
from search.strategies.gga_history import filter_history, match_score
from search.zero_shot import ndcg_at_k, recorded_relevance


def _gain(rel):
    return math.expm1(rel * math.log(2.0))  # 2**rel - 1, not rounded to 0 for a tiny rel


def _reference_ndcg(predicted, relevance, k):
    order = sorted(range(len(predicted)), key=lambda i: predicted[i])  # stable, lower first
    k = min(k, len(relevance))
    dcg = sum(_gain(relevance[i]) / math.log2(r + 2) for r, i in enumerate(order[:k]))
    ideal = sum(_gain(g) / math.log2(r + 2)
                for r, g in enumerate(sorted(relevance, reverse=True)[:k]))
    return dcg / ideal if ideal > 0 else 0.0


unit = st.floats(0.0, 1.0, allow_nan=False)


@settings(deadline=None, max_examples=60)
@given(st.lists(st.tuples(st.integers(0, 5).map(float), unit), min_size=1, max_size=12),
       st.integers(1, 14))
def test_ndcg_is_the_textbook_formula(rows, k):
    """Ties in the predicted cost keep the items' order, as a stable sort does."""
    pred, rel = [p for p, _ in rows], [r for _, r in rows]
    assert ndcg_at_k(np.array(pred), np.array(rel), k) == pytest.approx(
        _reference_ndcg(pred, rel, k), rel=1e-9, abs=1e-12)


def test_ndcg_of_a_known_ranking():
    """By hand: the best item ranked second scores 1/log2(3) at K=2; at K=1 the first
    ranked item scores its gain over the best gain (1)."""
    rel = [0.0, 1.0]  # gains 0 and 1
    assert ndcg_at_k(np.array([1.0, 2.0]), np.array(rel), 2) == pytest.approx(1 / math.log2(3))
    assert ndcg_at_k(np.array([1.0, 2.0]), np.array([0.5, 1.0]), 1) == pytest.approx(
        (2 ** 0.5 - 1) / 1.0)


times = st.one_of(st.floats(0.1, 100.0), st.sampled_from(["InvalidConfig", "RuntimeFailedConfig"]))


@settings(deadline=None, max_examples=40)
@given(st.lists(times, min_size=1, max_size=10))
def test_recorded_relevance_is_optimum_over_time_and_zero_for_failures(ts):
    cache = KtCache(tune_params={"x": list(range(len(ts)))},
                    entries=[{"x": x, "time": t} for x, t in enumerate(ts)])
    ok = [t for t in ts if not isinstance(t, str)]
    got = recorded_relevance(ReplaySpace(cache))
    if not ok:
        assert got is None
        return
    want = [min(ok) / t if not isinstance(t, str) else 0.0 for t in ts]
    assert got.tolist() == pytest.approx(want)


problems = st.sampled_from([[8], [12], [16], [6], [64]])


@settings(deadline=None, max_examples=40)
@given(st.lists(st.tuples(st.sampled_from(["a", "b"]), problems, st.integers(0, 4),
                          st.floats(0.1, 10.0)), min_size=1, max_size=15), problems)
def test_filtering_metric_is_relative_throughput_times_match_squared_averaged(rows, target):
    """Seeds ranked by the mean over a configuration's records of
    ``best of its workload and device / time * match**2`` (records matching < 0.5 and
    configurations outside the space left out), best first, ties by index."""
    space = GridSpace({"x": [0, 1, 2, 3]})  # x = 4 is outside: gamma 0
    hist = [Measurement(Workload("k", p, ("x",)), d, "t", MeasureRecord.ok({"x": x}, time_ms=t))
            for d, p, x, t in rows]
    best = {}
    for d, p, _, t in rows:
        best[(d, str(p))] = min(best.get((d, str(p)), t), t)
    metrics: dict = {}
    for d, p, x, t in rows:
        s = match_score(p, target)
        if s >= 0.5 and x < 4:
            metrics.setdefault(x, []).append(best[(d, str(p))] / t * s ** 2)
    want = sorted(((sum(v) / len(v), x) for x, v in metrics.items()), key=lambda m: (-m[0], m[1]))
    got = filter_history(space, hist, target_problem=target)
    assert [i for i, _ in got.seeds] == [x for _, x in want]
    assert [m for _, m in got.seeds] == pytest.approx([m for m, _ in want])
    assert got.usable == sum(len(v) for v in metrics.values())
