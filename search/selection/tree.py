"""A small decision tree that picks the class with the best speedup over the oracle.

Plain CART with one change in the split criterion: instead of an impurity of the
labels, every sample carries the speedup over the oracle (SO) that each class would
give it (``t_best / t_class``, 0 where the class cannot run), a leaf answers the
class of largest summed SO, and a split is chosen to maximise the summed SO of its
two leaves. The tree so maximises the training set's mean SO directly: a mistake
between two candidates that are nearly as fast costs almost nothing, one that is
twice as slow costs half a sample. With a 0/1 SO matrix (one-hot labels) it is a
CART that minimises misclassifications.

Growth is best-first (the leaf whose split gains most is split next) up to
``max_leaves``; a split needs ``min_leaf`` samples per side and a gain above
``min_gain``. Trees serialise to plain JSON and print as nested if/else rules.

Examples
--------
>>> import numpy as np
>>> X = np.array([[1.0], [2.0], [3.0], [4.0]])
>>> so = np.array([[1, 0.5], [1, 0.5], [0.2, 1], [0.3, 1]])
>>> tree = SoTree(max_leaves=4, min_leaf=1).fit(X, so)
>>> tree.predict(X).tolist(), tree.n_leaves
([0, 0, 1, 1], 2)
>>> print(tree.rules(["c_in"], ["direct", "winograd"]))
if c_in <= 2.5:
    direct  (2 layers, mean SO 1.000)
else:
    winograd  (2 layers, mean SO 1.000)
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["SoTree"]


@dataclass
class _Node:
    klass: int
    n: int
    so_sum: float
    feature: int = -1
    threshold: float = 0.0
    left: "_Node | None" = None
    right: "_Node | None" = None

    def to_dict(self) -> dict:
        d = {"class": self.klass, "n": self.n, "so_sum": self.so_sum}
        if self.left is not None:
            d.update(feature=self.feature, threshold=self.threshold,
                     left=self.left.to_dict(), right=self.right.to_dict())
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "_Node":
        node = cls(int(d["class"]), int(d["n"]), float(d["so_sum"]))
        if "left" in d:
            node.feature, node.threshold = int(d["feature"]), float(d["threshold"])
            node.left, node.right = cls.from_dict(d["left"]), cls.from_dict(d["right"])
        return node


def _best_split(X: np.ndarray, so: np.ndarray, min_leaf: int):
    """(gain, feature, threshold, left mask) of the best split, or None."""
    n = len(X)
    base = so.sum(axis=0).max()
    best = None
    for f in range(X.shape[1]):
        order = np.argsort(X[:, f], kind="stable")
        xs = X[order, f]
        cum = np.cumsum(so[order], axis=0)[:-1]            # left sums after 1..n-1 samples
        total = cum[-1] + so[order[-1]] if n > 1 else so.sum(axis=0)
        score = cum.max(axis=1) + (total - cum).max(axis=1)
        sizes = np.arange(1, n)
        ok = (xs[:-1] < xs[1:]) & (sizes >= min_leaf) & (n - sizes >= min_leaf)
        if not ok.any():
            continue
        score = np.where(ok, score, -np.inf)
        i = int(np.argmax(score))
        gain = float(score[i] - base)
        if best is None or gain > best[0]:
            best = (gain, f, float((xs[i] + xs[i + 1]) / 2), X[:, f] <= (xs[i] + xs[i + 1]) / 2)
    return best


class SoTree:
    """The speedup-over-oracle decision tree (see the module doc).

    Parameters
    ----------
    max_leaves : int
        At most this many leaves (>= 1).
    min_leaf : int
        Samples each side of a split must keep (>= 1).
    min_gain : float
        Summed-SO gain a split must exceed.
    """

    def __init__(self, max_leaves: int = 15, min_leaf: int = 2, min_gain: float = 1e-9):
        if max_leaves < 1 or min_leaf < 1:
            raise ValueError(f"max_leaves and min_leaf must be >= 1, got {max_leaves}, {min_leaf}")
        self.max_leaves, self.min_leaf, self.min_gain = max_leaves, min_leaf, min_gain
        self.root: _Node | None = None

    def _leaf(self, so: np.ndarray) -> _Node:
        sums = so.sum(axis=0)
        k = int(np.argmax(sums))
        return _Node(k, len(so), float(sums[k]))

    def fit(self, X, so) -> "SoTree":
        """Grow the tree on features ``X`` (n, d) and per-class SO ``so`` (n, classes)."""
        X, so = np.asarray(X, float), np.asarray(so, float)
        if X.ndim != 2 or so.ndim != 2 or len(X) != len(so) or len(X) == 0:
            raise ValueError(f"need X (n, d) and so (n, classes) with n >= 1, got {X.shape}, "
                             f"{so.shape}")
        self.root = self._leaf(so)
        heap, tick, leaves = [], 0, 1

        def push(node, idx):
            nonlocal tick
            split = _best_split(X[idx], so[idx], self.min_leaf)
            if split is not None and split[0] > self.min_gain:
                heapq.heappush(heap, (-split[0], tick, node, idx, split))
                tick += 1

        push(self.root, np.arange(len(X)))
        while heap and leaves < self.max_leaves:
            _, _, node, idx, (_, f, thr, mask) = heapq.heappop(heap)
            node.feature, node.threshold = f, thr
            li, ri = idx[mask], idx[~mask]
            node.left, node.right = self._leaf(so[li]), self._leaf(so[ri])
            leaves += 1
            push(node.left, li)
            push(node.right, ri)
        return self

    def _walk(self, x: np.ndarray) -> _Node:
        node = self.root
        while node.left is not None:
            node = node.left if x[node.feature] <= node.threshold else node.right
        return node

    def predict(self, X) -> np.ndarray:
        """The class index of each row of ``X``."""
        if self.root is None:
            raise ValueError("the tree is not fitted")
        return np.array([self._walk(x).klass for x in np.asarray(X, float)], dtype=int)

    @property
    def n_leaves(self) -> int:
        def count(node):
            return 1 if node.left is None else count(node.left) + count(node.right)
        return count(self.root) if self.root is not None else 0

    def rules(self, feature_names: Sequence[str], class_names: Sequence[str]) -> str:
        """The tree as nested ``if feature <= threshold:`` / ``else:`` rules."""
        lines: list[str] = []

        def emit(node, depth):
            pad = "    " * depth
            if node.left is None:
                lines.append(f"{pad}{class_names[node.klass]}  ({node.n} layers, "
                             f"mean SO {node.so_sum / max(node.n, 1):.3f})")
                return
            lines.append(f"{pad}if {feature_names[node.feature]} <= {node.threshold:.6g}:")
            emit(node.left, depth + 1)
            lines.append(f"{pad}else:")
            emit(node.right, depth + 1)

        emit(self.root, 0)
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"kind": "SoTree", "max_leaves": self.max_leaves, "min_leaf": self.min_leaf,
                "root": self.root.to_dict() if self.root else None}

    @classmethod
    def from_dict(cls, d: dict) -> "SoTree":
        tree = cls(int(d["max_leaves"]), int(d["min_leaf"]))
        tree.root = _Node.from_dict(d["root"]) if d.get("root") else None
        return tree
