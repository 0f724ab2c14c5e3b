"""Selectors (layer, device) -> candidate: learned ones, the fixed heuristics, and their scores.

Every selector has ``fit(examples)`` (a no-op for heuristics) and
``predict(examples) -> list[Candidate]``, and never answers a candidate the layer does
not have (a 1 x 1 or strided layer always gets ``direct``).

- :class:`GbtSelector`: xgboost gradient-boosted trees, multi-class (``multi:softprob``)
  over :data:`~search.selection.dataset.CLASSES`, each example weighted by how much a
  wrong answer would cost it (its mean ``1 - SO`` over the other candidates, plus a
  floor), the most probable offered class wins.
- :class:`TreeSelector`: :class:`~search.selection.tree.SoTree`, printable as rules.
- :class:`AlwaysDirect` and :class:`Winograd3x3` (Winograd F(e x e, 3 x 3) for every
  3 x 3 stride-1 layer, direct otherwise): what a user would write by hand.

:func:`score` gives accuracy, balanced accuracy (mean recall over the oracle's classes)
and the speedup over the oracle (SO = ``t_oracle / t_chosen``, 1 is perfect).

Examples
--------
>>> from iobound.layer import ConvLayer
>>> from search.selection.dataset import Example, CLASSES
>>> layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
>>> ex = Example(layer, "V100-SXM2", dict(zip(CLASSES, (1.0, 2.0, 4.0, None))))
>>> s = score([ex], AlwaysDirect().predict([ex]))
>>> s["accuracy"], s["mean_so"]
(1.0, 1.0)
>>> score([ex], Winograd3x3(e=2).predict([ex]))["mean_so"]
0.5
"""

from __future__ import annotations

import json
from typing import Sequence

import numpy as np

from .dataset import CLASSES, DIRECT, Candidate, Example, candidates
from .features import FEATURE_NAMES, feature_matrix
from .tree import SoTree

__all__ = ["AlwaysDirect", "Winograd3x3", "GbtSelector", "TreeSelector", "score", "so_matrix",
           "offered_mask"]


def so_matrix(examples: Sequence[Example]) -> np.ndarray:
    """``(n, len(CLASSES))`` speedups over the oracle (0 where a class cannot run)."""
    return np.array([ex.so_row() for ex in examples]).reshape(len(examples), len(CLASSES))


def offered_mask(examples: Sequence[Example]) -> np.ndarray:
    """``(n, len(CLASSES))`` booleans: the class is a candidate of the example's layer."""
    return np.array([[c in candidates(ex.layer) for c in CLASSES] for ex in examples],
                    dtype=bool).reshape(len(examples), len(CLASSES))


def _features(examples: Sequence[Example]) -> np.ndarray:
    return feature_matrix((ex.layer, ex.device) for ex in examples)


class AlwaysDirect:
    """The heuristic "always direct"."""

    name = "always direct"

    def fit(self, examples: Sequence[Example]) -> "AlwaysDirect":
        return self

    def predict(self, examples: Sequence[Example]) -> list[Candidate]:
        return [DIRECT for _ in examples]


class Winograd3x3:
    """The heuristic "Winograd F(e x e, 3 x 3) for every 3 x 3 stride-1 layer"."""

    def __init__(self, e: int = 2):
        self.choice = Candidate("winograd", e)
        self.name = f"Winograd e={e} for every 3x3 stride-1 layer"

    def fit(self, examples: Sequence[Example]) -> "Winograd3x3":
        return self

    def predict(self, examples: Sequence[Example]) -> list[Candidate]:
        return [self.choice if ex.layer.k_h == ex.layer.k_w == 3 and self.choice in
                candidates(ex.layer) else DIRECT for ex in examples]


class TreeSelector:
    """:class:`~search.selection.tree.SoTree` over :data:`FEATURE_NAMES`."""

    name = "decision tree"

    def __init__(self, max_leaves: int = 15, min_leaf: int = 3):
        self.tree = SoTree(max_leaves=max_leaves, min_leaf=min_leaf)

    def fit(self, examples: Sequence[Example]) -> "TreeSelector":
        so = np.where(offered_mask(examples), so_matrix(examples), 0.0)
        self.tree.fit(_features(examples), so)
        return self

    def predict(self, examples: Sequence[Example]) -> list[Candidate]:
        if not examples:
            return []
        k = self.tree.predict(_features(examples))
        return [CLASSES[i] if CLASSES[i] in candidates(ex.layer) else DIRECT
                for i, ex in zip(k, examples)]

    def rules(self) -> str:
        return self.tree.rules(FEATURE_NAMES, [c.label for c in CLASSES])


class GbtSelector:
    """xgboost gradient-boosted trees (see the module doc); ``seed`` fixes the result."""

    name = "gradient-boosted trees"

    def __init__(self, rounds: int = 60, max_depth: int = 3, eta: float = 0.2, seed: int = 0):
        self.params = {"objective": "multi:softprob", "num_class": len(CLASSES),
                       "max_depth": max_depth, "eta": eta, "seed": seed, "nthread": 1,
                       "min_child_weight": 0.5, "subsample": 1.0}
        self.rounds = rounds
        self.booster = None

    def fit(self, examples: Sequence[Example]) -> "GbtSelector":
        import xgboost as xgb

        if not examples:
            raise ValueError("GbtSelector.fit needs at least one example")
        so = so_matrix(examples)
        offered = offered_mask(examples)
        labels = np.array([CLASSES.index(ex.best) for ex in examples])
        regret = np.where(offered, 1.0 - so, 0.0).sum(axis=1) / np.maximum(offered.sum(axis=1) - 1, 1)
        weights = 0.05 + regret
        dtrain = xgb.DMatrix(_features(examples), label=labels, weight=weights,
                             feature_names=list(FEATURE_NAMES))
        self.booster = xgb.train(self.params, dtrain, num_boost_round=self.rounds)
        return self

    def predict_proba(self, examples: Sequence[Example]) -> np.ndarray:
        import xgboost as xgb

        if self.booster is None:
            raise ValueError("the selector is not fitted")
        d = xgb.DMatrix(_features(examples), feature_names=list(FEATURE_NAMES))
        return self.booster.predict(d).reshape(len(examples), len(CLASSES))

    def predict(self, examples: Sequence[Example]) -> list[Candidate]:
        if not examples:
            return []
        p = np.where(offered_mask(examples), self.predict_proba(examples), -1.0)
        return [CLASSES[int(i)] for i in p.argmax(axis=1)]

    def to_json(self) -> str:
        """The booster as xgboost's own JSON (no pickle)."""
        return bytes(self.booster.save_raw("json")).decode()

    def load_json(self, text: str) -> "GbtSelector":
        import xgboost as xgb
        self.booster = xgb.Booster(model_file=bytearray(text.encode()))
        return self


def score(examples: Sequence[Example], choices: Sequence[Candidate]) -> dict:
    """Accuracy, balanced accuracy, mean and minimum SO of ``choices`` on ``examples``."""
    if len(examples) != len(choices) or not examples:
        raise ValueError(f"need as many choices as examples (>= 1), got {len(choices)} "
                         f"and {len(examples)}")
    truth = [ex.best for ex in examples]
    hits = np.array([t == c for t, c in zip(truth, choices)])
    recalls = [float(hits[[t == k for t in truth]].mean()) for k in CLASSES if k in truth]
    so = np.array([ex.speedup_over_oracle(c) for ex, c in zip(examples, choices)])
    return {"n": len(examples), "accuracy": float(hits.mean()),
            "balanced_accuracy": float(np.mean(recalls)), "mean_so": float(so.mean()),
            "min_so": float(so.min()),
            "choices": {k.label: sum(c == k for c in choices) for k in CLASSES},
            "oracle": {k.label: sum(t == k for t in truth) for k in CLASSES}}


def dumps_selectors(tree: TreeSelector, gbt: GbtSelector) -> str:
    """Both learned selectors as one JSON document."""
    return json.dumps({"schema": 1, "features": list(FEATURE_NAMES),
                       "classes": [c.label for c in CLASSES], "tree": tree.tree.to_dict(),
                       "gbt": json.loads(gbt.to_json())})
