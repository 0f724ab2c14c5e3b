"""Tests found missing by a mutation pass over the tuning database (search/db/) and the
Kernel Tuner cache modules (search/kt_cache.py, search/kt_cache_write.py): each pins one
behaviour that a plausible one-line bug could break while every other test still passed."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from search.db import Measurement, TuningDB, Workload
from search.db.conv_template import current_layer_problem
from search.db.model import recorded_workload
from search.db.queries import best
from search.measure.base import MeasureRecord

LAYER = {"n": 1, "c_in": 8, "h_in": 8, "w_in": 8, "c_out": 8, "k_h": 3, "k_w": 3}
times = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False)


def _ok(config: dict, t: float, timestamp: float = 0.0, estimate: bool = False) -> MeasureRecord:
    return MeasureRecord(dict(config), "ok", time_ms=t, timestamp=timestamp, estimate=estimate)


def test_an_estimate_and_a_measurement_of_equal_time_are_two_measurements():
    """The estimate flag is part of a measurement's identity (its digest): a model's
    estimate is never taken for the measurement of the same time and moment, nor the
    other way round (one would be dropped as already stored)."""
    db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
    ms = [Measurement(w, "d", "t", _ok({"x": 1}, 2.0, 5.0, estimate=e)) for e in (False, True)]
    assert ms[0].digest() != ms[1].digest()
    assert db.add(ms) == 2
    assert sorted(m.record.estimate for m in db.measurements()) == [False, True]


@settings(deadline=None, max_examples=25)
@given(st.lists(st.lists(st.integers(0, 9), max_size=4), min_size=1, max_size=4))
def test_value_lists_given_again_for_a_stored_workload_are_merged_in_order(batches):
    """``tune_params`` given for a workload already stored appends the values not known
    yet, in first-seen order (two caches of one kernel: export writes the union)."""
    db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
    expected: list = []
    for k, values in enumerate(batches):
        db.add([Measurement(w, "d", "t", _ok({"x": k}, 1.0 + k))], tune_params={w: {"x": values}})
        for v in values:
            if v not in expected:
                expected.append(v)
    assert db.tune_params(w) == {"x": expected}


def test_best_without_a_device_keeps_each_devices_fastest_of_a_config():
    """``best`` over every device ranks a configuration once per device (a configuration's
    fastest on one GPU does not hide its time on another)."""
    db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
    db.add([Measurement(w, d, "t", _ok({"x": 1}, t)) for d, t in (("a100", 1.0), ("v100", 3.0))]
           + [Measurement(w, "v100", "t", _ok({"x": 1}, 4.0))])
    got = [(m.device, m.time_ms) for m in best(db, w, k=10)]
    assert got == [("a100", 1.0), ("v100", 3.0)]
    assert [(m.device, m.time_ms) for m in db.measurements(
        w, counted_only=True, fastest_per_config=True)] == got


def test_a_layer_dict_with_fields_a_layer_does_not_write_stays_as_it_is():
    """Only a layer as an earlier ``to_dict`` wrote it (a subset of today's fields) is
    brought up to date; a problem with other fields is not that layer's dict, so two such
    problems stay two workloads (never merged by the layer they both parse as)."""
    for extra in ({"note": "a"}, {"note": "b"}):
        problem = {**LAYER, **extra}
        assert current_layer_problem(problem) == problem
    a = recorded_workload("iobound_direct", {**LAYER, "note": "a"}, ("x",))
    b = recorded_workload("iobound_direct", {**LAYER, "note": "b"}, ("x",))
    assert a != b
    assert current_layer_problem(LAYER)["groups"] == 1  # the old layer itself is updated


def test_a_mark_counts_the_measurement_stored_last_when_it_was_taken():
    """``timings(up_to=last_id())`` holds everything stored by then, the last one too;
    only what is stored after the mark is left out."""
    db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
    db.add([Measurement(w, "d", "t", _ok({"x": x}, 1.0 + x)) for x in range(3)])
    mark = db.last_id()
    db.add([Measurement(w, "d", "t", _ok({"x": 3}, 0.5))])
    assert sorted(m.record.config["x"] for m in db.timings(["x"], up_to=mark)) == [0, 1, 2]
    assert len(db.timings(["x"], up_to=db.last_id())) == 4


def _kt_cache(path, kernel: str, xs, device: str = "GPU"):
    from search.kt_cache import KtCache
    from search.kt_cache_write import write_cache
    return write_cache(path, KtCache(tune_params={"x": list(xs)}, kernel_name=kernel,
                                     device_name=device,
                                     entries=[{"x": x, "time": 1.0 + x} for x in xs]))


def test_a_file_that_cannot_be_stored_leaves_the_other_files_out_too(tmp_path):
    """import_files stores every file in one transaction: when storing one fails (here the
    target's row of its workload is damaged), the files before it are not stored either."""
    import sqlite3

    import pytest

    from iobound.errors import InvalidInputError
    from search.db.importer import import_files
    a, b = _kt_cache(tmp_path / "a.json", "ka", [1, 2]), _kt_cache(tmp_path / "b.json", "kb", [3])
    path = tmp_path / "t.db"
    with TuningDB(path) as db:
        import_files(db, [b])
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE workloads SET tune_params='{bad' WHERE template='kb'")
    raw.close()
    with TuningDB(path) as db:
        with pytest.raises(InvalidInputError, match="damaged"):
            import_files(db, [a, b])
        assert db.count() == 1
        assert db.connection.execute("SELECT template FROM workloads").fetchall() == [("kb",)]


def test_a_folder_import_passes_over_the_database_it_imports_into(tmp_path):
    """The target database lying in the imported folder is not read as one of its files:
    the import lists the folder's cache files only, and a folder holding nothing else is
    refused as holding nothing to import."""
    import pytest

    from iobound.errors import InvalidInputError
    from search.db.importer import import_files
    folder = tmp_path / "runs"
    folder.mkdir()
    _kt_cache(folder / "a.json", "ka", [1, 2])
    with TuningDB(folder / "t.db") as db:
        assert [(f.kind, f.added) for f in import_files(db, [folder])] == [("kt-cache", 2)]
        assert [(f.kind, f.added) for f in import_files(db, [folder])] == [("kt-cache", 0)]
    (folder / "a.json").unlink()
    with TuningDB(folder / "t.db") as db:
        with pytest.raises(InvalidInputError, match="holds no cache file"):
            import_files(db, [folder])


def _log(path, records, **header):
    """A tuning log of ``records`` over one parameter, x in 1..3."""
    from tests.search.test_db_files import _log_file
    return _log_file(path, records, **{"space": {"kind": "grid", "params": ["x"],
                                                 "values": {"x": [1, 2, 3]}}, **header})


def test_a_log_record_whose_time_is_no_measurement_is_skipped_and_counted(tmp_path):
    """A logged ``ok`` record of time 0 or less (read back as ``invalid``, marked by the
    log reader) is skipped on import and counted, as a cache entry of such a time is:
    never stored as an invalid configuration the run did not find invalid."""
    from search.db.importer import import_files, read_file
    src = _log(tmp_path / "run.jsonl", [{"config": {"x": 1}, "time_ms": 1.0},
                                        {"config": {"x": 2}, "time_ms": 0.0},
                                        {"config": {"x": 3}, "time_ms": -2.0}])
    f = read_file(src)
    assert (f.read, f.skipped) == (1, 2)
    db = TuningDB(":memory:")
    import_files(db, [src])
    assert [(m.record.config, m.record.status.value) for m in db.measurements()] == [
        ({"x": 1}, "ok")]


def test_a_logs_header_device_comes_before_its_measurers(tmp_path):
    """A log's records go under the header's ``device`` (the run's ``--device``); the
    measurer's own ``device`` only names it for a log whose header names none."""
    from search.db.importer import read_file
    folder = tmp_path
    both = _log(folder / "a.jsonl", [{"config": {"x": 1}, "time_ms": 1.0}],
                measurer={"name": "model", "device": "devM"})
    assert read_file(both).device == "devL"
    only = _log(folder / "b.jsonl", [{"config": {"x": 1}, "time_ms": 1.0}], device=None,
                measurer={"name": "model", "device": "devM"})
    assert read_file(only).device == "devM"


def test_export_keeps_the_imported_parameter_order_whatever_the_workloads(tmp_path):
    """A cache's ``tune_params_keys`` order (a Kernel Tuner cache key's order) comes back on
    export, also when the workload is named with its parameters in another order (one
    workload: parameter order is no part of its identity)."""
    from search.db.export import workload_cache
    from search.db.importer import import_files
    from search.kt_cache import KtCache
    from search.kt_cache_write import write_cache
    src = write_cache(tmp_path / "c.json", KtCache(
        tune_params={"y": [1, 2], "x": [3]}, kernel_name="k", device_name="GPU",
        entries=[{"y": 2, "x": 3, "time": 1.0}, {"y": 1, "x": 3, "time": 2.0}]))
    db = TuningDB(":memory:")
    import_files(db, [src])
    for params in (("y", "x"), ("x", "y")):
        cache = workload_cache(db, Workload("k", None, params), "GPU")
        assert cache.keys == ("y", "x")
        assert list(cache.tune_params) == ["y", "x"] and cache.tune_params["y"] == [1, 2]


def test_an_ok_time_of_exactly_the_legacy_failure_time_survives_export_and_import(tmp_path):
    """The boundary of Kernel Tuner's old failure time, ``1e20`` ms itself: a cache entry
    of that time without our ``status`` is a failed run, and an ``ok`` record of that time
    is exported with ``"status": "ok"`` so that it comes back as the measurement it was."""
    from search.kt_cache import LEGACY_FAILURE_MS, KtCache, entry_status, load_cache
    from search.kt_cache_write import cache_entry, write_cache
    from kernels.status import Status
    plain = write_cache(tmp_path / "kt.json", KtCache(
        {"x": [1]}, [{"x": 1, "time": LEGACY_FAILURE_MS}]))
    (e,) = load_cache(plain).entries
    assert entry_status(e) is Status.RUNTIME_ERROR and e["time"] == "RuntimeFailedConfig"
    rec = MeasureRecord({"x": 1}, "ok", time_ms=LEGACY_FAILURE_MS, timestamp=3.0)
    entry = cache_entry(rec, ["x"])
    assert entry["status"] == "ok"
    ours = write_cache(tmp_path / "ours.json", KtCache({"x": [1]}, [entry]))
    (back,) = load_cache(ours).entries
    assert entry_status(back) is Status.OK and back["time"] == LEGACY_FAILURE_MS


@settings(deadline=None, max_examples=20)
@given(st.floats(min_value=1e20, max_value=1e300, allow_nan=False, allow_infinity=False))
def test_a_huge_ok_time_comes_back_from_our_own_export_as_a_measurement(t):
    """Any ``ok`` time of ``1e20`` ms or more (a log or database may hold one) is exported
    with our ``status`` and read back as ``ok`` with that time, so database -> cache ->
    database adds nothing."""
    import tempfile
    from pathlib import Path

    from search.db.export import export_cache
    from search.db.importer import import_files
    db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
    db.add([Measurement(w, "d", "t", _ok({"x": 1}, t, 4.0))])
    with tempfile.TemporaryDirectory() as folder:  # hypothesis runs it many times: no tmp_path
        path = export_cache(db, Path(folder) / "c.json", w, "d")
        (f,) = import_files(db, [path])
    assert (f.read, f.added, f.skipped) == (1, 0, 0)
    assert f.measurements[0].record.status.value == "ok" and f.measurements[0].time_ms == t


def test_export_never_writes_over_the_databases_journals(tmp_path):
    """The cache is never written over the database file or its journals (``-wal``,
    ``-shm``, ``-journal``), which would damage the database; the files stay as they were."""
    import pytest

    from iobound.errors import InvalidInputError
    from search.db.export import export_cache
    path = tmp_path / "t.db"
    w = Workload("k", [8], ("x",))
    with TuningDB(path) as db:
        db.add([Measurement(w, "d", "t", _ok({"x": 1}, 1.0))])
        for end in ("", "-wal", "-shm", "-journal"):
            target = tmp_path / f"t.db{end}"
            before = target.read_bytes() if target.exists() else None
            with pytest.raises(InvalidInputError, match="itself"):
                export_cache(db, target, w, "d")
            assert (target.read_bytes() if target.exists() else None) == before
        assert db.count() == 1


def test_a_kernel_tuner_caches_export_names_no_toolchain_at_the_top(tmp_path):
    """Measurements of Kernel Tuner's own toolchain export with no top-level
    ``toolchain`` (a plain Kernel Tuner cache); another toolchain is named there."""
    from search.db.export import workload_cache
    db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
    db.add([Measurement(w, "d", "kernel_tuner", _ok({"x": 1}, 1.0)),
            Measurement(w, "e", "nvcc 12", _ok({"x": 1}, 1.0))])
    assert workload_cache(db, w, "d").meta == {}
    assert workload_cache(db, w, "e").meta == {"toolchain": "nvcc 12"}


def test_remove_reports_what_it_removed_while_another_writer_held_the_lock(tmp_path):
    """remove() reads what it removes inside its own write transaction: a measurement the
    selection names that another process stores while remove waits for the lock is
    removed and counted, never removed uncounted."""
    import threading
    import time

    from search.db.insertion import insert
    from search.db.remove import Selection, remove
    path = tmp_path / "t.db"
    w = Workload("k", [8], ("x",))
    with TuningDB(path) as db:
        db.add([Measurement(w, "d", "t", _ok({"x": 1}, 1.0), source="a.json")])
    holding, release, out = threading.Event(), threading.Event(), {}

    def other_writer():
        with TuningDB(path) as other:
            def slow(c):
                insert(c, [Measurement(w, "d", "t", _ok({"x": 2}, 2.0), source="a.json")], {})
                holding.set()
                release.wait(10)
            other.write(slow)

    def remover():
        with TuningDB(path) as db:
            out["groups"] = remove(db, Selection(source="a.json"))

    writer = threading.Thread(target=other_writer)
    writer.start()
    assert holding.wait(10)
    rm = threading.Thread(target=remover)
    rm.start()
    time.sleep(0.5)  # remove is waiting for the lock
    release.set()
    writer.join(10), rm.join(30)
    with TuningDB(path) as db:
        assert db.count() == 0
    assert sum(g.measurements for g in out["groups"]) == 2
