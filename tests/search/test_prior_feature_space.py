"""The history's ranks as feature columns (:class:`search.transfer.prior_feature.PriorFeatureSpace`):
everything but the features is the wrapped space's, and the gate's edges.

References: the wrapped :class:`~search.grid_space.GridSpace` itself (same draws from the same
seed, same neighbours, same description plus the feature names); a copy or a pickle (what
a parallel executor sends) is the same space; the gate judges a source's column from
:attr:`~PriorFeatureSpace.MIN_JUDGED` finite costs on, with ``p <= alpha`` (SciPy's
one-sided Kendall tau, the doc's test) and never the prior's own column.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from scipy.stats import kendalltau

from search.grid_space import GridSpace
from search.transfer.prior_feature import PriorFeatureSpace

INNER = GridSpace({"a": list(range(6)), "b": list(range(4))})


def _space():
    order = np.arange(len(INNER))
    return PriorFeatureSpace(INNER, order[::-1], sources=[("k@gpu0", order)])


def test_draws_neighbours_and_description_are_the_wrapped_spaces():
    s = _space()
    for seed in range(3):
        assert s.sample(7, np.random.default_rng(seed)) == INNER.sample(7, np.random.default_rng(seed))
    assert all(s.neighbours(i) == INNER.neighbours(i) for i in range(len(INNER)))
    assert s.describe() == {**INNER.describe(),
                            "features": ["a", "b", "history_rank", "history_rank[k@gpu0]"]}


@pytest.mark.parametrize("clone", [copy.copy, copy.deepcopy, lambda s: pickle.loads(pickle.dumps(s))])
def test_a_copy_or_a_pickle_is_the_same_space(clone):
    s = _space()
    c = clone(s)
    assert c.feature_names() == s.feature_names() and len(c) == len(s)
    assert np.array_equal(c.features(range(len(s))), s.features(range(len(s))))


def test_the_gate_judges_from_min_judged_finite_costs_on():
    n = PriorFeatureSpace.MIN_JUDGED
    reversed_costs = {i: float(100 - i) for i in range(n)}  # the source's order upside down
    s = _space()
    s.gate(dict(list(reversed_costs.items())[:n - 1]) | {50: float("inf")}, alpha=0.5)
    assert s.active.tolist() == [True, True]  # n - 1 finite: not judged
    s.gate(reversed_costs, alpha=0.5)
    assert s.active.tolist() == [True, False]  # n: judged; the prior's column never is


def test_a_column_exactly_at_alpha_is_kept():
    s = _space()
    known = {0: 1.0, 3: 2.0, 1: 3.0, 7: 4.0, 9: 3.5, 12: 6.0}
    idx = list(known)
    _, p = kendalltau(s._rank[idx, 1], [known[i] for i in idx], alternative="greater")
    assert 0 < p < 1
    s.gate(known, alpha=p)
    assert s.active[1]
    s.gate(known, alpha=np.nextafter(p, 0))
    assert not s.active[1]


def test_the_features_version_counts_the_gates_that_change_a_column():
    """A model fitted on the columns before a gate change, or its kept predictions, no
    longer match the features: the version tells the strategy and the walks so."""
    from search.optimizers.base import PredictionMemo
    u = PriorFeatureSpace(GridSpace({"x": list(range(8))}), np.arange(8),
                          sources=[("k@gpu0", np.arange(8))])
    assert u.features_version == 0
    u.gate({i: float(i) for i in range(8)}, alpha=0.05)  # agrees: the column stays on
    assert u.features_version == 0
    memo, model = PredictionMemo(), type("Fitted", (), {"fit_count": 1})()
    memo(model, u)[0] = 3.0
    u.gate({i: float(8 - i) for i in range(8)}, alpha=0.05)  # reversed: gated off
    assert u.features_version == 1 and memo(model, u) == {}
