"""Candidates, label records, examples and synthetic layers (search.selection.dataset)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from iobound.layer import ConvLayer
from iobound.networks import network_layers
from search.selection.dataset import (CLASSES, DIRECT, Candidate, LabelRecord, candidates,
                                      examples_from_records)
from search.selection.record_file import read_records, write_records
from search.selection.synthetic import synthetic_layers

L3 = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1, name="a")


def test_candidates_only_where_winograd_helps():
    """3x3 stride 1: direct and Winograd e=2,3,4; 1x1, strided and asymmetric: direct only."""
    assert candidates(L3) == list(CLASSES)
    assert candidates(L3.replace(k_h=1, k_w=1, padding=0)) == [DIRECT]
    assert candidates(L3.replace(stride=2)) == [DIRECT]
    assert candidates(L3.replace(k_h=1, padding=(0, 1))) == [DIRECT]


def test_candidate_rejects_bad_values():
    """A direct candidate takes no e; a Winograd one needs e in 2..4."""
    with pytest.raises(ValueError, match="direct takes no"):
        Candidate("direct", 2)
    with pytest.raises(ValueError, match="winograd e must be"):
        Candidate("winograd", 6)
    with pytest.raises(ValueError, match="algorithm must be"):
        Candidate("fft")


def test_examples_keep_the_fastest_record_per_candidate():
    """Two records of one candidate: the faster wins; an untimed one never replaces a time;
    layers of equal shape but other names are one example."""
    recs = [LabelRecord(L3, "v", "direct", None, {"x": 1}, 3.0, True),
            LabelRecord(L3.replace(name="b"), "v", "direct", None, {"x": 2}, 2.0, True),
            LabelRecord(L3, "v", "winograd", 2, {"e": 2}, 2.5, True),
            LabelRecord(L3, "v", "winograd", 2, {}, None, True),
            LabelRecord(L3, "v", "winograd", 3, {}, None, True)]
    ex, = examples_from_records(recs)
    assert ex.times[DIRECT] == 2.0 and ex.configs[DIRECT] == {"x": 2}
    assert ex.times[Candidate("winograd", 2)] == 2.5
    assert ex.best == DIRECT and ex.speedup_over_oracle(Candidate("winograd", 2)) == 0.8
    assert ex.speedup_over_oracle(Candidate("winograd", 3)) == 0.0
    assert ex.so_row().tolist() == [1.0, 0.8, 0.0, 0.0]


def test_examples_drop_layers_with_no_time():
    """A (layer, device) whose candidates all failed is no example; devices are kept apart."""
    recs = [LabelRecord(L3, "v", "direct", None, {}, None, True),
            LabelRecord(L3, "w", "direct", None, {}, 1.0, True)]
    ex, = examples_from_records(recs)
    assert ex.device == "w"


def test_records_round_trip(tmp_path):
    """write_records then read_records gives the same records."""
    recs = [LabelRecord(L3, "v", "winograd", 4, {"e": 4, "x": 4}, 1.5, True, "model"),
            LabelRecord(L3, "v", "direct", None, {}, None, False)]
    assert write_records(tmp_path / "r.jsonl", recs) == 2
    assert list(read_records(tmp_path / "r.jsonl")) == recs


@given(st.integers(0, 2**32 - 1))
def test_synthetic_layers_span_the_presets_ranges(seed):
    """Synthetic layers are Winograd candidates within the channel and size ranges of the layers
    they imitate."""
    like = network_layers("vgg16") + network_layers("alexnet")
    offered = [l for l in like if len(candidates(l)) > 1]
    layers = synthetic_layers(5, np.random.default_rng(seed), like)
    for l in layers:
        assert len(candidates(l)) == 4
        assert min(x.c_in for x in offered) <= l.c_in <= max(x.c_in for x in offered)
        assert min(x.c_out for x in offered) <= l.c_out <= max(x.c_out for x in offered)
        assert min(x.h_in for x in offered) <= l.h_in <= max(x.h_in for x in offered)
        assert l.k_h in {x.k_h for x in offered}


def test_synthetic_layers_need_winograd_layers():
    """Imitating only 1x1 layers is refused with the reason."""
    with pytest.raises(ValueError, match="at least one layer with Winograd"):
        synthetic_layers(1, np.random.default_rng(0), network_layers("mobilenet")[1:])
