"""search/db/queries.py against brute force over what was stored.

Reference: the stored measurements themselves (TuningDB.measurements(), each with its
``counts`` flag: ``ok`` with a positive finite time), filtered, counted, sorted and
minimised in plain Python; labels and label search by the rules in the docstrings.
The measurements mix timed and untimed ``ok`` records, failures and estimates, over
workloads that share a template and problem but differ in their parameters.
"""

from __future__ import annotations

import json

from collections import defaultdict

import pytest
from hypothesis import given, settings, strategies as st

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from search.db import Measurement, TuningDB, Workload
from search.db.conv_template import CONV_TEMPLATE
from search.db.queries import (best, best_for_layer, history_for_space, other_space_timings,
                               select_workloads, summary, workload_labels)
from search.measure.base import MeasureRecord
from search.grid_space import GridSpace

WORKLOADS = [Workload("k", [16], ("x",)), Workload("k", [16], ("x", "y")), Workload("k", [8], ("x",)),
             Workload("j", 1, ("y", "x")), Workload("a", [2], ("y",)), Workload("kk", [16], ("x",))]
DEVICES = ["v100", "a100", "GPU 3"]


@st.composite
def stored(draw):
    w = draw(st.sampled_from(WORKLOADS))
    config = {p: draw(st.integers(1, 3)) for p in w.params}
    kind = draw(st.sampled_from(["timed", "timed", "untimed", "failed"]))
    if kind == "timed":
        rec = MeasureRecord.ok(config, time_ms=draw(st.sampled_from([0.5, 1.0, 2.0, 3.5])),
                               estimate=draw(st.booleans()))
    elif kind == "untimed":
        rec = MeasureRecord.ok(config)
    else:
        rec = MeasureRecord.failed(config, "runtime_error", "no")
    return Measurement(w, draw(st.sampled_from(DEVICES)), draw(st.sampled_from(["t", "u"])), rec)


def _db(items) -> tuple[TuningDB, list[Measurement]]:
    db = TuningDB(":memory:")
    db.add(items)
    return db, db.measurements()


@settings(max_examples=30, deadline=None)
@given(st.lists(stored(), max_size=20))
def test_summary_counts_times_and_orders_each_workload_and_device(items):
    db, ms = _db(items)
    groups = defaultdict(list)
    for m in ms:
        groups[(m.workload, m.device)].append(m)
    want = {g: (len(v), sum(m.counts for m in v), min((m.time_ms for m in v if m.counts),
                                                       default=None))
            for g, v in groups.items()}
    rows = summary(db)
    assert {(r.workload, r.device): (r.measurements, r.timed, r.best_ms) for r in rows} == want
    assert len(rows) == len(want)
    keys = [(r.workload.key()[:2], r.device) for r in rows]
    assert keys == sorted(keys)


@settings(max_examples=30, deadline=None)
@given(st.lists(stored(), max_size=20), st.sampled_from(WORKLOADS), st.sampled_from(DEVICES),
       st.integers(1, 4))
def test_best_is_the_k_fastest_configurations(items, w, device, k):
    """Each configuration once, at its fastest timing."""
    db, ms = _db(items)
    fastest: dict = {}
    for m in ms:
        if m.counts and m.workload == w and m.device == device:
            key = json.dumps(m.record.config, sort_keys=True)
            fastest[key] = min(m.time_ms, fastest.get(key, m.time_ms))
    want = sorted(fastest.values())[:k]
    got = best(db, w, device, k=k)
    assert [m.time_ms for m in got] == want
    assert len({json.dumps(m.record.config, sort_keys=True) for m in got}) == len(got)
    assert all(m.counts and m.workload == w and m.device == device for m in got)


@settings(max_examples=30, deadline=None)
@given(st.lists(stored(), max_size=20), st.sampled_from([["x"], ["y", "x"], ["x", "y"], ["y"]]),
       st.lists(st.sampled_from(DEVICES), max_size=2),
       st.none() | st.lists(st.sampled_from(DEVICES), max_size=2))
def test_history_and_other_space_timings_split_the_timings_by_parameter_names(items, params,
                                                                              skip, keep):
    db, ms = _db(items)
    same = [m for m in ms if m.counts and set(m.workload.params) == set(params)]
    want = [m for m in same if m.device not in skip and (keep is None or m.device in keep)]
    # an estimate of a workload with a timing on its device is left out
    timed = {(m.workload, m.device) for m in want if not m.record.estimate}
    want = [m for m in want if not (m.record.estimate and (m.workload, m.device) in timed)]
    space = GridSpace({p: [1, 2, 3] for p in params})
    got = history_for_space(db, space, exclude_devices=skip, devices=keep)
    assert sorted(m.digest() for m in got) == sorted(m.digest() for m in want)
    assert [m.time_ms for m in got] == sorted(m.time_ms for m in want)
    assert other_space_timings(db, params) == sum(m.counts for m in ms) - len(same)


def test_workload_labels_show_parameters_only_where_labels_clash():
    ws = WORKLOADS
    short = [w.label() for w in ws]
    got = workload_labels(ws)
    for w in ws:
        clash = short.count(w.label()) > 1
        assert got[w] == w.label(params=clash)
    assert got[WORKLOADS[2]] == WORKLOADS[2].label() != got[WORKLOADS[0]]


@pytest.mark.parametrize("text", [None, "", "k", "k [16]", "k [16] (x)", "k [16] (x,y)", "(x)", "j 1",
                                  "kk [16]", "zzz"])
def test_select_workloads_by_label_text(text):
    db = TuningDB(":memory:")
    db.add([Measurement(w, "v100", "t", MeasureRecord.ok({p: 1 for p in w.params}, time_ms=1.0))
            for w in WORKLOADS])
    ws = db.workloads()
    if not text:
        want = ws
    else:
        exact = [w for w in ws if text in (w.label(), w.label(params=True))]
        want = exact or [w for w in ws if text in w.label(params=True)]
    assert select_workloads(db, text) == want


LAYER = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3)


def _config(params, i: int) -> dict:
    """A kernel config of LAYER (8x8 -> 6x6, 8 output channels), one per row ``i`` < 4
    (its z): TuningDB.add stores no other of our conv template, failed ones included."""
    if "e" in params:
        return {"e": 2, "x": 2, "y": 2, "z": i + 1, "tx": 1, "ty": 1, "tz": 1}
    return {"x": 3, "y": 3, "z": i + 1, "alpha": 1, "tx": 3, "ty": 3, "tz": 1}


def _layer_db(rows) -> TuningDB:
    """rows: (params, device, time, estimate, template)."""
    db = TuningDB(":memory:")
    db.add([Measurement(Workload(template, LAYER.replace(name=f"n{i}").to_dict(), params), device,
                        "t", MeasureRecord.ok(_config(params, i), time_ms=t, estimate=est)
                        if t else MeasureRecord.failed(_config(params, i), "runtime_error", ""))
            for i, (params, device, t, est, template) in enumerate(rows)])
    return db


DIRECT, WINO = ("x", "y", "z", "alpha", "tx", "ty", "tz"), ("e", "x", "y", "z", "tx", "ty", "tz")


@pytest.mark.parametrize("rows, algorithm, want", [
    # the fastest measured record, not a faster estimate; records counts every timing
    ([(DIRECT, "d", 3.0, False, CONV_TEMPLATE), (DIRECT, "d", 1.0, True, CONV_TEMPLATE),
      (DIRECT, "d", 2.0, False, CONV_TEMPLATE), (DIRECT, "d", None, False, CONV_TEMPLATE)],
     None, (2.0, 3, 2)),
    # only estimates: the fastest estimate
    ([(DIRECT, "d", 3.0, True, CONV_TEMPLATE), (DIRECT, "d", 1.5, True, CONV_TEMPLATE)],
     None, (1.5, 2, 0)),
    # another device, another template: not this layer's on this device
    ([(DIRECT, "e", 0.1, False, CONV_TEMPLATE), (DIRECT, "d", 0.2, False, "other.conv"),
      (DIRECT, "d", 4.0, False, CONV_TEMPLATE)], None, (4.0, 1, 1)),
    # by algorithm: Winograd configurations have e
    ([(DIRECT, "d", 1.0, False, CONV_TEMPLATE), (WINO, "d", 2.0, False, CONV_TEMPLATE)],
     "winograd", (2.0, 1, 1)),
    ([(DIRECT, "d", 1.0, False, CONV_TEMPLATE), (WINO, "d", 0.5, False, CONV_TEMPLATE)],
     "direct", (1.0, 1, 1)),
    ([(DIRECT, "d", None, False, CONV_TEMPLATE), (DIRECT, "e", 1.0, False, CONV_TEMPLATE)],
     None, None),
])
def test_best_for_layer(rows, algorithm, want):
    got = best_for_layer(_layer_db(rows), LAYER, "d", algorithm=algorithm)
    assert (got if got is None else (got.measurement.time_ms, got.records, got.measured)) == want


@pytest.mark.parametrize("k", [0, -1, True, 1.0, "2"])
def test_best_k_must_be_a_positive_row_count(k):
    with pytest.raises(InvalidInputError, match="k"):
        best(TuningDB(":memory:"), k=k)


@pytest.mark.parametrize("arg", ["exclude_devices", "devices"])
def test_device_collections_given_as_one_string_are_refused(arg):
    with pytest.raises(InvalidInputError, match=f"{arg} must be a list of device names"):
        history_for_space(TuningDB(":memory:"), GridSpace({"x": [1]}), **{arg: "v100"})
