"""Tests of zero-shot tuning: history model ranking, top-K measurement, NDCG@K."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from iobound.errors import InvalidInputError
from search.db import Measurement, Workload
from search.measure.base import MeasureRecord
from search.zero_shot import (ZeroShotOptions, history_ranking, measure_top, ndcg_at_k,
                              recorded_relevance, zero_shot)


def _history(space, device, scale, skip=()):
    w = Workload("synth_kernel", [64, 64], space.params)
    out = []
    for e in space.cache.entries:
        cfg = {p: e[p] for p in space.params}  # an entry's time is no parameter: not a config
        if isinstance(e["time"], str) or space.index(cfg) in skip:
            continue
        out.append(Measurement(w, device, "t", MeasureRecord.ok(cfg, time_ms=e["time"] * scale)))
    return out


def test_history_of_the_same_landscape_finds_the_optimum(synth_space, synth_measurer, synth_optimum):
    """History from a device 3x slower with the same landscape ranks the optimum first."""
    res = zero_shot(synth_space, synth_measurer, _history(synth_space, "slow", 3.0),
                    ZeroShotOptions(k=5))
    assert res.best[1].time_ms == synth_optimum and len(res.measured) == 5
    assert 0.9 <= res.ndcg <= 1.0


def test_model_ranks_configurations_it_never_saw(synth_space, synth_measurer, synth_optimum):
    """The optimum missing from history is still among the top K the model picks."""
    opt = next(i for i in range(len(synth_space))
               if synth_measurer.measure([synth_space.get(i)])[0].time_ms == synth_optimum)
    res = zero_shot(synth_space, synth_measurer, _history(synth_space, "other", 2.0, skip={opt}),
                    ZeroShotOptions(k=10))
    assert opt in res.ranked[:10]


def test_one_ranking_serves_every_k_as_zero_shot_would(synth_space, synth_measurer):
    """measure_top over one ranking gives, for every K, what zero_shot(K) gives, and its
    best is the best of the ranking's first K."""
    hist = _history(synth_space, "other", 2.0)
    ranking = history_ranking(synth_space, hist, seed=3)
    for k in (1, 4, 10, 25):
        mine, theirs = measure_top(synth_space, synth_measurer, ranking, k), zero_shot(
            synth_space, synth_measurer, hist, ZeroShotOptions(k=k), seed=3)
        assert (mine.ranked, mine.ndcg, mine.history_used) == (theirs.ranked, theirs.ndcg,
                                                               theirs.history_used)
        assert [(i, r.time_ms) for i, r in mine.measured] == [(i, r.time_ms) for i, r in theirs.measured]
        assert mine.best[0] == theirs.best[0]
        assert [i for i, _ in mine.measured] == list(ranking[0][:k])
        assert mine.best[1].time_ms == min(r.time_ms for _, r in mine.measured if r.is_ok)
    with pytest.raises(InvalidInputError, match="k=0"):
        measure_top(synth_space, synth_measurer, ranking, 0)


def test_no_history_in_the_space_is_an_error(synth_space, synth_measurer):
    """Zero-shot without a single usable record says so."""
    w = Workload("synth_kernel", [64, 64], synth_space.params)
    alien = [Measurement(w, "d", "t", MeasureRecord.ok({"bx": 3, "by": 3, "tile": 9, "shm": 7},
                                                       time_ms=1.0))]
    with pytest.raises(ValueError, match="no record is a configuration"):
        zero_shot(synth_space, synth_measurer, alien)


def test_recorded_relevance_is_one_at_the_optimum(synth_space, synth_optimum):
    """Relevance: 1 at the optimum, 0 for failures, in between otherwise."""
    rel = recorded_relevance(synth_space)
    assert rel.max() == 1.0 and rel.min() == 0.0 and len(rel) == len(synth_space)


@given(st.lists(st.floats(0, 1), min_size=1, max_size=30), st.integers(1, 40), st.randoms())
def test_ndcg_is_in_unit_interval_and_one_for_the_ideal_order(rel, k, rnd):
    """NDCG@K of any order lies in [0, 1]; ranking by the truth itself gives 1."""
    rel = np.array(rel)
    pred = np.array([rnd.random() for _ in rel])
    assert 0.0 <= ndcg_at_k(pred, rel, k) <= 1.0 + 1e-12
    if rel.max() > 0:
        assert ndcg_at_k(-rel, rel, k) == pytest.approx(1.0)


@given(st.lists(st.floats(0, 1), min_size=1, max_size=30), st.data())
def test_ndcg_is_in_unit_interval_for_any_valid_scores(rel, data):
    """Any finite or infinite predicted costs (ties too) and any k >= 1: NDCG@K in [0, 1]."""
    pred = data.draw(st.lists(st.floats(allow_nan=False), min_size=len(rel), max_size=len(rel)))
    k = data.draw(st.integers(1, 2 * len(rel)))
    assert 0.0 <= ndcg_at_k(np.array(pred), np.array(rel), k) <= 1.0 + 1e-12


@pytest.mark.parametrize("k", [0, -1, -2, -5, 2.5, float("nan"), True, "3", None])
def test_ndcg_refuses_a_k_that_is_no_whole_number_from_1(k):
    """k must be an int >= 1; the error names it and the value."""
    with pytest.raises(InvalidInputError, match=r"^k"):
        ndcg_at_k(np.array([1.0, 2.0]), np.array([1.0, 0.5]), k)


@pytest.mark.parametrize("pred, rel", [([1.0, 2.0, 3.0], [1.0, 0.5]), ([1.0], [1.0, 0.5]),
                                       ([], [1.0]), ([[1.0, 2.0]], [[1.0, 0.5]])])
def test_ndcg_refuses_predicted_and_relevance_of_other_lengths(pred, rel):
    """One predicted cost per relevance, both flat: else an error with both lengths."""
    with pytest.raises(InvalidInputError, match="predicted"):
        ndcg_at_k(np.array(pred), np.array(rel), 1)


@pytest.mark.parametrize("bad", [-0.5, float("nan"), float("inf"), -float("inf"), 1.5])
def test_ndcg_refuses_relevance_outside_0_1(bad):
    """Relevance is optimum / time: finite, in [0, 1] (negative, NaN, inf, > 1 refused)."""
    with pytest.raises(InvalidInputError, match="relevance"):
        ndcg_at_k(np.array([1.0, 2.0, 3.0]), np.array([1.0, bad, 0.2]), 2)


def test_ndcg_refuses_nan_predicted_costs():
    """A NaN predicted cost has no place in the order."""
    with pytest.raises(InvalidInputError, match="predicted"):
        ndcg_at_k(np.array([1.0, float("nan")]), np.array([1.0, 0.5]), 2)


class _ZeroTimeFirst:
    """A measurer wrapper that reports 0 ms for the first configuration it measures (a
    broken timer), as a live tune may receive it."""

    def __init__(self, inner):
        self.inner, self.name = inner, "zero-first"

    def measure(self, configs):
        recs = self.inner.measure(configs)
        return [MeasureRecord.ok(recs[0].config, time_ms=0.0)] + list(recs[1:])


def test_a_time_that_is_no_measurement_is_never_zero_shots_best(synth_space, synth_measurer):
    """zero-shot applies the tuner's rule to what it measures: a 0 ms time is an invalid
    record naming the number, and the best is the best real time of the others."""
    ranking = history_ranking(synth_space, _history(synth_space, "other", 2.0), seed=1)
    res = measure_top(synth_space, _ZeroTimeFirst(synth_measurer), ranking, 5)
    first = res.measured[0][1]
    assert not first.is_ok and "time 0.0 is not a positive finite number" in first.error
    honest = [synth_measurer.measure([synth_space.get(i)])[0].time_ms for i, _ in res.measured[1:]]
    assert res.best[0] != res.measured[0][0] and res.best[1].time_ms == min(honest)
