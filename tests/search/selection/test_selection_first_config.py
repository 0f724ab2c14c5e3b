"""The configuration to measure first (search.selection.first_config)."""

from __future__ import annotations

from search.conv_space import ConvSpace
from search.selection.dataset import CLASSES, Example, examples_from_records
from search.selection.first_config import first_config_quality, nearest_config


def test_own_example_gives_its_own_best(tiny_layer, tiny_records):
    """With the layer itself among the examples, the first config is its oracle config and the
    quality is exactly 1 for every candidate."""
    ex, = examples_from_records(tiny_records)
    far = Example(tiny_layer.replace(c_in=64, c_out=64), ex.device, ex.times,
                  {c: {"bogus": 1} for c in CLASSES})
    for c in CLASSES:
        assert nearest_config(tiny_layer, "v100", c, [far, ex]) == ex.configs[c]
        assert first_config_quality(ex, c, [far, ex]) == 1.0


def test_nothing_fits_gives_none(tiny_layer, tiny_records):
    """Examples whose configs are not in the layer's space give None and quality 0."""
    ex, = examples_from_records(tiny_records)
    bad = Example(ex.layer, ex.device, ex.times, {c: {"x": 999} for c in CLASSES})
    assert nearest_config(tiny_layer, "v100", CLASSES[0], [bad]) is None
    assert first_config_quality(ex, CLASSES[0], [bad]) == 0.0
    assert not ConvSpace(tiny_layer, "v100").is_valid({"x": 999})
