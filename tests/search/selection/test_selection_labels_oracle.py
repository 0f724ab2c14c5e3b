"""The oracle labels (search.selection.labels) are the minimum over the whole pruned space.

Reference: the space's own enumeration (``ConvSpace.get`` over every index) measured one
by one: whatever the chunk size, the label is that scan's minimum, the measurer sees
each configuration at most once, and only a few for a large space. A space that cannot be built and a space
where nothing runs give an untimed record instead of an error.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import search.measure
import search.selection.labels as labels
from search.measure.base import MeasureRecord, Status
from search.selection.dataset import CLASSES

E2 = CLASSES[1]


def _recording(monkeypatch, fail=False, zero_first=False):
    """Wrap make_measurer: record every configuration measured (and fail them if asked, or
    report 0 ms for the first, a broken timer)."""
    seen, real = [], search.measure.make_measurer

    def make(*args, **kw):
        m = real(*args, **kw)
        measure = m.measure

        def wrapped(configs):
            seen.extend(tuple(sorted(c.items())) for c in configs)
            if fail:
                return [MeasureRecord.failed(c, Status.INVALID, "stub") for c in configs]
            if zero_first and len(seen) == len(configs):
                return [MeasureRecord.ok(configs[0], time_ms=0.0)] + measure(configs[1:])
            return measure(configs)
        m.measure = wrapped
        return m
    monkeypatch.setattr(search.measure, "make_measurer", make)
    return seen


def _brute_force(layer, candidate):
    """The label a scan of every configuration gives: the least ok time, the first in
    space order among equal times."""
    space = labels.candidate_space(layer, "v100", candidate)
    configs = [space.get(i) for i in range(len(space))]
    recs = search.measure.make_measurer("model", layer, "v100", candidate.algorithm).measure(
        configs)
    ok = [r for r in recs if r.is_ok]
    best = min(ok, key=lambda r: r.time_ms) if ok else None
    return space, best


@pytest.mark.parametrize("chunk", [1, 5, 35, 36, 100])
def test_the_label_is_the_brute_force_minimum_whatever_the_chunk(tiny_layer, monkeypatch,
                                                                 chunk):
    """The model times the space chunk by chunk; the measurer confirms them fastest first,
    each configuration at most once, and the label is what a scan of all would give."""
    space, best = _brute_force(tiny_layer, E2)
    monkeypatch.setattr(labels, "_CHUNK", chunk)
    seen = _recording(monkeypatch)
    rec = labels.oracle_record(tiny_layer, "v100", E2)
    assert len(seen) == len(set(seen)) <= len(space)
    assert (rec.time_ms, rec.config) == (best.time_ms, dict(best.config))


@settings(max_examples=15, deadline=None)
@given(c_in=st.sampled_from([1, 3, 8, 16]), hw=st.integers(3, 12),
       c_out=st.sampled_from([1, 4, 8, 16]), k=st.sampled_from([1, 3]),
       stride=st.sampled_from([1, 2]), which=st.integers(0, 3))
def test_the_label_equals_a_scan_of_every_configuration(c_in, hw, c_out, k, stride, which):
    """Property: on any small layer and candidate, the oracle's label (time and config) is
    the brute-force scan's, untimed exactly when nothing is ok."""
    from iobound.layer import ConvLayer
    from search.selection.dataset import candidates
    layer = ConvLayer(n=1, c_in=c_in, h_in=hw, w_in=hw, c_out=c_out, k_h=k, k_w=k,
                      padding=k // 2, stride=stride)
    cands = candidates(layer)
    candidate = cands[which % len(cands)]
    try:
        _, best = _brute_force(layer, candidate)
    except ValueError:  # an empty space: the oracle says so without a time
        assert labels.oracle_record(layer, "v100", candidate).time_ms is None
        return
    rec = labels.oracle_record(layer, "v100", candidate)
    if best is None:
        assert rec.time_ms is None and rec.config == {}
    else:
        assert (rec.time_ms, rec.config) == (best.time_ms, dict(best.config))


def test_a_large_space_is_not_measured_config_by_config(monkeypatch):
    """Thousands of configurations, a few records: the measurer confirms the model's
    fastest (the scan measured every one: minutes for a layer of millions)."""
    from iobound.layer import ConvLayer
    from search.selection.dataset import CLASSES as classes
    layer = ConvLayer(n=1, c_in=32, h_in=14, w_in=14, c_out=64, k_h=3, k_w=3, padding=1)
    size = len(labels.candidate_space(layer, "v100", classes[0]))
    seen = _recording(monkeypatch)
    rec = labels.oracle_record(layer, "v100", classes[0])
    assert size > 5000 and rec.time_ms is not None and len(seen) <= 64


def test_a_time_that_is_no_measurement_is_never_the_label(tiny_layer, monkeypatch):
    """The tuner's rule (search.records.as_measured) holds for labels too: a 0 ms time is
    no measurement, so the label is the best of the real times of the others."""
    seen = _recording(monkeypatch, zero_first=True)
    rec = labels.oracle_record(tiny_layer, "v100", E2)
    others = [dict(c) for c in seen[1:]]
    times = search.measure.make_measurer("model", tiny_layer, "v100", "winograd").measure(others)
    assert rec.config != dict(seen[0]) and rec.time_ms == min(r.time_ms for r in times if r.is_ok)


def test_nothing_runs_gives_an_untimed_estimate(tiny_layer, monkeypatch):
    """No ok configuration: time None, no config, still flagged as the model's estimate."""
    _recording(monkeypatch, fail=True)
    rec = labels.oracle_record(tiny_layer, "v100", E2)
    assert rec.time_ms is None and rec.config == {} and rec.estimate is True
    assert "oracle over 36 pruned configurations" in rec.source


def test_a_space_that_cannot_be_built_gives_an_untimed_record(tiny_layer, monkeypatch):
    import search.conv_space

    def refuse(*args, **kw):
        raise ValueError("no tile fits")
    monkeypatch.setattr(search.conv_space, "ConvSpace", refuse)
    rec = labels.oracle_record(tiny_layer, "v100", E2)
    assert (rec.time_ms, rec.config, rec.estimate) == (None, {}, True)
    assert rec.source == "no configuration: no tile fits" and rec.candidate == E2


def test_label_layers_refuses_a_measurer_that_needs_a_tuner_up_front():
    """Refused before any layer is looked at (even with none to label)."""
    with pytest.raises(ValueError, match="need a tuner"):
        labels.label_layers([], "v100", measure="emulate")
