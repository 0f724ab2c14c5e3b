"""The stall exploration's share and candidate sources (:mod:`search.strategies.stall`)
against brute-force references.

References: the share is the documented ``rate`` per stalled round from round ``grace``
on, capped (``min(cap, rate * (rounds - grace + 1))``, 0 before); far candidates are the
drawn pool's configurations whose Hamming distance to every measured one, counted
parameter by parameter, is at least ``min_dist``; the sweep takes the elites' unmeasured
one-change neighbours in elite order, each elite's by the model's prediction; the spread
elites are the greedy scan of the ranking (each at least ``min_dist`` changes from every
one taken before); ``elite_candidates`` are, per elite, its neighbours each followed by
``second_hops`` of their own, then the crossovers of two elites.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from search.grid_space import GridSpace
from search.strategies.stall import (StallOptions, elite_candidates, far_candidates,
                                     spread_elites, stall_candidates, sweep_candidates)

#: 400 configurations: a pool of 300 spans two of far_candidates' blocks of 256.
BIG = GridSpace({"a": list(range(10)), "b": list(range(8)), "c": list(range(5))})
LINE = GridSpace({"a": list(range(12))})


class Linear:
    """A model predicting a fixed linear function of the features (no fit)."""

    def __init__(self, w):
        self.w = np.asarray(w, dtype=float)

    def predict(self, X):
        return np.asarray(X, dtype=float) @ self.w


def hamming(space, i, j) -> int:
    a, b = space.get(i), space.get(j)
    return sum(a[p] != b[p] for p in space.params)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]), st.sampled_from([0.0, 0.3, 0.5, 1.0]),
       st.integers(1, 5), st.integers(0, 12))
def test_share_is_rate_per_stalled_round_from_the_grace_on_capped(rate, cap, grace, rounds):
    want = 0.0 if rounds < grace else min(cap, rate * (rounds - grace + 1))
    assert StallOptions(rate=rate, cap=cap, grace=grace).share(rounds) == pytest.approx(want)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, len(BIG) - 1), min_size=1, max_size=8, unique=True),
       st.integers(1, 3), st.integers(0, 2**32 - 1))
def test_far_candidates_are_the_pool_configs_far_from_every_measured_one(measured, min_dist, seed):
    pool = BIG.sample(300, np.random.default_rng(seed))  # what far_candidates draws first
    far = [i for i in pool if min(hamming(BIG, i, m) for m in measured) >= min_dist]
    got = far_candidates(BIG, measured, np.random.default_rng(seed), 300, min_dist)
    assert got == (far or pool)


def test_far_candidates_return_the_whole_pool_when_none_is_far_or_nothing_was_measured():
    everything = list(range(len(LINE)))  # on a line every config is one change from any other
    assert sorted(far_candidates(LINE, [0], np.random.default_rng(0), 5, 2)) == \
        sorted(LINE.sample(5, np.random.default_rng(0)))
    assert far_candidates(BIG, [], np.random.default_rng(3), 7, 2) == BIG.sample(
        7, np.random.default_rng(3))
    assert sorted(far_candidates(LINE, everything, np.random.default_rng(0), 12, 1)) == everything


def sweep_reference(model, space, elite, k, exclude):
    out = []
    for e in elite:
        nbs = [n for n in dict.fromkeys(space.neighbours(e)) if n not in exclude and n not in out]
        if nbs:
            pred = model.predict(space.features(nbs))
            out += [nbs[j] for j in np.argsort(pred, kind="stable")]
    return out[:k]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, len(BIG) - 1), min_size=1, max_size=5, unique=True),
       st.integers(0, 12), st.lists(st.integers(0, len(BIG) - 1), max_size=10),
       st.tuples(st.integers(-3, 3), st.integers(-3, 3), st.integers(-3, 3)))
def test_sweep_takes_the_elites_unmeasured_neighbours_in_elite_order(elite, k, measured, w):
    exclude = set(measured) | set(elite)
    model = Linear(w)
    got = sweep_candidates(model, BIG, elite, k, exclude)
    assert got == sweep_reference(model, BIG, elite, k, exclude)


def test_sweep_never_repeats_a_neighbour_two_elites_share():
    """3 and 5 on a line share the neighbour 4: it is taken once."""
    got = sweep_candidates(Linear([1.0]), LINE, [3, 5], 4, exclude={3, 5})
    assert got == [2, 4, 6]


def spread_reference(space, ranked, k, min_dist, scan):
    taken = []
    for i in ranked[:scan]:
        if len(taken) < k and all(hamming(space, i, t) >= min_dist for t in taken):
            taken.append(i)
    return taken


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, len(BIG) - 1), max_size=30, unique=True), st.integers(1, 6),
       st.integers(1, 3), st.integers(1, 40))
def test_spread_elites_is_the_greedy_scan_of_the_ranking(ranked, k, min_dist, scan):
    got = spread_elites(BIG, ranked, k, min_dist, scan)
    assert got == spread_reference(BIG, ranked, k, min_dist, scan)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, len(BIG) - 1), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_one_elite_gives_each_neighbour_then_its_second_hops(e, hops, seed):
    """No crossover with one elite: exactly ``1 + min(hops, |N(nb)|)`` per neighbour ``nb``,
    the neighbour first and then distinct neighbours of it."""
    got = elite_candidates(BIG, [e], np.random.default_rng(seed), second_hops=hops)
    pos = 0
    for nb in BIG.neighbours(e):
        n2 = BIG.neighbours(nb)
        m = min(hops, len(n2))
        assert got[pos] == nb
        second = got[pos + 1:pos + 1 + m]
        assert len(set(second)) == m and set(second) <= set(n2)
        pos += 1 + m
    assert pos == len(got)


def test_two_elites_add_crossovers_that_mix_their_values():
    """(0, 0, 0) and (9, 7, 4): a grid step moves one value by one, so two hops stay within
    2 steps of the elite; every candidate further from both is a crossover, and there are
    some."""
    a, b = BIG.index({"a": 0, "b": 0, "c": 0}), BIG.index({"a": 9, "b": 7, "c": 4})
    got = elite_candidates(BIG, [a, b], np.random.default_rng(0), n_cross=64)

    def steps(i, j):
        return sum(abs(BIG.get(i)[p] - BIG.get(j)[p]) for p in BIG.params)
    crossed = [i for i in got if min(steps(i, a), steps(i, b)) > 2]
    assert crossed
    for i in crossed:
        c = BIG.get(i)
        assert all(c[p] in (BIG.get(a)[p], BIG.get(b)[p]) for p in BIG.params)


def test_stall_candidates_use_the_first_n_elite_for_the_sweep():
    best = [LINE.index({"a": v}) for v in (3, 8, 0)]
    o = StallOptions(source="sweep", n_elite=2)
    got = stall_candidates(o, Linear([1.0]), LINE, best, 10, set(best), np.random.default_rng(0))
    assert got == [2, 4, 7, 9]  # neighbours of 3 and 8; 0's neighbour 1 is not swept


@pytest.mark.parametrize("seed", range(4))
def test_far_stall_candidates_keep_away_from_every_measured_config(seed):
    """``far`` keeps its distance from all of ``best``, not only the first ``n_elite``; the
    candidates are the lowest predicted of the far pool."""
    rng = np.random.default_rng(seed)
    best = BIG.sample(12, rng)
    o = StallOptions(source="far", n_elite=1, n_pool=64, min_dist=2)
    model = Linear([1.0, -1.0, 0.5])
    got = stall_candidates(o, model, BIG, best, 5, set(best), np.random.default_rng(seed + 10))
    pool = BIG.sample(64, np.random.default_rng(seed + 10))
    far = [i for i in pool if min(hamming(BIG, i, m) for m in best) >= 2]
    assert far, "the pool has far configurations"
    pred = model.predict(BIG.features(far))
    assert got == [far[j] for j in np.argsort(pred, kind="stable")[:5]]


def test_elite_stall_candidates_stay_near_the_first_n_elite():
    """``elite`` mutates and crosses the first ``n_elite`` only: with one, every candidate is
    within two changes of it."""
    best = [BIG.index({"a": 0, "b": 0, "c": 0}), BIG.index({"a": 9, "b": 7, "c": 4})]
    o = StallOptions(source="elite", n_elite=1)
    got = stall_candidates(o, Linear([0.0, 0.0, 0.0]), BIG, best, 50, set(best),
                           np.random.default_rng(0))
    assert got and all(hamming(BIG, i, best[0]) <= 2 for i in got)
