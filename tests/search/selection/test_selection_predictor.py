"""Selectors, heuristics and scores (search.selection.predictor)."""

from __future__ import annotations

import pytest

from iobound.layer import ConvLayer
from search.selection.dataset import CLASSES, DIRECT, Candidate, Example, candidates
from search.selection.predictor import (AlwaysDirect, GbtSelector, TreeSelector, Winograd3x3,
                                        score)

E2, E4 = Candidate("winograd", 2), Candidate("winograd", 4)


def _ex(times, k=3):
    layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=k, k_w=k, padding=k // 2)
    return Example(layer, "V100-SXM2", dict(zip(CLASSES, times)))


def test_score_by_hand():
    """Accuracy, balanced accuracy (mean recall over the oracle's classes) and SO by hand."""
    exs = [_ex((1.0, 2.0, 2.0, 2.0)), _ex((1.0, 2.0, 2.0, 2.0)), _ex((2.0, 1.0, 2.0, 2.0))]
    s = score(exs, [DIRECT, E2, DIRECT])
    assert s["accuracy"] == pytest.approx(1 / 3)
    assert s["balanced_accuracy"] == pytest.approx((1 / 2 + 0) / 2)
    assert s["mean_so"] == pytest.approx((1 + 0.5 + 0.5) / 3) and s["min_so"] == 0.5
    assert s["oracle"]["direct"] == 2 and s["choices"]["winograd-e2"] == 1


def test_score_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="as many choices"):
        score([_ex((1, 1, 1, 1))], [])


def test_heuristics():
    """Winograd3x3 picks its e on 3x3 stride-1 layers only; AlwaysDirect always direct."""
    exs = [_ex((1, 2, 2, 2)), _ex((1, 2, 2, 2), k=5), _ex((1,), k=1)]
    assert Winograd3x3(4).predict(exs) == [E4, DIRECT, DIRECT]
    assert AlwaysDirect().predict(exs) == [DIRECT] * 3


@pytest.mark.parametrize("make", [GbtSelector, TreeSelector])
def test_learned_selectors_learn_the_rule(make, fabricate):
    """Trained on examples that follow a rule, both selectors reach SO >= 0.95 on fresh ones,
    above always-direct, and never answer a candidate the layer does not have."""
    train, test = fabricate(150, seed=1), fabricate(60, seed=2)
    sel = make().fit(train)
    choices = sel.predict(test)
    assert all(c in candidates(ex.layer) for c, ex in zip(choices, test))
    got = score(test, choices)["mean_so"]
    assert got >= 0.95 and got > score(test, AlwaysDirect().predict(test))["mean_so"]


def test_gbt_json_round_trip(fabricate):
    """The margin and the booster saved as JSON predict the same after loading."""
    train = fabricate(60)
    sel = GbtSelector(rounds=5, margins=(0.3,)).fit(train)
    again = GbtSelector().load_json(sel.to_json())
    assert again.margin == 0.3 and again.predict(train) == sel.predict(train)


def test_gbt_margin_from_cross_validation(fabricate):
    """The margin is one of the offered ones, chosen on the training data only; a huge margin
    makes the selector always direct."""
    sel = GbtSelector(rounds=20, margins=(0.0, 0.1)).fit(fabricate(80))
    assert sel.margin in (0.0, 0.1)
    test = fabricate(30, seed=3)
    big = GbtSelector(rounds=20, margins=(50.0,)).fit(fabricate(80))
    assert big.predict(test) == AlwaysDirect().predict(test)


def test_tree_selector_prints_rules(fabricate):
    """The tree prints as rules over the feature names, within its leaf limit."""
    sel = TreeSelector(max_leaves=4).fit(fabricate(80))
    assert sel.tree.n_leaves <= 4 and "c_in <=" in sel.rules()
