"""Labels from the model measurer: the oracle of each pruned space (search.selection.labels)."""

from __future__ import annotations

import pytest

from search.conv_space import ConvSpace
from search.measure import make_measurer
from search.selection.dataset import CLASSES
from search.selection.labels import label_layers, oracle_record


def test_oracle_is_the_minimum_over_the_pruned_space(tiny_layer, tiny_records):
    """Each candidate's label is the fastest ok record of a brute-force measurement of its whole
    pruned space, labelled as an estimate with the space size in its source."""
    assert [r.candidate for r in tiny_records] == list(CLASSES)
    for rec in tiny_records:
        es = (rec.e,) if rec.e else None
        space = ConvSpace(tiny_layer, "v100", rec.algorithm, winograd_e=es)
        got = make_measurer("model", tiny_layer, "v100", rec.algorithm).measure(
            [space.get(i) for i in range(len(space))])
        best = min(r.time_ms for r in got if r.is_ok)
        assert rec.time_ms == best and rec.estimate
        assert space.is_valid(rec.config)
        assert f"oracle over {len(space)} pruned configurations" in rec.source


def test_equal_shapes_are_labelled_once(tiny_layer, monkeypatch, tiny_records):
    """Two layers of one shape: labelled once, the copy carries the second layer's name."""
    import search.selection.labels as labels
    calls = []
    monkeypatch.setattr(labels, "label_layer", lambda l, d, m: calls.append(l) or tiny_records)
    seen = []
    recs = label_layers([tiny_layer, tiny_layer.replace(name="twin")], "v100",
                        progress=lambda i, l: seen.append((i, l.name)))
    assert len(calls) == 1 and seen == [(0, "tiny"), (1, "twin")]
    assert [r.layer.name for r in recs] == ["tiny"] * 4 + ["twin"] * 4
    assert [r.time_ms for r in recs[4:]] == [r.time_ms for r in tiny_records]


def test_measurers_that_need_a_tuner_are_refused(tiny_layer):
    """cuda and emulate cannot evaluate a whole space: a ValueError says what is needed."""
    with pytest.raises(ValueError, match="need a tuner and a history database"):
        oracle_record(tiny_layer, "v100", CLASSES[0], measure="cuda")
