"""Candidates, examples and record files (search.selection.dataset) against the module's rules.

References: the module doc's rule for which layers get Winograd candidates (stride 1,
square kernel of at least 2 x 2, no dilation, ungrouped), the documented orders (class
order; ``sorted`` puts direct first, then e ascending; oracle ties go to the first class),
the JSON-lines format written by hand, and the distribution ``synthetic_layers`` documents
(log-uniform channels and sizes within the imitated ranges, multiples of 8, the imitated
kernels, "same" padding 3:1) checked by statistics over 400 draws.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from iobound.layer import ConvLayer
from iobound.networks import network_layers
from search.selection.dataset import (CLASSES, DIRECT, Candidate, Example, LabelRecord,
                                      candidates, examples_from_records)
from search.selection.record_file import read_records
from search.selection.synthetic import synthetic_layers

E2, E3, E4 = (Candidate("winograd", e) for e in (2, 3, 4))
L3 = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1, name="a")


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 2), st.integers(1, 2),
       st.integers(1, 2))
def test_winograd_is_offered_by_the_documented_rule(k_h, k_w, stride, dilation, groups):
    """Direct always; Winograd e = 2, 3, 4 exactly for stride 1, a square kernel >= 2 x 2,
    dilation 1 and one group."""
    layer = ConvLayer(n=1, c_in=4, h_in=12, w_in=12, c_out=4, k_h=k_h, k_w=k_w, stride=stride,
                      dilation=dilation, groups=groups)
    offered = stride == 1 and k_h == k_w >= 2 and dilation == 1 and groups == 1
    assert candidates(layer) == ([DIRECT, E2, E3, E4] if offered else [DIRECT])


def test_a_2x2_kernel_has_winograd_candidates():
    assert candidates(L3.replace(k_h=2, k_w=2, padding=0)) == list(CLASSES)


def test_sorting_puts_direct_first_then_e_ascending():
    assert sorted([E4, DIRECT, E3, E2]) == [DIRECT, E2, E3, E4]
    ex = Example(L3, "v", {E4: 1.0, E2: 2.0, DIRECT: 3.0, E3: None})
    assert ex.feasible == [DIRECT, E2, E4]


def test_oracle_ties_go_to_the_first_class():
    """Equal fastest times: the oracle answers the first of them in class order."""
    assert Example(L3, "v", {E4: 1.0, E2: 1.0, DIRECT: 2.0}).best == E2
    assert Example(L3, "v", {E3: 1.0, DIRECT: 1.0}).best == DIRECT


def test_an_untimed_candidate_stays_in_the_example():
    """A candidate whose only record has no time is kept with time None (it was tried),
    and a later time for it replaces the None."""
    recs = [LabelRecord(L3, "v", "direct", None, {"x": 1}, 2.0, True),
            LabelRecord(L3, "v", "winograd", 3, {}, None, True)]
    ex, = examples_from_records(recs)
    assert E3 in ex.times and ex.times[E3] is None and ex.feasible == [DIRECT]
    ex, = examples_from_records(recs + [LabelRecord(L3, "v", "winograd", 3, {"e": 3}, 1.0, True)])
    assert ex.times[E3] == 1.0 and ex.configs[E3] == {"e": 3} and ex.best == E3


def test_example_is_an_estimate_when_any_record_is():
    recs = [LabelRecord(L3, "v", "direct", None, {}, 2.0, False),
            LabelRecord(L3, "v", "winograd", 2, {}, 1.0, True)]
    assert examples_from_records(recs)[0].estimate is True
    assert examples_from_records(recs[:1])[0].estimate is False


def test_read_records_skips_blank_lines(tmp_path):
    """A records file written by hand, with blank lines, reads back its records."""
    rec = LabelRecord(L3, "v", "winograd", 2, {"e": 2}, 1.5, True, "hand")
    path = tmp_path / "r.jsonl"
    line = json.dumps({"schema": 1, **rec.to_dict()})
    path.write_text(f"\n{line}\n   \n{line}\n\n")
    assert list(read_records(path)) == [rec, rec]


@pytest.fixture(scope="module")
def imitated():
    """400 synthetic layers imitating VGG-16 and AlexNet, and the offered layers imitated."""
    like = network_layers("vgg16") + network_layers("alexnet")
    return synthetic_layers(400, np.random.default_rng(0), like), \
        [l for l in like if len(candidates(l)) > 1]


def test_synthetic_layers_follow_the_documented_distribution(imitated):
    """Channels multiples of 8 above 8; log-uniform, so the median channel count is near the
    geometric mean of the range (not the arithmetic one) and both ends are reached; every
    kernel size imitated appears; "same" padding for about 3 in 4 layers."""
    layers, like = imitated
    assert all(l.c_in <= 8 or l.c_in % 8 == 0 for l in layers)
    assert all(l.c_out % 8 == 0 for l in layers)
    for field in ("c_in", "c_out", "h_in"):
        lo, hi = min(getattr(l, field) for l in like), max(getattr(l, field) for l in like)
        values = [getattr(l, field) for l in layers]
        assert min(values) <= lo * 1.3 and max(values) >= hi / 1.3, field
        geo = math.sqrt(lo * hi)
        assert 0.8 * geo <= float(np.median(values)) <= 1.25 * geo, field
    assert {l.k_h for l in layers} == {l.k_h for l in like}
    same = np.mean([l.padding == (l.k_h // 2, l.k_h // 2) for l in layers])
    assert 0.65 <= same <= 0.85


def test_synthetic_inputs_are_at_least_the_kernel():
    """Imitating a padded input smaller than its kernel still gives valid unpadded layers."""
    like = [ConvLayer(n=1, c_in=4, h_in=2, w_in=2, c_out=8, k_h=3, k_w=3, padding=1),
            ConvLayer(n=1, c_in=16, h_in=8, w_in=8, c_out=16, k_h=3, k_w=3, padding=1)]
    layers = synthetic_layers(60, np.random.default_rng(1), like)
    assert all(3 <= l.h_in == l.w_in <= 8 for l in layers)


def test_synthetic_channels_stay_in_ranges_whose_ends_are_not_multiples_of_8():
    """Channel ranges 17..45: every draw is a multiple of 8 inside the range (24, 32 or 40),
    none rounded out of it (16, 48) and none left off the multiples (17, 45)."""
    like = [ConvLayer(n=1, c_in=17, h_in=10, w_in=10, c_out=17, k_h=3, k_w=3, padding=1),
            ConvLayer(n=1, c_in=45, h_in=12, w_in=12, c_out=45, k_h=3, k_w=3, padding=1)]
    layers = synthetic_layers(200, np.random.default_rng(0), like)
    assert {l.c_in for l in layers} == {l.c_out for l in layers} == {24, 32, 40}


def test_synthetic_channels_without_a_multiple_of_8_in_range_stay_in_range():
    """Channel range 17..23 holds no multiple of 8: the draws stay inside it."""
    like = [ConvLayer(n=1, c_in=17, h_in=10, w_in=10, c_out=17, k_h=3, k_w=3, padding=1),
            ConvLayer(n=1, c_in=23, h_in=12, w_in=12, c_out=23, k_h=3, k_w=3, padding=1)]
    layers = synthetic_layers(100, np.random.default_rng(0), like)
    assert all(17 <= l.c_in <= 23 and 17 <= l.c_out <= 23 for l in layers)
