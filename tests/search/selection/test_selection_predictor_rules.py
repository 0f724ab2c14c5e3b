"""Selectors and scores (search.selection.predictor) against brute-force references.

References: the realised speedup over the oracle of every constant answer (a one-leaf
tree must take the best one, counting a non-candidate answer as the direct fallback
the selector gives), the cross-validated margin recomputed by enumeration over a stubbed
model's fixed predictions, and scores counted by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from search.selection.dataset import CLASSES, DIRECT, Candidate, Example, candidates
from search.selection.predictor import GbtSelector, TreeSelector, Winograd3x3, score

E2, E3, E4 = (Candidate("winograd", e) for e in (2, 3, 4))


def _layer(c_in=8, k=3, **kw):
    return ConvLayer(n=1, c_in=c_in, h_in=14, w_in=14, c_out=16, k_h=k, k_w=k, padding=k // 2,
                     **kw)


def _realised_so(examples, answer):
    return sum(ex.speedup_over_oracle(answer if answer in candidates(ex.layer) else DIRECT)
               for ex in examples)


def test_one_leaf_tree_takes_the_best_realisable_constant():
    """1x1 layers (direct only) whose records also time Winograd must not pull the tree to
    Winograd: the answer is the constant with the best realised SO (direct here)."""
    ones = [Example(_layer(c_in=8 * (i + 1), k=1), "V100-SXM2", {DIRECT: 1.0, E2: 0.5})
            for i in range(3)]
    threes = [Example(_layer(c_in=8 * (i + 1)), "V100-SXM2", {DIRECT: 1.0, E2: 2.0})
              for i in range(2)]
    exs = ones + threes
    best = max(CLASSES, key=lambda c: _realised_so(exs, c))
    sel = TreeSelector(max_leaves=1).fit(exs)
    assert best == DIRECT and sel.predict(exs) == [best] * len(exs)


def test_tree_answers_direct_where_its_class_is_no_candidate():
    """A one-leaf tree that answers Winograd e2 still answers direct for a 1x1 layer."""
    exs = [Example(_layer(c_in=8 * (i + 1)), "V100-SXM2", {DIRECT: 2.0, E2: 1.0})
           for i in range(4)]
    sel = TreeSelector(max_leaves=1).fit(exs)
    one = Example(_layer(k=1), "V100-SXM2", {DIRECT: 1.0})
    assert sel.predict(exs + [one]) == [E2] * 4 + [DIRECT]


def test_winograd3x3_keeps_direct_where_winograd_is_no_candidate():
    """3x3 but strided, dilated or grouped: not a Winograd candidate, so direct."""
    exs = [Example(layer, "V100-SXM2", {DIRECT: 1.0})
           for layer in (_layer(stride=2), _layer(dilation=2),
                         _layer(c_in=8, groups=2))]
    assert Winograd3x3(2).predict(exs) == [DIRECT] * 3
    assert Winograd3x3(3).predict([Example(_layer(), "V100-SXM2", {DIRECT: 1.0})]) == [E3]


def _rule_examples(n, seed):
    """Winograd e2 is 2x faster than direct when c_in >= 64; e4 never runs."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        c_in = int(rng.choice([8, 16, 32, 64, 128, 256]))
        fast = c_in >= 64
        times = {DIRECT: 1.0, E2: 0.5 if fast else 1.5, E3: 0.8 if fast else 1.8, E4: None}
        out.append(Example(_layer(c_in=c_in).replace(c_out=16 + i), "V100-SXM2", times))
    return out


def test_gbt_never_picks_a_candidate_that_never_runs():
    """A candidate with no time in any training example is charged as much slower, so it is
    never chosen, and the rule is learnt (SO >= 0.95)."""
    train, test = _rule_examples(60, 1), _rule_examples(30, 2)
    choices = GbtSelector(rounds=30, margins=(0.0,)).fit(train).predict(test)
    assert E4 not in choices
    assert score(test, choices)["mean_so"] >= 0.95


class _Stub(GbtSelector):
    """Predicts a fixed log ratio per example (its c_out is its id) and records every
    cross-validation fold: which examples trained and which were predicted."""

    def __init__(self, ratios, **kw):
        super().__init__(**kw)
        self.ratios, self.folds_seen = ratios, []

    def _train(self, examples):
        return [ex.layer.c_out for ex in examples]

    def _log_ratio(self, booster, examples):
        ids = [ex.layer.c_out for ex in examples]
        self.folds_seen.append((set(booster), ids))
        out = np.full((len(examples), len(CLASSES)), np.inf)
        out[:, 0] = 0.0
        out[:, 1] = [self.ratios[i] for i in ids]
        return out


@pytest.mark.parametrize("b_time, expected", [(10.0, 0.2), (1.2, 0.0)])
def test_cv_margin_maximises_the_summed_so_over_every_held_out_example(b_time, expected):
    """With a model whose predictions are fixed, every example is held out exactly once, never
    trains its own fold, and the margin chosen is the one of largest summed SO over all
    examples (ties: the first); recomputed here by enumeration."""
    exs, ratios = [], {}
    for i in range(48):
        group = "B" if i % 12 == 0 else "C" if i % 6 == 3 else "A"
        # A: Winograd 5% faster, predicted a little faster; B: predicted faster, slower
        # (b_time); C: Winograd 3.3x faster, predicted much faster
        times = {DIRECT: 1.0, E2: {"A": 0.95, "B": b_time, "C": 0.3}[group]}
        exs.append(Example(_layer().replace(c_out=i + 1), "V100-SXM2", times))
        ratios[i + 1] = {"A": -0.05, "B": -0.15, "C": -0.25}[group]
    margins = (0.0, 0.2, 0.4)

    def total(m):
        return sum(ex.speedup_over_oracle(E2 if ratios[ex.layer.c_out] + m < 0 else DIRECT)
                   for ex in exs)
    want = max(margins, key=lambda m: (total(m), -margins.index(m)))
    sel = _Stub(ratios, margins=margins, folds=4)
    assert sel._cv_margin(exs) == want == expected
    held_out = [i for _, test in sel.folds_seen for i in test]
    assert sorted(held_out) == list(range(1, 49)) and len(sel.folds_seen) == 4
    for trained, test in sel.folds_seen:
        assert not trained & set(test) and trained | set(test) == set(range(1, 49))


def test_cv_needs_two_examples_per_fold():
    """Too few examples for the folds (or one margin): the first margin, no training."""
    sel = _Stub({}, margins=(0.3, 0.0), folds=4)
    assert sel._cv_margin([Example(_layer(), "V100-SXM2", {DIRECT: 1.0})] * 7) == 0.3
    assert sel.folds_seen == []


def test_score_counts_by_hand():
    """Balanced accuracy averages recall over the oracle's classes only (a class only chosen
    counts nowhere); the choices and oracle tallies are kept apart."""
    exs = [Example(_layer(), "V100-SXM2", {DIRECT: 1.0, E2: 2.0, E3: 4.0}),
           Example(_layer(), "V100-SXM2", {DIRECT: 2.0, E2: 1.0, E3: 4.0})]
    s = score(exs, [E3, E2])
    assert s["accuracy"] == 0.5 and s["balanced_accuracy"] == pytest.approx((0 + 1) / 2)
    assert s["mean_so"] == pytest.approx((0.25 + 1) / 2) and s["min_so"] == 0.25
    assert s["choices"] == {"direct": 0, "winograd-e2": 1, "winograd-e3": 1, "winograd-e4": 0}
    assert s["oracle"] == {"direct": 1, "winograd-e2": 1, "winograd-e3": 0, "winograd-e4": 0}


def test_empty_and_unfitted_inputs():
    """No examples: score refuses, selectors answer nothing; an unfitted GBT refuses to
    predict; training without any Winograd candidate is refused."""
    with pytest.raises(InvalidInputError, match="as many choices"):
        score([], [])
    assert GbtSelector().predict([]) == [] and TreeSelector().predict([]) == []
    with pytest.raises(InvalidInputError, match="not fitted"):
        GbtSelector().predict_log_ratio([Example(_layer(), "V100-SXM2", {DIRECT: 1.0})])
    with pytest.raises(InvalidInputError, match="needs examples with Winograd"):
        GbtSelector(margins=(0.0,)).fit([Example(_layer(k=1), "V100-SXM2", {DIRECT: 1.0})])
