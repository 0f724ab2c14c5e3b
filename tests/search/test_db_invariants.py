"""Invariants of the tuning database the other tests leave unchecked: what a measurement's
identity is (timestamp, toolchain, parameter order), what ``counted_only`` and
:meth:`TuningDB.timings` return and in which order, that storing value lists again keeps
them as they were, the records of other parameter spaces counted against brute force, and
that export writes each configuration's latest measurement."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from search.db import Measurement, TuningDB, Workload
from search.db.export import workload_cache
from search.db.importer import import_files
from search.db.queries import best, history_for_space, other_space_timings
from search.kt_cache import KtCache
from search.kt_cache_write import write_cache
from search.measure.base import MeasureRecord
from search.grid_space import GridSpace

times = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False)


def _ok(config: dict, t: float | None, timestamp: float = 0.0) -> MeasureRecord:
    return MeasureRecord(dict(config), "ok", time_ms=t, timestamp=float(timestamp))


@settings(deadline=None, max_examples=25)
@given(st.lists(st.tuples(st.integers(0, 5), st.one_of(st.none(), st.just(0.0), times)),
                min_size=1, max_size=12))
def test_counted_only_keeps_exactly_the_timed_ok_records(rows):
    """``counted_only`` keeps the ``ok`` records with a positive time, never an untimed
    (emulated) one or one of time 0, and ``best`` the fastest of each configuration among
    them: brute force over what was stored."""
    db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
    db.add([Measurement(w, "d", "t", _ok({"x": x}, t, timestamp=float(k)))
            for k, (x, t) in enumerate(rows)])
    want = sorted(t for _, t in rows if t)
    got = db.measurements(w, counted_only=True)
    assert [m.time_ms for m in got] == want
    fastest = {}  # config -> (its fastest time, the order that row was stored in)
    for k, (x, t) in enumerate(rows):
        if t:
            fastest[x] = min((t, k), fastest.get(x, (t, k)))
    assert [(m.record.config["x"], m.time_ms) for m in best(db, w, k=len(rows))] == \
        [(x, t) for x, (t, _) in sorted(fastest.items(), key=lambda item: item[1])]


@settings(deadline=None, max_examples=25)
@given(st.lists(st.tuples(st.sampled_from(["a", "b"]), st.sampled_from([[8], [16]]),
                          st.integers(0, 3), st.integers(0, 3), times),
                min_size=1, max_size=20))
def test_timings_are_the_counted_records_fastest_first_in_parameter_order(rows):
    """:meth:`TuningDB.timings` gives every timed record of the parameter names, fastest
    first, each config's keys in the workload's parameter order (``y`` before ``x``)."""
    db = TuningDB(":memory:")
    db.add([Measurement(Workload("k", p, ("y", "x")), d, "t",
                        _ok({"x": x, "y": y}, t, timestamp=float(k)))
            for k, (d, p, x, y, t) in enumerate(rows)])
    got = db.timings(["x", "y"])
    assert [m.time_ms for m in got] == sorted(t for *_, t in rows)
    assert all(list(m.record.config) == ["y", "x"] for m in got)
    assert all(list(m.record.config) == ["y", "x"] for m in db.measurements())
    fastest = history_for_space(db, GridSpace({"y": [0, 1, 2, 3], "x": [0, 1, 2, 3]}))
    assert [m.time_ms for m in fastest] == sorted(t for *_, t in rows)


def test_a_measurement_differing_only_in_timestamp_or_toolchain_is_another():
    """The same configuration measured again later, or with another toolchain, is a new
    measurement (its digest differs); the very same one is stored once."""
    db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
    ms = [Measurement(w, "d", tool, _ok({"x": 1}, 2.0, timestamp=stamp))
          for tool, stamp in (("nvcc 11", 1.0), ("nvcc 11", 2.0), ("nvcc 12", 1.0))]
    assert db.add(ms) == 3
    assert db.add(ms) == 0 and db.count() == 3


def test_parameter_order_is_not_part_of_a_workloads_identity():
    """A workload stored with parameters (x, y) is the one asked for as (y, x): one stored
    workload, its records found either way."""
    db = TuningDB(":memory:")
    xy, yx = Workload("k", [8], ("x", "y")), Workload("k", [8], ("y", "x"))
    db.add([Measurement(xy, "d", "t", _ok({"x": 1, "y": 2}, 1.0))])
    db.add([Measurement(yx, "d", "t", _ok({"x": 2, "y": 1}, 2.0))])
    assert len(db.workloads()) == 1
    assert len(db.measurements(yx)) == len(db.measurements(xy)) == 2
    assert len(db.timings(["y", "x"])) == 2


@settings(deadline=None, max_examples=25)
@given(st.dictionaries(st.sampled_from(["x", "y", "z"]),
                       st.lists(st.one_of(st.integers(0, 6), st.lists(st.integers(0, 2), max_size=2)),
                                max_size=6),
                       min_size=1, max_size=3), st.integers(1, 3))
def test_storing_value_lists_again_keeps_them_as_they_were(values, repeats):
    """``tune_params`` given again (a file imported twice) changes nothing: the stored
    lists are those of the first time, each value once in its first place (a cache whose
    list repeats a value, list values included, stores it once)."""
    db = TuningDB(":memory:")
    w = Workload("k", [8], tuple(values))
    db.add([], {w: values})
    first = db.tune_params(w)
    distinct = {p: [v for k, v in enumerate(vs) if v not in vs[:k]] for p, vs in values.items()}
    assert first == distinct
    for _ in range(repeats):
        db.add([], {w: values})
    assert db.tune_params(w) == first


def test_importing_a_cache_again_keeps_its_value_lists():
    """The second import of a cache file changes nothing, its ``tune_params`` included."""
    cache = KtCache(tune_params={"x": [1, 2, 4]}, kernel_name="k", device_name="gpu",
                    entries=[{"x": 1, "time": 1.0, "times": [1.0]}])
    with tempfile.TemporaryDirectory() as tmp:
        path = write_cache(Path(tmp) / "c.json", cache)
        db = TuningDB(":memory:")
        import_files(db, [path])
        before = db.tune_params(db.workloads()[0])
        import_files(db, [path])
        assert db.tune_params(db.workloads()[0]) == before == {"x": [1, 2, 4]}


param_sets = st.sampled_from([("x",), ("y",), ("x", "y"), ("y", "x")])


@settings(deadline=None, max_examples=25)
@given(st.lists(st.tuples(param_sets, st.one_of(st.none(), times)), max_size=15), param_sets)
def test_other_space_timings_counts_the_timed_records_of_other_parameter_names(rows, params):
    """:func:`other_space_timings` is the brute-force count of timed ``ok`` records whose
    workload's parameter names (as a set) are not ``params``."""
    db = TuningDB(":memory:")
    db.add([Measurement(Workload("k", [8], p), "d", "t", _ok({q: 1 for q in p}, t, timestamp=k))
            for k, (p, t) in enumerate(rows)])
    want = sum(1 for p, t in rows if t is not None and set(p) != set(params))
    assert other_space_timings(db, params) == want


@settings(deadline=None, max_examples=25)
@given(st.lists(st.tuples(st.integers(0, 2), times), min_size=1, max_size=10),
       st.randoms(use_true_random=False))
def test_export_writes_each_configurations_latest_measurement(rows, rnd):
    """Each cache entry is its configuration's measurement of the latest timestamp, whatever
    its time and the order the measurements were stored in."""
    stamps = list(range(len(rows)))
    rnd.shuffle(stamps)
    db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
    db.add([Measurement(w, "d", "t", _ok({"x": x}, t, timestamp=float(s)))
            for (x, t), s in zip(rows, stamps)])
    latest: dict = {}
    for (x, t), s in zip(rows, stamps):
        if x not in latest or s > latest[x][0]:
            latest[x] = (s, t)
    got = {e["x"]: e["time"] for e in workload_cache(db, w, "d").entries}
    assert got == {x: t for x, (_, t) in latest.items()}
