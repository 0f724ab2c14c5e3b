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

from iobound.errors import InvalidInputError
from iobound.wording import counted

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
            if node.feature < 0:
                raise ValueError(f"a split's feature must be >= 0, got {node.feature}")
            node.left, node.right = cls.from_dict(d["left"]), cls.from_dict(d["right"])
        if node.klass < 0:
            raise ValueError(f"a node's class must be >= 0, got {node.klass}")
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

    >>> import numpy as np
    >>> X, so = np.array([[1.0], [2.0], [3.0], [4.0]]), np.eye(2)[[0, 0, 1, 1]]  # one-hot: CART
    >>> SoTree(min_leaf=3).fit(X, so).n_leaves  # no split keeps 3 samples a side
    1
    >>> tree = SoTree(min_leaf=1).fit(X, so)
    >>> SoTree.from_dict(tree.to_dict()).predict(X).tolist()
    [0, 0, 1, 1]
    """

    def __init__(self, max_leaves: int = 15, min_leaf: int = 2, min_gain: float = 1e-9):
        from ..option_checks import INT64_LOW, check_count, check_number
        # whole numbers (NaN and 2.5 compared as settings and passed), then at least 1
        max_leaves = check_count("max_leaves", max_leaves, low=INT64_LOW)
        min_leaf = check_count("min_leaf", min_leaf, low=INT64_LOW)
        if max_leaves < 1 or min_leaf < 1:
            raise InvalidInputError(f"max_leaves and min_leaf must be >= 1, got {max_leaves}, "
                                    f"{min_leaf}")
        check_number("min_gain", min_gain)
        self.max_leaves, self.min_leaf, self.min_gain = max_leaves, min_leaf, float(min_gain)
        self.root: _Node | None = None
        #: the columns of the X it was fitted on (None: read from a dict that did not say)
        self.n_features: int | None = None

    def _leaf(self, so: np.ndarray) -> _Node:
        sums = so.sum(axis=0)
        k = int(np.argmax(sums))
        return _Node(k, len(so), float(sums[k]))

    def fit(self, X, so) -> "SoTree":
        """Grow the tree on features ``X`` (n, d) and per-class SO ``so`` (n, classes)."""
        X, so = self._array("X", X), self._array("so", so)
        if X.ndim != 2 or so.ndim != 2 or len(X) != len(so) or len(X) == 0 \
                or X.shape[1] == 0 or so.shape[1] == 0:
            raise InvalidInputError(f"need X (n, d) and so (n, classes) with n, d and classes "
                                    f">= 1, got {X.shape}, {so.shape}")
        self.n_features = X.shape[1]
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

    @staticmethod
    def _array(name: str, value) -> np.ndarray:
        """``value`` as a float array of finite numbers; else InvalidInputError naming it."""
        try:
            arr = np.asarray(value, float)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"{name} must be an array of numbers: {exc}") from None
        if not np.isfinite(arr).all():
            raise InvalidInputError(f"{name} must hold finite numbers (no NaN or infinity)")
        return arr

    def _check_fitted(self) -> _Node:
        if self.root is None:
            raise InvalidInputError("the tree is not fitted")
        return self.root

    def predict(self, X) -> np.ndarray:
        """The class index of each row of ``X`` (n, d): the ``d`` features it was fitted on.

        >>> tree = SoTree(min_leaf=1).fit([[1.0], [2.0]], [[1, 0], [0, 1]])
        >>> tree.predict([1.0, 2.0])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: X must be (n, 1): ..., got shape (2,)
        """
        self._check_fitted()
        X = self._array("X", X)
        if X.ndim != 2 or (self.n_features is not None and X.shape[1] != self.n_features) \
                or X.shape[1] <= self._max_feature():
            d = self.n_features if self.n_features is not None else "its"
            raise InvalidInputError(f"X must be (n, {d}): one row of the {d} features the tree "
                                    f"was fitted on per sample, got shape {X.shape}")
        return np.array([self._walk(x).klass for x in X], dtype=int)

    def _max_feature(self) -> int:
        """The largest feature index a split reads (-1: none)."""
        def walk(node):
            return -1 if node.left is None else max(node.feature, walk(node.left),
                                                    walk(node.right))
        return walk(self._check_fitted())

    @property
    def n_leaves(self) -> int:
        def count(node):
            return 1 if node.left is None else count(node.left) + count(node.right)
        return count(self.root) if self.root is not None else 0

    def rules(self, feature_names: Sequence[str], class_names: Sequence[str]) -> str:
        """The tree as nested ``if feature <= threshold:`` / ``else:`` rules."""
        root = self._check_fitted()
        lines: list[str] = []

        def emit(node, depth):
            pad = "    " * depth
            if node.left is None:
                lines.append(f"{pad}{class_names[node.klass]}  ({counted(node.n, 'layer')}, "
                             f"mean SO {node.so_sum / max(node.n, 1):.3f})")
                return
            lines.append(f"{pad}if {feature_names[node.feature]} <= {node.threshold:.6g}:")
            emit(node.left, depth + 1)
            lines.append(f"{pad}else:")
            emit(node.right, depth + 1)

        emit(root, 0)
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"kind": "SoTree", "max_leaves": self.max_leaves, "min_leaf": self.min_leaf,
                "n_features": self.n_features,
                "root": self.root.to_dict() if self.root else None}

    @classmethod
    def from_dict(cls, d: dict) -> "SoTree":
        """The tree :meth:`to_dict` wrote; InvalidInputError naming what is wrong.

        >>> SoTree.from_dict({})
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: a SoTree dict needs max_leaves and min_leaf, got {}
        """
        from ..option_checks import check_count, shown
        if not isinstance(d, dict) or "max_leaves" not in d or "min_leaf" not in d:
            raise InvalidInputError(f"a SoTree dict needs max_leaves and min_leaf, "
                                    f"got {shown(d)}")
        tree = cls(d["max_leaves"], d["min_leaf"])
        if d.get("n_features") is not None:
            tree.n_features = check_count("n_features", d["n_features"], low=1)
        try:
            tree.root = _Node.from_dict(d["root"]) if d.get("root") else None
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InvalidInputError(f"a SoTree dict's root is no tree: {type(exc).__name__} "
                                    f"{exc}"[:200]) from None
        if tree.root is not None and tree.n_features is not None \
                and tree._max_feature() >= tree.n_features:
            raise InvalidInputError(f"a SoTree dict splits on a feature past its "
                                    f"{tree.n_features} features")
        return tree
