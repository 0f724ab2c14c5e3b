"""SoTree against a brute-force reference of the growth its module doc describes.

The reference enumerates, for every leaf, every feature and every threshold between two
distinct values, scores each split by the summed SO of its two leaves' best classes,
and grows best-first (largest gain next, FIFO on ties) while a split keeps ``min_leaf``
samples per side and gains more than ``min_gain``, up to ``max_leaves`` leaves. SO values
are continuous random numbers, so gains do not tie and the partitions (hence the
training predictions and the leaf count) must be the same.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from search.selection.tree import SoTree


def _class(so, idx):
    sums = so[idx].sum(axis=0)
    return max(range(so.shape[1]), key=lambda c: (sums[c], -c))


def _best_split(X, so, idx, min_leaf):
    """(gain, left indices, right indices) of the best split of ``idx``, or None."""
    base = so[idx].sum(axis=0).max()
    best = None
    for f in range(X.shape[1]):
        values = sorted(set(X[idx, f]))
        for lo, hi in zip(values, values[1:]):
            thr = (lo + hi) / 2
            left = [i for i in idx if X[i, f] <= thr]
            right = [i for i in idx if X[i, f] > thr]
            if len(left) < min_leaf or len(right) < min_leaf:
                continue
            gain = so[left].sum(axis=0).max() + so[right].sum(axis=0).max() - base
            if best is None or gain > best[0] + 1e-12:
                best = (gain, left, right)
    return best


def reference_leaves(X, so, max_leaves, min_leaf, min_gain):
    """The leaves (lists of sample indices) of the best-first growth."""
    leaves = [list(range(len(X)))]
    queue = []                                   # (gain, order, leaf, split)
    order = 0

    def offer(leaf):
        nonlocal order
        split = _best_split(X, so, leaf, min_leaf)
        if split is not None and split[0] > min_gain:
            queue.append((split[0], order, leaf, split))
            order += 1

    offer(leaves[0])
    while queue and len(leaves) < max_leaves:
        item = max(queue, key=lambda q: (q[0], -q[1]))
        queue.remove(item)
        _, _, leaf, (_, left, right) = item
        leaves.remove(leaf)
        leaves += [left, right]
        offer(left)
        offer(right)
    return leaves


@settings(max_examples=40, deadline=None)
@given(st.integers(6, 24), st.integers(1, 3), st.integers(0, 2**32 - 1), st.integers(2, 6),
       st.integers(1, 3), st.sampled_from([1e-9, 0.3]))
def test_tree_grows_as_the_brute_force_reference(n, d, seed, max_leaves, min_leaf, min_gain):
    """Same leaf count and same training predictions as the reference growth; features
    take few distinct values so equal values (no split between them) are common."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 5, size=(n, d)).astype(float)
    so = rng.uniform(0.0, 1.0, size=(n, 3))
    tree = SoTree(max_leaves=max_leaves, min_leaf=min_leaf, min_gain=min_gain).fit(X, so)
    leaves = reference_leaves(X, so, max_leaves, min_leaf, min_gain)
    assert tree.n_leaves == len(leaves)
    want = np.empty(n, dtype=int)
    for leaf in leaves:
        want[leaf] = _class(so, leaf)
    assert tree.predict(X).tolist() == want.tolist()


def test_no_split_without_gain():
    """A class that is best on every sample leaves nothing to gain: one leaf."""
    X = np.arange(10.0).reshape(-1, 1)
    so = np.column_stack([np.ones(10), np.linspace(0.1, 0.9, 10)])
    tree = SoTree(max_leaves=8, min_leaf=1).fit(X, so)
    assert tree.n_leaves == 1 and tree.predict(X).tolist() == [0] * 10


def test_a_point_on_the_threshold_goes_left():
    """The rule reads ``if feature <= threshold``: a point exactly on it takes the left leaf."""
    X = np.array([[1.0], [2.0], [3.0], [4.0]])
    so = np.array([[1, 0.5], [1, 0.5], [0.2, 1], [0.3, 1]])
    tree = SoTree(max_leaves=2, min_leaf=1).fit(X, so)
    assert tree.rules(["c"], ["a", "b"]).startswith("if c <= 2.5:")
    assert tree.predict([[2.5], [2.5000001]]).tolist() == [0, 1]


def test_json_round_trip_keeps_the_settings_and_thresholds():
    """Through JSON text the tree keeps its settings and predicts the same on new points,
    those on and beside every threshold included."""
    rng = np.random.default_rng(3)
    X, so = rng.uniform(0, 9, size=(30, 2)), rng.uniform(0, 1, size=(30, 3))
    tree = SoTree(max_leaves=5, min_leaf=3).fit(X, so)
    again = SoTree.from_dict(json.loads(json.dumps(tree.to_dict())))
    assert (again.max_leaves, again.min_leaf) == (5, 3) and again.n_leaves == tree.n_leaves

    def thresholds(node):
        return [] if node.left is None else [(node.feature, node.threshold),
                                             *thresholds(node.left), *thresholds(node.right)]
    probes = [X.mean(axis=0) for _ in range(3)]
    for f, t in thresholds(tree.root):
        for v in (t, np.nextafter(t, np.inf), t - 0.3, t + 0.3):
            p = X.mean(axis=0).copy()
            p[f] = v
            probes.append(p)
    probes = np.vstack([np.array(probes), rng.uniform(0, 9, size=(200, 2))])
    assert (again.predict(probes) == tree.predict(probes)).all()


@pytest.mark.parametrize("kwargs", [{"min_leaf": 0}, {"max_leaves": 0}])
def test_settings_below_one_are_refused(kwargs):
    with pytest.raises(ValueError, match="must be >= 1"):
        SoTree(**kwargs)


def test_no_samples_is_refused():
    with pytest.raises(ValueError, match="need X"):
        SoTree().fit(np.zeros((0, 2)), np.zeros((0, 3)))
