"""The speedup-over-oracle decision tree (search.selection.tree)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import arrays

from search.selection.tree import SoTree


@given(arrays(np.float64, st.tuples(st.integers(1, 40), st.just(3)),
              elements=st.floats(0, 100, allow_nan=False)),
       st.integers(0, 2**32 - 1), st.integers(1, 8), st.integers(1, 4))
def test_tree_never_worse_than_the_best_single_class(X, seed, max_leaves, min_leaf):
    """On its training data the tree's summed SO is at least that of the best constant answer,
    it has at most max_leaves leaves, and a JSON round trip predicts the same."""
    rng = np.random.default_rng(seed)
    so = rng.uniform(0.2, 1.0, size=(len(X), 4))
    so[np.arange(len(X)), rng.integers(0, 4, len(X))] = 1.0
    tree = SoTree(max_leaves=max_leaves, min_leaf=min_leaf).fit(X, so)
    pred = tree.predict(X)
    assert 1 <= tree.n_leaves <= max_leaves
    assert so[np.arange(len(X)), pred].sum() >= so.sum(axis=0).max() - 1e-9
    assert (SoTree.from_dict(tree.to_dict()).predict(X) == pred).all()


def test_tree_separates_a_threshold_rule():
    """One-hot SO from a two-feature rule is learnt exactly with three leaves."""
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 10, size=(200, 2))
    y = np.where(X[:, 0] > 5, np.where(X[:, 1] > 3, 2, 1), 0)
    tree = SoTree(max_leaves=3, min_leaf=1).fit(X, np.eye(3)[y])
    assert (tree.predict(X) == y).all() and tree.n_leaves == 3
    rules = tree.rules(["a", "b"], ["p", "q", "r"])
    assert rules.startswith("if a <= ") and "else:" in rules and rules.count("layers") == 3


def test_tree_prefers_the_cheap_mistake():
    """Where no split separates the samples, the leaf answers the class of larger summed SO,
    not the majority label: two samples that lose 1% with class 1 outweigh one that loses 90%."""
    X = np.zeros((3, 1))
    so = np.array([[1.0, 0.99], [1.0, 0.99], [0.1, 1.0]])
    assert SoTree().fit(X, so).predict(X).tolist() == [1, 1, 1]


def test_tree_rejects_bad_input():
    """Shapes that do not match and an unfitted tree are errors."""
    with pytest.raises(ValueError, match="need X"):
        SoTree().fit(np.zeros((2, 1)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="not fitted"):
        SoTree().predict(np.zeros((1, 1)))
    with pytest.raises(ValueError, match="max_leaves"):
        SoTree(max_leaves=0)
