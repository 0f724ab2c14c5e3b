"""Tests of the tuning database: schema and migration, import rules, export, queries, concurrency."""

from __future__ import annotations

import gzip
import json
import multiprocessing
import re
import sqlite3

import pytest

from search.db import Measurement, TuningDB, Workload
from search.db.export import workload_cache
from search.db.importer import import_files, read_file
from search.db.migrate import V0_SCHEMA
from search.db.queries import history_for_space, summary
from search.db.schema import SCHEMA_VERSION, schema_version
from search.history import History, HistoryKey
from search.kt_cache import KtCache, load_cache
from search.kt_cache_write import write_cache
from search.measure.base import MeasureRecord
from search.log_writer import LogWriter
from search.grid_space import GridSpace

W = Workload("k", [8, 8], ("x", "y"))


def _cache(path, device="gpu-a", entries=None):
    entries = entries or [{"x": 1, "y": 1, "time": 2.0, "times": [2.0]},
                          {"x": 2, "y": 1, "time": 1.0, "times": [1.0]},
                          {"x": 2, "y": 2, "time": "CompilationFailedConfig"}]
    return write_cache(path, KtCache(tune_params={"x": [1, 2], "y": [1, 2]}, entries=entries,
                                     device_name=device, kernel_name="k", problem_size=[8, 8]))


def test_old_history_file_is_migrated_keeping_every_row(tmp_path):
    """A version-0 --history file opens as version 1 with its rows and keys intact."""
    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path)
    old.executescript(V0_SCHEMA)
    rec = MeasureRecord.ok({"bx": 4}, time_ms=3.0)
    old.execute("INSERT INTO measurements VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                ("replay:conv:[64, 64]", "v100", "replay:f.json:v100", '{"bx":4}', "ok", 3.0, 0,
                 json.dumps(rec.to_dict()), "random:seed0"))
    old.commit()
    old.close()
    with History(path) as h:
        key = HistoryKey("replay:conv:[64, 64]", "v100", "replay:f.json:v100")
        assert h.keys() == [key] and h.best(key).time_ms == 3.0
        assert schema_version(h.db.connection) == SCHEMA_VERSION
        assert h.db.workloads() == [Workload("conv", [64, 64], ("bx",))]


def test_newer_schema_is_refused(tmp_path):
    """A file written by a newer iobound is not silently misread."""
    path = tmp_path / "new.db"
    TuningDB(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(ValueError, match="schema version 99"):
        TuningDB(path)


def test_file_without_device_takes_the_option_or_its_name(tmp_path):
    """No device name in the file: --device, else the file name; never another device."""
    path = _cache(tmp_path / "mygpu.json", device="")
    assert read_file(path).device == "mygpu"
    assert read_file(path, device="v100").device == "v100"


@pytest.mark.parametrize("own", [" ", "\t \n"])
def test_blank_device_name_in_a_file_is_no_name(tmp_path, own):
    """A file whose device name is only spaces names no device: --device, else the file name
    (a blank device row would print as nothing in every listing)."""
    path = _cache(tmp_path / "mygpu.json", device=own)
    assert read_file(path).device == "mygpu"
    assert read_file(path, device="v100").device == "v100"


@pytest.mark.parametrize("name", ["GPU\nX", "a\x00b", "tab\there", "\x1b[31mred"])
def test_a_device_name_with_control_characters_is_refused(tmp_path, name):
    """A line break or escape in a device name (the file's or --device) would break every
    one-line listing and message: refused, naming the file, and nothing read."""
    path = _cache(tmp_path / "c.json", device=name)
    with pytest.raises(ValueError, match=r"c\.json.*device name"):
        read_file(path)
    with pytest.raises(ValueError, match="device name"):
        read_file(_cache(tmp_path / "d.json", device=""), device=name)


def test_file_naming_another_device_is_refused(tmp_path):
    """A file that names its device is never stored under a different --device."""
    path = _cache(tmp_path / "a.json", device="gpu-a")
    with pytest.raises(ValueError, match="disagrees"):
        read_file(path, device="gpu-b")


def test_bad_file_imports_nothing(tmp_path):
    """One unreadable file among good ones: error naming it, and the database unchanged."""
    good = _cache(tmp_path / "a.json")
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(gzip.compress(b'{"cache": {')[:-6])  # cut short
    with TuningDB(tmp_path / "t.db") as db:
        with pytest.raises(ValueError, match="bad.json.gz"):
            import_files(db, [good, bad])
        assert db.count() == 0


@pytest.mark.parametrize("as_path", [str, lambda p: p])
def test_one_path_given_alone_is_one_file(tmp_path, as_path):
    """import_files(db, "c.json.gz") imports that file (not one file per character); a
    pathlib.Path given alone too."""
    path = _cache(tmp_path / "c.json.gz")
    with TuningDB(":memory:") as db:
        (f,) = import_files(db, as_path(path))
        assert (f.path, f.added) == (str(path), 3)


@pytest.mark.parametrize("device", [5, 5.0, True, b"5", ["5"]])
def test_a_device_name_that_is_no_string_is_refused(tmp_path, device):
    """device=5 and device="5" would share one device row under two digests (the same file
    imported twice); a name must be a string, refused naming the value."""
    from iobound.errors import InvalidInputError
    path = _cache(tmp_path / "c.json", device="")
    with TuningDB(":memory:") as db:
        with pytest.raises(InvalidInputError, match=f"device name.*{re.escape(repr(device))}"):
            import_files(db, [path], device=device)
        with pytest.raises(InvalidInputError, match=f"device name.*{re.escape(repr(device))}"):
            db.add([Measurement(W, device, "t", MeasureRecord.ok({"x": 1, "y": 1}, time_ms=1.0))])
        assert import_files(db, [path], device="5")[0].added == 3 and db.count() == 3


def test_non_positive_or_nan_times_are_skipped(tmp_path):
    """Only positive, finite times count as measurements."""
    path = tmp_path / "c.json"
    path.write_text('{"device_name": "d", "kernel_name": "k", "problem_size": 1, '
                    '"tune_params_keys": ["x"], "tune_params": {"x": [1, 2, 3, 4]}, "cache": {'
                    '"1": {"x": 1, "time": 0.0}, "2": {"x": 2, "time": NaN}, '
                    '"3": {"x": 3, "time": -1.5}, "4": {"x": 4, "time": 2.5}}}')
    f = read_file(path)
    assert (f.read, f.skipped) == (1, 3)


def test_tune_log_import_keeps_device_toolchain_and_workload(tmp_path):
    """A JSON-lines log becomes measurements of its layer on its device with its toolchain."""
    path = tmp_path / "run.jsonl"
    from iobound.networks import get_layer
    # a real layer and kernel configs: a conv log's ok records are checked (check_config)
    params = ["x", "y", "z", "alpha", "tx", "ty", "tz"]
    header = {"layer": get_layer("resnet18.conv4_1b").to_dict(), "device": "V100-SXM2-16GB",
              "strategy": "ga", "seed": 1, "algorithm": "direct",
              "space": {"kind": "ConvSpace", "params": params,
                        "values": {p: [1, 2] for p in params}},
              "measurer": {"name": "model", "toolchain": "analytic model v1", "estimate": True}}
    ok = dict(zip(params, (2, 2, 2, 1, 1, 1, 1)))
    with LogWriter(path, header) as log:
        log.append(0, MeasureRecord.ok(ok, time_ms=2.0, estimate=True,
                                       extra={"io_words": 100}))
        log.append(1, MeasureRecord.failed({**ok, "x": 1}, "invalid"))
    with TuningDB(":memory:") as db:
        (f,) = import_files(db, [path])
        assert (f.kind, f.device, f.added) == ("tune-log", "V100-SXM2-16GB", 2)
        (m,) = db.measurements(counted_only=True)
        assert m.toolchain == "analytic model v1" and m.record.estimate
        assert m.features == {"io_words": 100.0} and m.workload.template == "iobound.conv"
        assert db.devices()["V100-SXM2-16GB"]["sm_count"] > 0  # a known preset's properties


def test_history_for_space_needs_the_same_parameter_names():
    """History of another parameter space is not offered; excluded devices are not either."""
    with TuningDB(":memory:") as db:
        other = Workload("k", [8, 8], ("x", "z"))
        db.add([Measurement(W, "a", "t", MeasureRecord.ok({"x": 1, "y": 1}, time_ms=1.0)),
                Measurement(W, "b", "t", MeasureRecord.ok({"x": 1, "y": 1}, time_ms=2.0)),
                Measurement(other, "a", "t", MeasureRecord.ok({"x": 1, "z": 1}, time_ms=1.0))])
        got = history_for_space(db, GridSpace({"y": [1, 2], "x": [1, 2]}), exclude_devices=["a"])
        assert [(m.device, m.workload) for m in got] == [("b", W)]


@pytest.mark.parametrize("arg", ["exclude_devices", "devices"])
def test_history_for_space_refuses_one_device_name_given_as_a_string(arg):
    """exclude_devices="a" would be the set of its characters (the target's own records
    leak into its history); devices="b" would match nothing. Refused, naming the value."""
    from iobound.errors import InvalidInputError
    with TuningDB(":memory:") as db:
        db.add([Measurement(W, "ab", "t", MeasureRecord.ok({"x": 1, "y": 1}, time_ms=1.0))])
        space = GridSpace({"x": [1], "y": [1]})
        with pytest.raises(InvalidInputError, match=f"{arg} must be a list of device names, "
                                                    f"got the string 'ab'"):
            history_for_space(db, space, **{arg: "ab"})
        kept = history_for_space(db, space, **{arg: ("ab",)})
        assert len(kept) == (1 if arg == "devices" else 0)


def test_summary_counts_and_best(tmp_path):
    """list: one row per workload and device, failures counted but not timed."""
    with TuningDB(":memory:") as db:
        import_files(db, [_cache(tmp_path / "a.json")])
        (row,) = summary(db)
        assert (row.device, row.measurements, row.timed, row.best_ms) == ("gpu-a", 3, 2, 1.0)


def test_export_writes_back_the_imported_cache(tmp_path):
    """cache -> database -> cache keeps every entry, including failures and extra fields."""
    entries = [{"x": 1, "y": 1, "time": 2.0, "times": [2.0], "compile_time": 5.5},
               {"x": 2, "y": 2, "time": "InvalidConfig", "compile_time": 1.0}]
    src = load_cache(_cache(tmp_path / "a.json", entries=entries))
    with TuningDB(":memory:") as db:
        import_files(db, [src.path])
        out = workload_cache(db, W, "gpu-a")
    assert out.entries == src.entries and out.tune_params == src.tune_params


def _writer(path: str, device: str, n: int) -> None:
    with TuningDB(path) as db:
        for i in range(n):  # one transaction each: the most lock contention
            db.add([Measurement(W, device, "t", MeasureRecord.ok({"x": i, "y": 1}, time_ms=1.0 + i))])


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    """Two real processes insert concurrently into one file; every row arrives."""
    path = str(tmp_path / "shared.db")
    TuningDB(path).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, dev, 150)) for dev in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    with TuningDB(path) as db:
        assert db.count() == 300
        assert {r.device: r.measurements for r in summary(db)} == {"a": 150, "b": 150}


def test_a_label_given_whole_selects_that_workload_only():
    """--workload 'k [8]' picks k, not also kk [8] whose label contains it; labels that
    collide are told apart by their parameter names."""
    from search.db.queries import select_workloads, workload_labels
    with TuningDB(":memory:") as db:
        ws = [Workload("k", [8], ("x",)), Workload("kk", [8], ("x",)), Workload("j", 1, ("x",)),
              Workload("j", 1, ("y",))]
        db.add([Measurement(w, "d", "t", MeasureRecord.ok({w.params[0]: 1}, time_ms=1.0))
                for w in ws])
        assert select_workloads(db, "k [8]") == [ws[0]]
        assert select_workloads(db, "[8]") == [ws[0], ws[1]]
        assert select_workloads(db, "j 1 (y)") == [ws[3]]
        assert workload_labels(ws) == {ws[0]: "k [8]", ws[1]: "kk [8]", ws[2]: "j 1 (x)",
                                       ws[3]: "j 1 (y)"}


@pytest.mark.parametrize("given, stored", [("v100", "V100-SXM2"), ("my lab GPU", "my lab GPU")])
def test_import_files_stores_a_presets_alias_under_its_name_as_the_cli_does(tmp_path, given,
                                                                           stored):
    """``import_files(..., device="v100")`` (the API) stores what ``history import --device
    v100`` and ``tune --device v100`` store, the preset's name: one device, one name; a name
    of no preset is stored as given."""
    path = _cache(tmp_path / "c.json", device=None)
    with TuningDB(tmp_path / "h.db") as db:
        import_files(db, [path], device=given)
        assert {r[0] for r in db.connection.execute("SELECT name FROM devices")} == {stored}
