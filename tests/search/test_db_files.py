"""Tests of unusual files imported into the tuning database and exported again.

Each case is a file a reviewer found to break ``iobound history``: non-finite
numbers, odd timestamps, null names, list-valued parameters, logs whose records do
not match their space. The contract: the file is refused with one line (exit 2)
and the database is unchanged, or it is imported and exports again.
"""

from __future__ import annotations

import json
import os
import math
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from search.cli.main import main
from search.db import TuningDB
from search.db.db_file import DatabaseFileError
from search.db.importer import import_files, read_file
from search.kt_cache import load_cache

BASE = {"device_name": "devX", "kernel_name": "k", "problem_size": [8],
        "tune_params_keys": ["x", "y"], "tune_params": {"x": [1, 2], "y": [1, 2]},
        "objective": "time"}


def _cache_file(path, entries, **top):
    """A cache file with ``entries`` (keyed by their x,y) and ``top`` over :data:`BASE`;
    written with Python's JSON, so NaN and Infinity appear as Kernel Tuner writes them."""
    raw = {**BASE, **top, "cache": {f"{e['x']},{e['y']}": e for e in entries}}
    path.write_text(json.dumps(raw))
    return path


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _refused(capsys, argv, needle):
    """``argv`` exits 2 with one stderr line holding ``needle`` and nothing on stdout."""
    code, out, err = _run(capsys, *argv)
    assert (code, out) == (2, "") and len(err.strip().splitlines()) == 1, err
    assert needle in err and "Traceback" not in err
    return err


@pytest.mark.parametrize("field", ["compile_time", "timestamp", "nested"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_extra_values_are_stored_as_null(capsys, tmp_path, field, bad):
    """NaN or Infinity in an entry's extra field: imported as null, exported as valid JSON."""
    value = {"a": [1.0, bad]} if field == "nested" else bad
    src = _cache_file(tmp_path / "c.json", [{"x": 1, "y": 1, "time": 2.0, field: value}])
    db, out = str(tmp_path / "t.db"), tmp_path / "o.json"
    assert _run(capsys, "history", "import", str(src), "--db", db)[0] == 0
    assert _run(capsys, "history", "export", "--db", db, str(out))[0] == 0
    (entry,) = load_cache(out).entries
    assert entry["time"] == 2.0
    assert entry[field] == ({"a": [1.0, None]} if field == "nested" else None)
    assert _run(capsys, "history", "import", str(out), "--db", db, "--json")[0] == 0


@pytest.mark.parametrize("problem", [[float("nan")], {"n": float("inf")}, float("-inf")])
def test_non_finite_problem_size_is_refused(capsys, tmp_path, problem):
    """NaN or Infinity in problem_size (the workload's identity): the file is refused."""
    src = _cache_file(tmp_path / "c.json", [{"x": 1, "y": 1, "time": 2.0}], problem_size=problem)
    _refused(capsys, ["history", "import", str(src), "--db", str(tmp_path / "t.db")],
             "problem_size")


def _log_file(path, records, **header):
    """A tuning log of ``records`` (config, time_ms, extra...) over a two-parameter space."""
    head = {"schema": "iobound.tune-log", "version": 1, "kind": "header", "device": "devL",
            "template": "t", "problem": [8], "strategy": "random", "seed": 0,
            "space": {"kind": "grid", "params": ["x", "y"], "values": {"x": [1, 2], "y": [1]}},
            "measurer": {"name": "model", "toolchain": "tool v1"}, **header}
    lines = [head] + [{"kind": "record", "index": i, "record": {
        "status": "ok", "costs": [], "error": "", "estimate": False, "timestamp": 1.5e9 + i,
        "extra": {}, **r}} for i, r in enumerate(records)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_non_finite_log_extra_is_stored_as_null(tmp_path):
    """A log record's extra with NaN: stored with null there (the database holds only JSON)."""
    src = _log_file(tmp_path / "run.jsonl", [{"config": {"x": 1, "y": 1}, "time_ms": 1.0,
                                              "extra": {"z": float("nan"), "w": [float("inf")]}}])
    (m,) = read_file(src).measurements
    assert m.record.extra == {"z": None, "w": [None]}


stamps = st.one_of(st.floats(), st.integers(), st.integers(min_value=2**1024), st.text(max_size=30),
                   st.booleans(), st.none(), st.lists(st.integers(), max_size=2))


@settings(max_examples=60, deadline=None)
@given(stamps)
@example(float("nan"))
@example(float("inf"))
@example(10**400)
def test_any_cache_timestamp_keeps_the_record(stamp):
    """Whatever an entry's timestamp (NaN, 10**400, text...): the record is kept with a finite
    timestamp, and importing the file again adds nothing."""
    with tempfile.TemporaryDirectory() as tmp:
        src = _cache_file(Path(tmp) / "c.json", [{"x": 1, "y": 1, "time": 2.0, "timestamp": stamp}])
        with TuningDB(":memory:") as db:
            (f,) = import_files(db, [src])
            (again,) = import_files(db, [src])
            assert (f.read, f.added, again.added) == (1, 1, 0)
            (m,) = db.measurements()
    assert math.isfinite(m.record.timestamp)


@pytest.fixture
def local_zone(monkeypatch):
    """Set the process's time zone (TZ + tzset); the old one is back after the test."""
    def set_zone(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()
    yield set_zone
    monkeypatch.undo()
    time.tzset()


def test_timestamps_without_a_zone_are_utc(tmp_path, local_zone):
    """A naive ISO time is read as UTC: the same under every local zone, so no duplicate rows."""
    src = _cache_file(tmp_path / "c.json",
                      [{"x": 1, "y": 1, "time": 2.0, "timestamp": "2023-12-22 09:54:05"}])
    utc = datetime(2023, 12, 22, 9, 54, 5, tzinfo=timezone.utc).timestamp()
    with TuningDB(tmp_path / "t.db") as db:
        for zone in ("Asia/Tokyo", "America/New_York"):
            local_zone(zone)
            import_files(db, [src])
        assert [m.record.timestamp for m in db.measurements()] == [utc]


def test_log_timestamp_too_large_for_a_float_is_refused(capsys, tmp_path):
    """A tuning log whose record has timestamp 10**400: one line naming it, nothing stored."""
    src = _log_file(tmp_path / "run.jsonl", [{"config": {"x": 1, "y": 1}, "time_ms": 1.0,
                                              "timestamp": 10**400}])
    _refused(capsys, ["history", "import", str(src), "--db", str(tmp_path / "t.db")],
             "timestamp")


@pytest.mark.parametrize("config, needle", [
    ({"foo": 1}, "has foo"),
    ({"x": 1}, "lacks y"),
    ({"x": 1, "y": 1, "z": 1}, "has z"),
    ({"x": {"a": [1]}, "y": 1}, "'x'"),
    ({"x": float("nan"), "y": 1}, "'x'"),
])
def test_log_records_must_hold_the_space_parameters(capsys, tmp_path, config, needle):
    """A log record whose config is not the log's parameters with plain values: the whole
    import is refused with one line naming it, and the database is unchanged."""
    good = _cache_file(tmp_path / "c.json", [{"x": 1, "y": 1, "time": 2.0}])
    bad = _log_file(tmp_path / "run.jsonl", [{"config": {"x": 1, "y": 1}, "time_ms": 1.0},
                                             {"config": config, "time_ms": 1.0}])
    db = str(tmp_path / "t.db")
    assert _run(capsys, "history", "import", str(good), "--db", db)[0] == 0
    err = _refused(capsys, ["history", "import", str(good), str(bad), "--db", db], "run.jsonl")
    assert needle in err
    with TuningDB(db) as handle:
        assert handle.count() == 1


def test_list_valued_parameters_export_and_import_again(capsys, tmp_path):
    """Kernel Tuner list values (block shapes): exported as they were; re-import adds nothing."""
    src = tmp_path / "c.json"
    src.write_text(json.dumps({
        "device_name": "devL", "kernel_name": "kl", "problem_size": [1], "tune_params_keys": ["x"],
        "tune_params": {"x": [[1, 2], [3, 4]]}, "cache": {
            "[1, 2]": {"x": [1, 2], "time": 1.0}, "[3, 4]": {"x": [3, 4], "time": 2.0}}}))
    db, out = str(tmp_path / "t.db"), tmp_path / "o.json"
    assert _run(capsys, "history", "import", str(src), "--db", db)[0] == 0
    assert _run(capsys, "history", "export", "--db", db, str(out))[0] == 0
    cache = load_cache(out)
    assert cache.tune_params == {"x": [[1, 2], [3, 4]]}
    assert sorted((e["x"], e["time"]) for e in cache.entries) == [([1, 2], 1.0), ([3, 4], 2.0)]
    code, text, _ = _run(capsys, "history", "import", str(out), "--db", db, "--json")
    assert code == 0 and json.loads(text)["files"][0]["added"] == 0


def test_export_refuses_a_stored_config_that_is_no_cache_entry(capsys, tmp_path):
    """A record stored before import and add checked configs (a parameter missing): one
    line, exit 2. (Stored here past add's check, as an older iobound did.)"""
    from search.db import Measurement, Workload
    from search.db.schema import write
    from search.db.insertion import insert
    from search.measure.base import MeasureRecord
    db = tmp_path / "t.db"
    w = Workload("k", [8], ("x", "y"))
    bad = Measurement(w, "d", "t", MeasureRecord.ok({"foo": 1}, time_ms=1.0))
    with TuningDB(db) as handle:
        write(handle.connection, lambda c: insert(c, [bad], {}))
    _refused(capsys, ["history", "export", "--db", str(db), str(tmp_path / "o.json")], "foo")
    assert not (tmp_path / "o.json").exists()


@pytest.mark.parametrize("device, expect", [(None, "c"), ("v100", "v100")])
def test_null_device_name_is_absent(tmp_path, device, expect):
    """"device_name": null is no device name: --device, else the file's name (not "None")."""
    src = _cache_file(tmp_path / "c.json", [{"x": 1, "y": 1, "time": 2.0}], device_name=None)
    assert read_file(src, device=device).device == expect


def test_null_kernel_name_is_absent(tmp_path):
    """"kernel_name": null gives the template of a file without one ("", not "None")."""
    null = _cache_file(tmp_path / "a.json", [{"x": 1, "y": 1, "time": 2.0}], kernel_name=None)
    raw = json.loads(null.read_text())
    del raw["kernel_name"]
    (tmp_path / "b.json").write_text(json.dumps(raw))
    assert read_file(null).workload == read_file(tmp_path / "b.json").workload
    assert read_file(null).workload.template == ""


def test_null_names_in_a_log_header_are_absent(tmp_path):
    """A log header's null device or template: as if absent (file name; the space's kind)."""
    src = _log_file(tmp_path / "run.jsonl", [{"config": {"x": 1, "y": 1}, "time_ms": 1.0}],
                    device=None, template=None)
    f = read_file(src)
    assert (f.device, f.workload.template) == ("run", "grid")


@pytest.mark.parametrize("entries, skipped", [
    ([], 0),
    ([{"x": 1, "y": 1, "time": -1}, {"x": 2, "y": 1, "time": float("nan")},
      {"x": 1, "y": 2, "time": 0}], 3),
])
def test_nothing_usable_adds_no_workload(capsys, tmp_path, entries, skipped):
    """An empty cache, or one whose every time is unusable: no empty workload row is left,
    and the skipped entries are still counted."""
    src = _cache_file(tmp_path / "c.json", entries)
    db = str(tmp_path / "t.db")
    code, out, _ = _run(capsys, "history", "import", str(src), "--db", db, "--json")
    assert code == 0 and json.loads(out)["files"][0]["skipped"] == skipped
    with TuningDB(db) as handle:
        assert handle.workloads() == [] and handle.count() == 0


def test_gzipped_tune_log_is_read_through_gzip(capsys, tmp_path):
    """run.jsonl.gz holds the same measurements as run.jsonl; a cut-short one is one line."""
    import gzip
    plain = _log_file(tmp_path / "run.jsonl", [{"config": {"x": 1, "y": 1}, "time_ms": 1.0},
                                               {"config": {"x": 2, "y": 1}, "time_ms": 2.0}])
    packed = tmp_path / "run.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    f = read_file(packed)
    assert (f.kind, f.read) == ("tune-log", 2)
    expect = [m.digest() for m in read_file(plain).measurements]
    assert [m.digest() for m in f.measurements] == expect
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(packed.read_bytes()[:-10])
    _refused(capsys, ["history", "import", str(cut), "--db", str(tmp_path / "t.db")],
             "cut.jsonl.gz")
    named = tmp_path / "plain.jsonl.gz"  # what `tune --log plain.jsonl.gz` writes: plain text
    named.write_bytes(plain.read_bytes())
    assert [m.digest() for m in read_file(named).measurements] == expect


def test_a_logs_measurements_exported_and_imported_again_add_nothing(capsys, tmp_path):
    """Records from a tuning log keep their toolchain and timestamp through an exported cache."""
    src = _log_file(tmp_path / "run.jsonl", [{"config": {"x": 1, "y": 1}, "time_ms": 1.0},
                                             {"config": {"x": 2, "y": 1}, "status": "timeout"}])
    db, out = str(tmp_path / "t.db"), tmp_path / "o.json"
    assert _run(capsys, "history", "import", str(src), "--db", db)[0] == 0
    assert _run(capsys, "history", "export", "--db", db, str(out))[0] == 0
    code, text, _ = _run(capsys, "history", "import", str(out), "--db", db, "--json")
    assert code == 0 and json.loads(text)["files"][0]["added"] == 0
    assert json.loads(out.read_text())["toolchain"] == "tool v1"


@pytest.mark.parametrize("time_ms", [None, 0.0])
def test_export_of_untimed_records_only_is_refused(capsys, tmp_path, time_ms):
    """Only ok records without a usable time (an emulated run, a time of 0) on the device:
    no cache entry can be made; one line naming why, exit 2, no file written."""
    from iobound.errors import InvalidInputError
    from search.db import Measurement, Workload
    from search.db.export import export_cache
    from search.measure.base import MeasureRecord
    db, out = tmp_path / "emu.db", tmp_path / "o.json"
    w = Workload("k", [8], ("x", "y"))
    rec = MeasureRecord.ok({"x": 1, "y": 1}, time_ms=time_ms, surrogate_cost=40.0)
    with TuningDB(db) as handle:
        handle.add([Measurement(w, "emu", "emulate g++", rec)])
        with pytest.raises(InvalidInputError, match="no timed measurement"):
            export_cache(handle, out, w, "emu")
    _refused(capsys, ["history", "export", "--db", str(db), "--device", "emu", str(out)],
             "can become a cache entry: its 1 ok record(s) have no positive time")
    assert not out.exists()


@pytest.mark.parametrize("readonly", [True, False])
def test_a_file_that_reads_as_empty_but_is_not_is_no_database(readonly):
    """A file of /proc says its size is 0 but reads as text: SQLite took it for an empty
    database (0 records); its first bytes say what it is."""
    if not os.path.isfile("/proc/cpuinfo"):
        pytest.skip("needs /proc/cpuinfo (Linux)")
    with pytest.raises(DatabaseFileError, match="not an SQLite database$"):
        TuningDB("/proc/cpuinfo", readonly=readonly)
