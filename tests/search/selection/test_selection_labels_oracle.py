"""The oracle labels (search.selection.labels) measure the whole pruned space, once.

Reference: the space's own enumeration (``ConvSpace.get`` over every index): whatever
the chunk size, the measurer must see each configuration exactly once, and the label
is the minimum of a brute-force measurement. A space that cannot be built and a space
where nothing runs give an untimed record instead of an error.
"""

from __future__ import annotations

import pytest

import search.measure
import search.selection.labels as labels
from search.conv_space import ConvSpace
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


@pytest.mark.parametrize("chunk", [1, 5, 35, 36, 100])
def test_every_configuration_is_measured_once_whatever_the_chunk(tiny_layer, monkeypatch,
                                                                 chunk):
    space = ConvSpace(tiny_layer, "v100", "winograd", winograd_e=(2,))
    want = sorted(tuple(sorted(space.get(i).items())) for i in range(len(space)))
    monkeypatch.setattr(labels, "_CHUNK", chunk)
    seen = _recording(monkeypatch)
    rec = labels.oracle_record(tiny_layer, "v100", E2)
    assert sorted(seen) == want
    times = search.measure.make_measurer("model", tiny_layer, "v100", "winograd").measure(
        [dict(c) for c in want])
    assert rec.time_ms == min(r.time_ms for r in times if r.is_ok)


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
