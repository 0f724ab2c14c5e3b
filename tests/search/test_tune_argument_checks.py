"""tune()'s arguments checked at the boundary, and a huge measured time surviving a
Kernel Tuner cache round trip.

1. Every public argument of :func:`search.tuner.tune` that is of the wrong kind is an
   InvalidInputError (a ValueError) naming the argument, raised before anything runs,
   never a bare TypeError/AttributeError from inside the loop; a header key cannot
   replace the run's own description (a log claiming another space or measurer misleads
   a resume's checks).
2. An ``ok`` record of any positive finite time exported to a Kernel Tuner cache (tune
   --export-cache, history export) reads back as the same ok measurement: Kernel Tuner's
   old failure time 1e20 in a foreign file stays a failure, but our own export says "ok".
"""

from __future__ import annotations

import json

import pytest

from iobound.errors import InvalidInputError
from search.db import Measurement, TuningDB, Workload
from search.db.export import export_cache
from search.db.importer import import_files
from search.kt_cache import load_cache
from search.kt_cache_write import records_to_cache, write_cache
from search.measure.base import Measurer, MeasureRecord
from search.grid_space import GridSpace
from search.tuner import tune


class _Bowl(Measurer):
    name = "bowl"

    def __init__(self):
        self.calls = 0

    def measure(self, configs):
        self.calls += len(configs)
        return [MeasureRecord.ok(c, time_ms=1.0 + (c["a"] - 5) ** 2) for c in configs]


_SPACE = GridSpace({"a": list(range(10))})
_REC = MeasureRecord.ok({"a": 1}, time_ms=1.0)


@pytest.mark.parametrize("field, value", [
    ("log", 5), ("log", ["run.jsonl"]), ("resume", 7),
    ("progress", 5), ("progress", "print"), ("progress", True),
    ("progress", lambda: None),                 # called with (done, budget, best) mid-run
    ("header", 5), ("header", "layer"), ("header", [("a", 1)]), ("header", True),
    ("header", {1: 2}),                          # JSON object keys are text
    ("header", {"note": object()}),              # not JSON
    ("header", {"space": {"kind": "other"}}),    # the run's own keys
    ("header", {"measurer": {"name": "x"}}), ("header", {"budget": 7}),
    ("header", {"schema": "x"}), ("header", {"version": 99}), ("header", {"kind": "record"}),
    ("build_strategy", None), ("build_strategy", 5),
    ("build_strategy", lambda *a: 0),           # returns no Strategy
    ("reusable", 5), ("reusable", [1, 2]), ("reusable", "ab"), ("reusable", True),
    ("reusable", {1: 5}),                        # a value that is no MeasureRecord
    ("reusable", {"x": _REC}), ("reusable", {-1: _REC}), ("reusable", {99: _REC}),
    ("reusable", {True: _REC}), ("reusable", {1.0: _REC}),
])
def test_tune_refuses_an_odd_argument_naming_it(tmp_path, field, value):
    """An InvalidInputError naming the argument, before anything is measured or written."""
    meas, log = _Bowl(), tmp_path / "run.jsonl"
    kw = {"log": str(log)} if field not in ("log", "resume") else {}
    with pytest.raises(InvalidInputError, match=field):
        tune(_SPACE, meas, strategy="grid", budget=4, seed=0, **kw, **{field: value})
    assert meas.calls == 0 and not log.exists()


@pytest.mark.parametrize("field, value", [("budget", 2 ** 20 + 1), ("patience", 2 ** 20 + 1),
                                          ("seed", 2 ** 63), ("budget", 0), ("budget", 2.0)])
def test_tune_and_the_session_refuse_the_same_numbers(tmp_path, field, value):
    """One rule for budget, patience and seed (tune() took a budget past limits.BUDGET that
    TuneSettings refused), and one default budget and strategy for both."""
    import inspect

    from search.session import TuneSettings
    from search.tune_args import DEFAULT_BUDGET, DEFAULT_STRATEGY
    meas = _Bowl()
    kw = {"budget": 4, "seed": 0, field: value}
    with pytest.raises(InvalidInputError, match=field):
        tune(_SPACE, meas, strategy="grid", **kw)
    with pytest.raises(InvalidInputError, match=field):
        TuneSettings(strategy="grid", **kw)
    assert meas.calls == 0
    params = inspect.signature(tune).parameters
    assert (params["budget"].default, params["strategy"].default) == (DEFAULT_BUDGET, DEFAULT_STRATEGY)
    assert (TuneSettings().budget, TuneSettings().strategy) == (DEFAULT_BUDGET, DEFAULT_STRATEGY)


def test_tune_still_takes_good_arguments(tmp_path):
    """The checks pass what tune() documents: a progress callable of three arguments, a
    header of JSON values, reusable records by index (numpy indices too)."""
    import numpy as np
    seen = []
    res = tune(_SPACE, _Bowl(), strategy="grid", budget=10, seed=0, log=tmp_path / "r.jsonl",
               progress=lambda done, budget, best: seen.append(done),
               header={"layer": {"n": 1}, "note": [1, 2.5]},
               reusable={np.int64(5): MeasureRecord.ok({"a": 5}, time_ms=0.5)})
    assert res.best.config == {"a": 5} and res.best.record.time_ms == 0.5
    assert len(seen) == 9 and seen[-1] == 10  # nine measured, one reused (counted)
    head = json.loads((tmp_path / "r.jsonl").read_text().splitlines()[0])
    assert head["note"] == [1, 2.5] and head["budget"] == 10 and head["kind"] == "header"


@pytest.mark.parametrize("time_ms", [2.0, 9.9e19, 1e20, 3.5e25, 1.7e308])
def test_a_huge_measured_time_round_trips_as_ok(tmp_path, time_ms):
    """database -> cache -> database adds nothing and keeps an ok record ok, whatever its
    positive finite time (the export module's claim); a tuning run's exported cache too."""
    db = TuningDB(tmp_path / "t.db")
    w = Workload("k", [8], ("x",))
    rec = MeasureRecord({"x": 2}, "ok", costs=(time_ms,), time_ms=time_ms, timestamp=5.0)
    db.add([Measurement(w, "v100", "nvcc 12", rec)])
    path = export_cache(db, tmp_path / "c.json", w, "v100")
    (entry,) = load_cache(path).entries
    assert entry["time"] == time_ms
    import_files(db, [path])
    assert [(m.record.status.value, m.record.time_ms) for m in db.measurements(w)] == [
        ("ok", time_ms)]
    cache = records_to_cache([MeasureRecord.ok({"x": 2}, time_ms=time_ms)], {"x": [2]})
    (again,) = load_cache(write_cache(tmp_path / "t.json", cache)).entries
    assert again["time"] == time_ms


def test_kernel_tuners_old_failure_time_is_still_a_failure(tmp_path):
    """A foreign cache's 1e20 (Kernel Tuner's failure time before its failure strings)
    stays a failure: only our export's explicit status ok makes it a measurement."""
    raw = {"tune_params_keys": ["x"], "tune_params": {"x": [1, 2]},
           "cache": {"1": {"x": 1, "time": 1e20}, "2": {"x": 2, "time": 1e20, "status": "ok"}}}
    path = tmp_path / "kt.json"
    path.write_text(json.dumps(raw))
    assert [e["time"] for e in load_cache(path).entries] == ["RuntimeFailedConfig", 1e20]
