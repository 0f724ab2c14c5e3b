"""Selectors (layer, device) -> candidate: learned ones, the fixed heuristics, and their scores.

Every selector has ``fit(examples)`` (a no-op for heuristics) and
``predict(examples) -> list[Candidate]``, and never answers a candidate the layer does
not have (a 1 x 1 or strided layer always gets ``direct``).

- :class:`GbtSelector`: xgboost gradient-boosted trees that regress
  ``log(t_candidate / t_direct)`` of each Winograd candidate from the layer and device
  features plus its ``e``; the candidate of smallest prediction wins, direct being 0 and
  each Winograd candidate charged a ``margin`` (a prior for the default, chosen among
  ``margins`` by cross-validation on the training examples, never on held-out ones). A
  regression of time ratios rather than a classifier of the winner: a near tie costs
  little either way and a large loss a lot (a softmax classifier of the winner, tried
  first, did worse than "always direct" on the held-out presets).
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

from iobound.algorithms import DEFAULT_WINOGRAD_E
from iobound.errors import InvalidInputError

from .dataset import CLASSES, DIRECT, Candidate, Example, candidates
from .features import FEATURE_NAMES, feature_matrix
from .tree import SoTree

_NO_RUN = 3.0

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

    def __init__(self, e: int = DEFAULT_WINOGRAD_E):
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
    """xgboost gradient-boosted trees that regress each Winograd candidate's time over
    direct's (see the module doc); ``seed`` fixes the result."""

    name = "gradient-boosted trees"

    def __init__(self, rounds: int = 150, max_depth: int = 3, eta: float = 0.1, seed: int = 0,
                 margins: Sequence[float] = (0.0, 0.05, 0.1, 0.2), folds: int = 4):
        self.params = {"objective": "reg:squarederror", "max_depth": max_depth, "eta": eta,
                       "seed": seed, "nthread": 1}
        self.rounds, self.seed, self.folds = rounds, seed, folds
        self.margins = tuple(float(m) for m in margins)
        self.margin = self.margins[0]
        self.booster = None

    @staticmethod
    def _pairs(examples: Sequence[Example]):
        """One row per (example, offered Winograd class): the layer's features and ``e``."""
        feats = _features(examples)
        rows, where = [], []
        for i, ex in enumerate(examples):
            for k, c in enumerate(CLASSES):
                if c != DIRECT and c in candidates(ex.layer):
                    rows.append(np.append(feats[i], c.e))
                    where.append((i, k))
        return np.array(rows).reshape(len(rows), len(FEATURE_NAMES) + 1), where

    def _train(self, examples: Sequence[Example]):
        import xgboost as xgb

        X, where = self._pairs(examples)
        if not where:
            raise InvalidInputError("GbtSelector.fit needs examples with Winograd candidates")
        y = []
        for i, k in where:
            t, direct = examples[i].times.get(CLASSES[k]), examples[i].times.get(DIRECT)
            # a candidate that cannot run (or no direct time) counts as e^3 = 20x slower
            y.append(np.log(t / direct) if t is not None and direct is not None else _NO_RUN)
        dtrain = xgb.DMatrix(X, label=np.array(y), feature_names=[*FEATURE_NAMES, "e"])
        return xgb.train(self.params, dtrain, num_boost_round=self.rounds)

    def _log_ratio(self, booster, examples: Sequence[Example]) -> np.ndarray:
        import xgboost as xgb

        out = np.full((len(examples), len(CLASSES)), np.inf)
        out[:, 0] = 0.0
        X, where = self._pairs(examples)
        if where:
            pred = booster.predict(xgb.DMatrix(X, feature_names=[*FEATURE_NAMES, "e"]))
            for (i, k), v in zip(where, pred):
                out[i, k] = v
        return out

    def _cv_margin(self, examples: Sequence[Example]) -> float:
        """The margin of :attr:`margins` with the best summed SO in k-fold cross-validation
        on ``examples`` (ties: the smallest)."""
        if len(self.margins) == 1 or len(examples) < 2 * self.folds:
            return self.margins[0]
        order = np.random.default_rng(self.seed).permutation(len(examples))
        so, total = so_matrix(examples), np.zeros(len(self.margins))
        for f in range(self.folds):
            test = order[f::self.folds]
            train = [examples[i] for i in np.setdiff1d(order, test)]
            if not self._pairs(train)[1]:
                continue
            ratio = self._log_ratio(self._train(train), [examples[i] for i in test])
            for j, m in enumerate(self.margins):
                pick = (ratio + np.r_[0.0, [m] * (len(CLASSES) - 1)]).argmin(axis=1)
                total[j] += so[test, pick].sum()
        return self.margins[int(np.argmax(total))]

    def fit(self, examples: Sequence[Example]) -> "GbtSelector":
        """Choose :attr:`margin` by cross-validation, then train on all ``examples``."""
        self.margin = self._cv_margin(examples)
        self.booster = self._train(examples)
        return self

    def predict_log_ratio(self, examples: Sequence[Example]) -> np.ndarray:
        """``(n, len(CLASSES))`` predicted ``log(t / t_direct)``: 0 for direct, inf where the
        class is not a candidate."""
        if self.booster is None:
            raise InvalidInputError("the selector is not fitted")
        return self._log_ratio(self.booster, examples)

    def predict(self, examples: Sequence[Example]) -> list[Candidate]:
        if not examples:
            return []
        shift = np.r_[0.0, [self.margin] * (len(CLASSES) - 1)]
        return [CLASSES[int(i)] for i in (self.predict_log_ratio(examples) + shift).argmin(axis=1)]

    def to_json(self) -> str:
        """The margin and the booster (xgboost's own JSON) as one JSON document; no pickle."""
        if self.booster is None:
            raise InvalidInputError("the selector is not fitted")
        return json.dumps({"margin": self.margin,
                           "booster": json.loads(bytes(self.booster.save_raw("json")))})

    def load_json(self, text: str) -> "GbtSelector":
        """Restore what :meth:`to_json` wrote."""
        import xgboost as xgb
        doc = json.loads(text)
        self.margin = float(doc["margin"])
        self.booster = xgb.Booster(model_file=bytearray(json.dumps(doc["booster"]).encode()))
        return self


def score(examples: Sequence[Example], choices: Sequence[Candidate]) -> dict:
    """Accuracy, balanced accuracy, mean and minimum SO of ``choices`` on ``examples``."""
    if len(examples) != len(choices) or not examples:
        raise InvalidInputError(f"need as many choices as examples (>= 1), got {len(choices)} "
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
