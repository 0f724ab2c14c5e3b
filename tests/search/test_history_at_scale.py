"""Tuning history read and learnt from at scale: what the fast paths give is what the
plain ones gave.

A database of many devices or layers made every ``tune --history`` start slowly: every
record's whole stored entry (Kernel Tuner's 32 timings of each) was decoded to read the
history, every layer of a network run computed every record's cross-layer rows twice,
``history best`` read every record to keep ``k``, and the models had no bound on the
rows they learn from in all (``benchmarks/history_scale.py`` measures it). Each fast
path is checked here against the plain computation it replaces.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from search.cost_model import source_caps
from search.db import CONV_TEMPLATE, Measurement, TuningDB, Workload
from search.db.queries import best, history_for_space, other_space_timings
from search.measure.base import MeasureRecord
from search.grid_space import GridSpace
from search.transfer import HistoryPrior, PriorOptions
from search.transfer import rows as rows_module
from search.transfer.layer_features import cross_layer_features
from search.zero_shot import ZeroShotOptions, history_ranking

STATUSES = ("ok", "ok", "ok", "compile_error", "runtime_error")
PARAMS = (("x", "y"), ("y", "x"), ("x",), ("x", "z"))
rows = st.lists(st.tuples(st.integers(0, 3), st.sampled_from([[8], [16]]),
                          st.sampled_from(["a100", "v100", "t4"]), st.integers(0, 3),
                          st.integers(0, 3), st.sampled_from(STATUSES),
                          st.sampled_from([1.0, 2.0, 2.5, 3.0]), st.booleans(),
                          st.sampled_from([0.0, 1.7e9])),
                min_size=0, max_size=30)


def _store(db: TuningDB, drawn) -> None:
    ms = []
    for p, problem, dev, x, y, status, t, est, stamp in drawn:
        params = PARAMS[p]
        config = {"x": x, "y": y, "z": y}
        w = Workload("k", problem, params)
        ok = status == "ok"
        ms.append(Measurement(w, dev, "t", MeasureRecord(
            {k: config[k] for k in params}, status, costs=(t, t * 1.1) if ok else (),
            time_ms=t if ok else None, estimate=est, timestamp=stamp,
            error="" if ok else "failed", extra={"regs": 32}), features={"io": t} if x else None))
    db.add(ms)


def _plain_history(db: TuningDB, params) -> list:
    """What history_for_space was before :meth:`TuningDB.timings`: workload by workload
    (a workload's estimates left out on a device where it was timed)."""
    out = [m for w in db.workloads() if set(w.params) == set(params)
           for m in db.measurements(w, counted_only=True)]
    timed = {(m.workload, m.device) for m in out if not m.record.estimate}
    out = [m for m in out if not (m.record.estimate and (m.workload, m.device) in timed)]
    out.sort(key=lambda m: m.time_ms)
    return out


def _seen(m: Measurement) -> tuple:
    r = m.record
    return (m.workload, m.device, m.toolchain, list(r.config.items()), r.status, r.time_ms,
            r.estimate, r.timestamp, m.run, m.source, m.features)


@settings(max_examples=60, deadline=None)
@given(rows, st.sampled_from([("x", "y"), ("x",), ("z", "x")]))
def test_timings_are_the_counted_measurements_of_the_space_in_the_plain_order(drawn, params):
    """Same records, same order (ties in workload order), same configs in the workload's
    parameter order, same features; only costs, error and extra are not read."""
    with TuningDB(":memory:") as db:
        _store(db, drawn)
        fast = history_for_space(db, GridSpace({p: [0, 1, 2, 3] for p in params}))
        plain = _plain_history(db, params)
        assert [_seen(m) for m in fast] == [_seen(m) for m in plain]
        assert all(m.record.costs == () and m.record.extra == {} for m in fast)


@settings(max_examples=40, deadline=None)
@given(rows, st.sampled_from([("x", "y"), ("x",), ("x", "z")]))
def test_other_space_timings_count_the_timed_records_of_other_parameter_names(drawn, params):
    with TuningDB(":memory:") as db:
        _store(db, drawn)
        expect = sum(len(db.measurements(w, counted_only=True))
                     for w in db.workloads() if set(w.params) != set(params))
        assert other_space_timings(db, params) == expect


@settings(max_examples=40, deadline=None)
@given(rows, st.integers(1, 40))
def test_a_limit_keeps_the_first_measurements(drawn, k):
    with TuningDB(":memory:") as db:
        _store(db, drawn)
        for counted in (False, True):
            every = db.measurements(counted_only=counted)
            assert [_seen(m) for m in db.measurements(counted_only=counted, limit=k)] == \
                [_seen(m) for m in every[:k]]
        firsts, seen = [], set()  # each configuration's fastest, on its device
        for m in db.measurements(counted_only=True):
            if (m.workload, m.device, str(m.record.config)) not in seen:
                seen.add((m.workload, m.device, str(m.record.config)))
                firsts.append(m)
        assert [_seen(m) for m in best(db, k=k)] == [_seen(m) for m in firsts[:k]]


@pytest.mark.parametrize("k", [0, -1, 2.5, True, "3"])
def test_a_bad_count_of_rows_is_refused_naming_it(k):
    with TuningDB(":memory:") as db:
        with pytest.raises(InvalidInputError, match="^k"):
            best(db, k=k)
        with pytest.raises(InvalidInputError, match="^limit"):
            db.measurements(limit=k)


@pytest.mark.parametrize("bad", ["x", None, 3])
def test_timings_take_a_list_of_parameter_names(bad):
    with TuningDB(":memory:") as db:
        with pytest.raises(InvalidInputError, match="param"):
            db.timings(bad)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 500), max_size=12), st.integers(1, 300), st.integers(1, 2000))
def test_source_caps_fill_the_budget_as_water_fills_vessels(sizes, per_source, total):
    caps = source_caps(sizes, per_source, total)
    whole = [min(n, per_source) for n in sizes]
    assert len(caps) == len(sizes)
    assert all(0 <= c <= w for c, w in zip(caps, whole))
    if sum(whole) <= total:
        assert caps == whole  # below the budget nothing changes
        return
    level = max(caps)
    assert all(c == w or c == level for c, w in zip(caps, whole))  # small ones whole
    if level > 1:
        assert sum(caps) <= total
    assert sum(min(w, level + 1) for w in whole) > total  # no higher common cap fits


SPACE = GridSpace({"a": list(range(8)), "b": list(range(6)), "c": [1, 2, 4]})


def _bowl(device: str, at) -> list:
    w = Workload("k", [64], SPACE.params)
    return [Measurement(w, device, "t", MeasureRecord.ok(
        SPACE.get(i), time_ms=1.0 + sum((SPACE.get(i)[k] - v) ** 2 for k, v in zip("abc", at))))
        for i in range(len(SPACE))]


def test_the_models_learn_from_at_most_max_rows_and_still_rank_the_optimum_near_the_top():
    hist = [m for d in range(6) for m in _bowl(f"gpu{d}", (5, 2, 2))]  # 6 x 144 records
    _, _, used = history_ranking(SPACE, hist, ZeroShotOptions(max_rows=300), seed=0)
    assert used <= 300
    ranked, _, _ = history_ranking(SPACE, hist, ZeroShotOptions(max_rows=300), seed=0)
    assert {"a": 5, "b": 2, "c": 2} in [SPACE.get(int(i)) for i in ranked[:3]]
    prior = HistoryPrior.fit(SPACE, hist, options=PriorOptions(max_rows=300), seed=0)
    assert {"a": 5, "b": 2, "c": 2} in [SPACE.get(int(i)) for i in prior.ranking[:5]]


def test_under_max_rows_the_models_are_the_ones_without_it():
    hist = _bowl("gpu0", (1, 4, 1)) + _bowl("gpu1", (6, 1, 4))
    for cls, fit in ((PriorOptions, lambda o: HistoryPrior.fit(SPACE, hist, options=o, seed=2)
                      .ranking), (ZeroShotOptions, lambda o: history_ranking(SPACE, hist, o, 2)[0])):
        assert fit(cls(max_rows=len(hist))).tolist() == fit(cls()).tolist()


@pytest.mark.parametrize("cls", [PriorOptions, ZeroShotOptions])
@pytest.mark.parametrize("bad", [0, 2.5, True])
def test_max_rows_must_be_a_positive_integer(cls, bad):
    with pytest.raises(InvalidInputError, match="max_rows"):
        cls(max_rows=bad)


LAYERS = [ConvLayer(n=1, c_in=c, h_in=h, w_in=h, c_out=c, k_h=3, k_w=3, padding=1)
          for c, h in ((16, 14), (32, 28))]
KNOBS = ("x", "y", "z", "alpha", "tx", "ty", "tz")
knob_rows = st.lists(st.tuples(*[st.sampled_from([1, 2, 4, 7]) for _ in KNOBS]),
                     min_size=1, max_size=12)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.sampled_from(["V100-SXM2", "T4"]), knob_rows),
                min_size=1, max_size=5), st.integers(1, 40))
def test_remembered_record_rows_are_the_rows_computed_afresh(reads, max_rows):
    """Whatever sources are read in whatever order, and however small the memory (old
    sources dropped), each row is the one cross_layer_features gives for the record."""
    from iobound.devices import get_device

    from search.conv_space import ConvSpace
    memo, saved = rows_module._RecordRowMemo(max_rows=max_rows), rows_module._MEMO
    space = ConvSpace(LAYERS[0], "V100-SXM2")
    assert space.params == KNOBS
    rows_module._MEMO = memo
    try:
        for layer, device, knobs in reads:
            w = Workload(CONV_TEMPLATE, LAYERS[layer].to_dict(), KNOBS)
            ms = [Measurement(w, device, "t", MeasureRecord.ok(dict(zip(KNOBS, k)), time_ms=1.0))
                  for k in knobs]
            got = rows_module.LayerRows(space).record_rows(ms, [None] * len(ms))
            fresh = cross_layer_features(LAYERS[layer], get_device(device), "direct",
                                         np.array(knobs, dtype=np.int64))
            for row, want in zip(got, fresh):
                if np.all(np.isfinite(want)):
                    assert row is not None and row.tolist() == want.tolist()
                else:
                    assert row is None
            assert memo._rows <= max_rows or len(memo._sources) == 1  # the source read stays
    finally:
        rows_module._MEMO = saved


def test_the_history_line_names_a_few_devices_and_json_all_with_the_seconds(tmp_path, capsys):
    """A database of 40 GPUs: the text line names six and says how many more; --json
    lists every device and the seconds the history took to read."""
    from search.cli.main import main

    replay = tmp_path / "space.json"
    params = {"x": [1, 2, 3, 4]}
    cache = {"device_name": "target", "kernel_name": "k", "problem_size": [8],
             "tune_params_keys": ["x"], "tune_params": params, "objective": "time",
             "cache": {str(x): {"x": x, "time": float(x)} for x in params["x"]}}
    replay.write_text(json.dumps(cache))
    db_path = tmp_path / "h.db"
    with TuningDB(db_path) as db:
        db.add([Measurement(Workload("k", [8], ("x",)), f"gpu{d:02d}", "t",
                            MeasureRecord.ok({"x": x}, time_ms=float(5 - x))) for d in range(40)
                for x in params["x"]])
    assert main(["tune", "--measure", f"replay:{replay}", "--history", str(db_path),
                 "--budget", "3"]) == 0
    line = next(s for s in capsys.readouterr().out.splitlines() if "history:" in s)
    assert "gpu00, gpu01, gpu02, gpu03, gpu04, gpu05 and 34 more" in line
    assert main(["tune", "--measure", f"replay:{replay}", "--history", str(db_path),
                 "--budget", "3", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["history"]
    assert len(got["devices"]) == 41 and got["seconds"] >= 0  # the first run's target too
