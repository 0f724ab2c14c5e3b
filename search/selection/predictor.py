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

from ..cost_model import xgb_seed
from .dataset import CLASSES, DIRECT, Candidate, Example, candidates, check_candidate
from .features import FEATURE_NAMES, feature_matrix
from .tree import SoTree

_NO_RUN = 3.0

__all__ = ["AlwaysDirect", "Winograd3x3", "GbtSelector", "TreeSelector", "score", "so_matrix",
           "offered_mask"]


def so_matrix(examples: Sequence[Example]) -> np.ndarray:
    """``(n, len(CLASSES))`` speedups over the oracle (0 where a class cannot run).

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
    >>> ex = Example(layer, "v100", {DIRECT: 2.0, Candidate("winograd", 2): 1.0})
    >>> so_matrix([ex, ex]).tolist()
    [[0.5, 1.0, 0.0, 0.0], [0.5, 1.0, 0.0, 0.0]]
    """
    return np.array([ex.so_row() for ex in examples]).reshape(len(examples), len(CLASSES))


def offered_mask(examples: Sequence[Example]) -> np.ndarray:
    """``(n, len(CLASSES))`` booleans: the class is a candidate of the example's layer.

    >>> from iobound.layer import ConvLayer
    >>> one = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=1, k_w=1)
    >>> offered_mask([Example(one, "v100", {DIRECT: 1.0})]).tolist()
    [[True, False, False, False]]
    """
    return np.array([[c in candidates(ex.layer) for c in CLASSES] for ex in examples],
                    dtype=bool).reshape(len(examples), len(CLASSES))


def _features(examples: Sequence[Example]) -> np.ndarray:
    return feature_matrix((ex.layer, ex.device) for ex in examples)


def _examples(examples) -> tuple:
    """``examples`` as a tuple when it is a sequence of :class:`Example`; else
    InvalidInputError naming it (and the first that is none)."""
    from ..option_checks import check_records
    return check_records("examples", examples, Example)


class AlwaysDirect:
    """The heuristic "always direct".

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
    >>> ex = Example(layer, "v100", {DIRECT: 2.0, Candidate("winograd", 2): 1.0})
    >>> [c.label for c in AlwaysDirect().fit([ex]).predict([ex])]
    ['direct']
    """

    name = "always direct"

    def fit(self, examples: Sequence[Example]) -> "AlwaysDirect":
        return self

    def predict(self, examples: Sequence[Example]) -> list[Candidate]:
        return [DIRECT for _ in _examples(examples)]


class Winograd3x3:
    """The heuristic "Winograd F(e x e, 3 x 3) for every 3 x 3 stride-1 layer".

    >>> from iobound.layer import ConvLayer
    >>> k3 = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
    >>> k1 = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=1, k_w=1)
    >>> exs = [Example(k3, "v100", {DIRECT: 1.0}), Example(k1, "v100", {DIRECT: 1.0})]
    >>> [c.label for c in Winograd3x3(e=4).predict(exs)]
    ['winograd-e4', 'direct']
    """

    def __init__(self, e: int = DEFAULT_WINOGRAD_E):
        self.choice = Candidate("winograd", e)
        self.name = f"Winograd e={e} for every 3x3 stride-1 layer"

    def fit(self, examples: Sequence[Example]) -> "Winograd3x3":
        return self

    def predict(self, examples: Sequence[Example]) -> list[Candidate]:
        return [self.choice if ex.layer.k_h == ex.layer.k_w == 3 and self.choice in
                candidates(ex.layer) else DIRECT for ex in _examples(examples)]


class TreeSelector:
    """:class:`~search.selection.tree.SoTree` over :data:`FEATURE_NAMES`.

    >>> from iobound.layer import ConvLayer
    >>> small = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
    >>> exs = [Example(small, "v100", {DIRECT: 2.0, Candidate("winograd", 2): 1.0}),
    ...        Example(small.replace(c_in=16), "v100",
    ...                {DIRECT: 1.0, Candidate("winograd", 2): 3.0})]
    >>> sel = TreeSelector(min_leaf=1).fit(exs)
    >>> [c.label for c in sel.predict(exs)]
    ['winograd-e2', 'direct']
    >>> print(sel.rules())
    if c_in <= 12:
        winograd-e2  (1 layer, mean SO 1.000)
    else:
        direct  (1 layer, mean SO 1.000)
    """

    name = "decision tree"

    def __init__(self, max_leaves: int = 15, min_leaf: int = 3):
        self.tree = SoTree(max_leaves=max_leaves, min_leaf=min_leaf)

    def fit(self, examples: Sequence[Example]) -> "TreeSelector":
        examples = _examples(examples)
        so = np.where(offered_mask(examples), so_matrix(examples), 0.0)
        self.tree.fit(_features(examples), so)
        return self

    def predict(self, examples: Sequence[Example]) -> list[Candidate]:
        examples = _examples(examples)
        if not examples:
            return []
        k = self.tree.predict(_features(examples))
        return [CLASSES[i] if CLASSES[i] in candidates(ex.layer) else DIRECT
                for i, ex in zip(k, examples)]

    def rules(self) -> str:
        return self.tree.rules(FEATURE_NAMES, [c.label for c in CLASSES])


class GbtSelector:
    """xgboost gradient-boosted trees that regress each Winograd candidate's time over
    direct's (see the module doc); ``seed`` fixes the result.

    >>> from iobound.layer import ConvLayer
    >>> small = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
    >>> exs = [Example(small, "v100", {DIRECT: 2.0, Candidate("winograd", 2): 1.0}),
    ...        Example(small.replace(c_in=16), "v100",
    ...                {DIRECT: 1.0, Candidate("winograd", 2): 3.0})]
    >>> sel = GbtSelector(rounds=20, eta=0.5, margins=(0.0,)).fit(exs)
    >>> [c.label for c in sel.predict(exs)], sel.predict_log_ratio(exs[:1]).round(1).tolist()
    (['winograd-e2', 'direct'], [[0.0, -0.7, 3.0, 3.0]])
    """

    name = "gradient-boosted trees"

    def __init__(self, rounds: int = 150, max_depth: int = 3, eta: float = 0.1, seed: int = 0,
                 margins: Sequence[float] = (0.0, 0.05, 0.1, 0.2), folds: int = 4):
        # against the limits XGBOptions checks its own with (search.cost_model): never NaN,
        # 2.5 or -1 taken here and an xgboost TypeError, or a NaN's silent Winograd, at fit
        from iobound import limits

        from ..cost_model import _F32_TINY, _XGB_INT, _XGB_ROUNDS
        from ..option_checks import check_count, check_number, shown
        rounds = limits.check_int("rounds", rounds, _XGB_ROUNDS)
        max_depth = limits.check_int("max_depth", check_count("max_depth", max_depth, low=1),
                                     _XGB_INT)
        check_number("eta", eta, 0, 1)  # XGBoost's documented range
        if 0 < eta < _F32_TINY:  # XGBoost parses float32: "Out of range value"
            raise InvalidInputError(f"eta={eta!r} is below the smallest float32 XGBoost takes")
        seed = limits.check_int("seed", seed, limits.SEED)
        folds = check_count("folds", folds, low=2)
        if isinstance(margins, (str, bytes)) or not hasattr(margins, "__iter__") \
                or not list(margins):
            raise InvalidInputError(f"margins must be a non-empty list of numbers, "
                                    f"got {shown(margins)}")
        margins = tuple(float(check_number(f"margins[{i}]", m)) for i, m in enumerate(margins))
        self.params = {"objective": "reg:squarederror", "max_depth": max_depth, "eta": eta,
                       "seed": xgb_seed(seed), "nthread": 1}  # 2**32 is no seed 0
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
        examples = _examples(examples)
        self.margin = self._cv_margin(examples)
        self.booster = self._train(examples)
        return self

    def predict_log_ratio(self, examples: Sequence[Example]) -> np.ndarray:
        """``(n, len(CLASSES))`` predicted ``log(t / t_direct)``: 0 for direct, inf where the
        class is not a candidate."""
        if self.booster is None:
            raise InvalidInputError("the selector is not fitted")
        return self._log_ratio(self.booster, _examples(examples))

    def predict(self, examples: Sequence[Example]) -> list[Candidate]:
        examples = _examples(examples)
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
        """Restore what :meth:`to_json` wrote; InvalidInputError, the selector unchanged,
        for a text that is none.

        >>> GbtSelector().load_json("{}")
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: a GbtSelector JSON needs margin and booster, got {}
        """
        import xgboost as xgb

        from ..option_checks import check_number, shown
        if not isinstance(text, (str, bytes, bytearray)):
            raise InvalidInputError(f"text must be a JSON string, got {shown(text)}")
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise InvalidInputError(f"a GbtSelector JSON must be JSON: {exc}") from None
        if not isinstance(doc, dict) or "margin" not in doc or "booster" not in doc:
            raise InvalidInputError(f"a GbtSelector JSON needs margin and booster, "
                                    f"got {shown(doc)}")
        margin = float(check_number("margin", doc["margin"]))
        try:
            booster = xgb.Booster(model_file=bytearray(json.dumps(doc["booster"]).encode()))
        except xgb.core.XGBoostError as exc:
            raise InvalidInputError(f"a GbtSelector JSON's booster is no xgboost model: "
                                    f"{str(exc).splitlines()[0][:160]}") from None
        self.margin, self.booster = margin, booster
        return self


def score(examples: Sequence[Example], choices: Sequence[Candidate]) -> dict:
    """Accuracy, balanced accuracy, mean and minimum SO of ``choices`` on ``examples``.

    >>> from iobound.layer import ConvLayer
    >>> ex = Example(ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3),
    ...              "V100-SXM2", {DIRECT: 1.0})
    >>> score([ex], ["direct"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: choices[0] must be a Candidate (...), got str 'direct'
    """
    from ..option_checks import shown
    examples = _examples(examples)
    if isinstance(choices, (str, bytes)) or not hasattr(choices, "__iter__"):
        raise InvalidInputError(f"choices must be a list of Candidate, got {shown(choices)}")
    choices = [check_candidate(c, f"choices[{i}]") for i, c in enumerate(choices)]
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
