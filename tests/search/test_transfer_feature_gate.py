"""A source's rank column is used only while it orders the target's measurements; the
prior's own column always is (PriorFeatureSpace.gate, GuidedOptions.feature_alpha)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from search.db import Measurement, Workload
from search.measure.base import MeasureRecord, Measurer
from search.grid_space import GridSpace
from search.strategies import make_strategy
from search.transfer import GuidedOptions, HistoryPrior, PriorFeatureSpace, with_history
from search.transfer.rank_test import kendall_greater
from search.tuner import tune

SPACE = GridSpace({"a": list(range(8)), "b": list(range(6)), "c": [1, 2, 4]})
W = SPACE.features([0]).shape[1]


@settings(max_examples=80, deadline=None)
@given(orders=st.lists(st.permutations(range(len(SPACE))).map(lambda p: p[:40]), min_size=1,
                       max_size=3),
       known=st.dictionaries(st.integers(0, len(SPACE) - 1), st.floats(0.1, 10.0), max_size=30),
       alpha=st.sampled_from([0.01, 0.05, 0.2]))
def test_a_source_column_is_active_exactly_when_it_orders_the_costs_significantly(
        orders, known, alpha):
    s = PriorFeatureSpace(SPACE, np.array(orders[0]),
                          [(f"k@gpu{n}", np.array(o)) for n, o in enumerate(orders[1:])])
    s.gate(known, alpha)
    idx = list(known)
    ranks = s._rank
    assert s.active[0]  # the prior's column is never judged
    for k in range(1, ranks.shape[1]):
        if len(known) < PriorFeatureSpace.MIN_JUDGED:
            assert s.active[k]  # not judged yet
            continue
        tau, p = kendall_greater(ranks[idx, k], [known[i] for i in idx])  # exact on few ties
        assert s.active[k] == bool(np.isfinite(tau) and p <= alpha)
    X = s.features(range(len(SPACE)))
    for k in range(ranks.shape[1]):
        col = X[:, W + k]
        assert np.array_equal(col, ranks[:, k]) if s.active[k] else np.all(col == 1.0)


def test_failed_configurations_do_not_count_and_a_later_gate_reopens_a_column():
    s = PriorFeatureSpace(SPACE, np.arange(len(SPACE)), [("k@gpu0", np.arange(len(SPACE)))])
    s.gate({i: (np.inf if i % 2 else float(10 - i)) for i in range(12)}, 0.05)  # reversed
    assert s.active.tolist() == [True, False]
    s.gate({i: float(i) for i in range(12)}, 0.05)
    assert s.active.tolist() == [True, True]


def _hist(device, cost):
    w = Workload("k", [64], SPACE.params)
    return [Measurement(w, device, "t", MeasureRecord.ok(SPACE.get(i), time_ms=cost(SPACE.get(i))))
            for i in range(len(SPACE))]


class Toy(Measurer):
    name = "toy"

    def __init__(self, cost):
        self.cost = cost

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=self.cost(c)) for c in configs]


def _bowl(at):
    return lambda cfg: 1.0 + sum((cfg[k] - v) ** 2 for k, v in zip("abc", at))


def _run(history_at, target_at, alpha):
    prior = HistoryPrior.fit(SPACE, _hist("gpu0", _bowl(history_at)), seed=0)
    inner = make_strategy("explorer", SPACE, None, np.random.default_rng(0))
    s = with_history(inner, prior, GuidedOptions(decay=0.0, feature_alpha=alpha), seed=0)
    tune(SPACE, Toy(_bowl(target_at)), s, budget=24)
    return inner.space


def test_the_explorer_keeps_a_like_sources_column_and_drops_a_misleading_ones():
    like = _run((5, 2, 4), (5, 2, 4), 0.05)
    assert like.active.tolist() == [True, True]  # the prior's column and gpu0's
    # the history's best is the target's worst corner: its order is the target's reversed
    assert _run((0, 0, 1), (7, 5, 4), 0.05).active.tolist() == [True, False]
    assert _run((0, 0, 1), (7, 5, 4), 1.0).active.all()  # alpha 1: never judged
