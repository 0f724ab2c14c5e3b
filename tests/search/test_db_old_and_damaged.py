"""The tuning database against old and damaged files: version-0 rows migrate to the workloads
and devices a run stores today, a meta table claiming a version below 1 is refused unchanged,
damaged JSON columns are one line, and an export load_cache could not read back writes nothing."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from iobound.errors import InvalidInputError
from search.cli.main import main
from search.db import Measurement, TuningDB, Workload
from search.db.migrate import V0_SCHEMA
from search.history import History, HistoryKey
from search.kt_cache import KtCache
from search.measure.base import MeasureRecord


def _v0_file(path: Path, rows) -> Path:
    """A version-0 file as the first ``search/history.py`` wrote it (``History.add``)."""
    conn = sqlite3.connect(path)
    conn.executescript(V0_SCHEMA)
    for layer, device, toolchain, rec in rows:
        conn.execute("INSERT OR REPLACE INTO measurements VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (layer, device, toolchain,
                      json.dumps(rec.config, sort_keys=True, separators=(",", ":")),
                      rec.status.value, rec.time_ms, int(rec.estimate),
                      json.dumps(rec.to_dict(), sort_keys=True, separators=(",", ":")), "run"))
    conn.commit()
    conn.close()
    return path


REC = MeasureRecord.ok({"x": 1}, time_ms=2.0)


@pytest.mark.parametrize("problem_size", [None, ["fp16", 64], {"m": 64}])
def test_a_v0_replay_key_migrates_to_the_workload_a_fresh_run_stores(tmp_path, problem_size):
    """The version-0 tune CLI keyed a replayed cache as f"replay:{kernel}:{problem_size}"
    (Python's repr: ``None``, ``['fp16', 64]``); the migrated workload must be the one the
    same run stores in a fresh database (its problem the cache's problem_size), not the
    repr text as a string problem."""
    old = _v0_file(tmp_path / "old.db", [(f"replay:k:{problem_size}", "gpu", "replay", REC)])
    with TuningDB(old) as db:
        migrated = db.workloads()
    with History(":memory:") as fresh:
        from search.db.layer_keys import replay_layer_key
        fresh.add(HistoryKey(replay_layer_key("k", problem_size), "gpu", "replay"), [REC])
        expected = fresh.db.workloads()
    assert expected == [Workload("k", problem_size, ("x",))]
    assert [(w.template, w.problem) for w in migrated] == [("k", problem_size)]


def test_a_v0_replay_of_a_cache_naming_no_device_migrates(tmp_path):
    """A cache without device_name replayed by the version-0 CLI stored device "" with the
    toolchain ``replay:FILE:``; such a file must open (not be refused as damaged), its rows
    under the device a run on that file stores today: the file's name without endings."""
    old = _v0_file(tmp_path / "old.db", [("replay:k:[64, 64]", "", "replay:conv_T4.json:", REC)])
    expected_device = KtCache({"x": [1]}, [], path="/anywhere/conv_T4.json").device
    with TuningDB(old) as db:
        got = db.measurements()
    assert [(m.device, m.toolchain, m.record.config) for m in got] == [
        (expected_device, "replay:conv_T4.json:", {"x": 1})]


@pytest.mark.parametrize("version", ["0", "-1"])
def test_a_meta_table_claiming_a_version_below_one_is_refused_unchanged(tmp_path, version):
    """Version 0 has no meta table and no version is below 0: a file whose meta says so is
    another program's (or damaged) and must be refused, never rewritten into version 1."""
    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); "
                       "CREATE TABLE notes (t TEXT);")
    conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (version,))
    conn.commit()
    conn.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(InvalidInputError, match="app.db"):
        TuningDB(path)
    with pytest.raises(InvalidInputError):
        TuningDB(path, readonly=True)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db"]


def test_a_v0_layer_migrates_to_the_workload_a_fresh_run_of_that_layer_stores(tmp_path):
    """The version-0 CLI keyed a layer by ``json.dumps(layer.to_dict(), sort_keys=True)``
    of its day, which had no ``groups``. Migrated, the rows must be the workload a run of
    the same layer stores today: one workload, whose history best is the faster v0 record
    (not two workloads with one label that no --workload can tell apart)."""
    from iobound.networks import network_layers

    layer = network_layers("alexnet")[1]
    then = {k: v for k, v in layer.to_dict().items() if k != "groups"}
    config = {"x": 1, "y": 2, "z": 1, "alpha": 1, "tx": 1, "ty": 1, "tz": 1}  # of the layer
    fast = MeasureRecord(config, "ok", time_ms=1.0, timestamp=1.0)
    old = _v0_file(tmp_path / "h.db",
                   [(json.dumps(then, sort_keys=True), "V100-SXM2", "model v2", fast)])
    key = HistoryKey(json.dumps(layer.to_dict(), sort_keys=True), "V100-SXM2", "model v2")
    with History(old) as h:
        h.add(key, [MeasureRecord({**config, "x": 2}, "ok", time_ms=3.0, timestamp=2.0)])
        assert len(h.db.workloads()) == 1
        assert h.best(key).config == config
    code = main(["history", "export", "--db", str(old), "--layer", "alexnet.conv2",
                 str(tmp_path / "o.json"), "--json"])
    assert code == 0


def test_an_exported_cache_of_a_layer_written_before_groups_imports_to_todays_workload(tmp_path):
    """A cache ``tune --export-cache`` wrote before ConvLayer had ``groups`` (its
    problem_size the layer dict of that day) is the same layer: importing it adds to the
    workload a run of that layer stores today, not a second one with the same label."""
    from iobound.networks import network_layers
    from search.db import CONV_TEMPLATE
    from search.db.importer import import_files
    from search.kt_cache_write import write_cache

    layer = network_layers("alexnet")[1]
    then = {k: v for k, v in layer.to_dict().items() if k != "groups"}
    config = {"x": 1, "y": 2, "z": 1, "alpha": 1, "tx": 1, "ty": 1, "tz": 1}  # of the layer
    path = write_cache(tmp_path / "old.json", KtCache(
        tune_params={k: [v] for k, v in config.items()}, entries=[{**config, "time": 1.0}],
        device_name="V100-SXM2", kernel_name="iobound_direct", problem_size=then))
    today = Workload(CONV_TEMPLATE, layer.to_dict(), tuple(config))
    with TuningDB(":memory:") as db:
        db.add([Measurement(today, "V100-SXM2", "nvcc", MeasureRecord.ok({**config, "x": 2},
                                                                          time_ms=2.0))])
        (f,) = import_files(db, [path])
        assert f.workload == today
        assert db.workloads() == [today]


DAMAGE = ["UPDATE workloads SET problem='{bad'", "UPDATE workloads SET tune_params='{bad'",
          "UPDATE devices SET properties='{bad'", "UPDATE measurements SET features='{bad'"]


@pytest.mark.parametrize("sql", DAMAGE)
def test_a_damaged_json_column_is_one_line_exit_2(tmp_path, sql, capsys):
    """A database whose JSON columns another program damaged is refused in one line (exit
    2) by every history action that reads them, as a damaged record already is; never a
    traceback (json.JSONDecodeError)."""
    path = tmp_path / "t.db"
    with TuningDB(path) as db:
        db.add([Measurement(Workload("k", [8], ("x",)), "gpu", "t",
                            MeasureRecord.ok({"x": 1}, time_ms=1.0), features={"f": 1.0})])
    conn = sqlite3.connect(path)
    conn.execute(sql)
    conn.commit()
    conn.close()
    for argv in (["best", "--device", "gpu"], ["export", str(tmp_path / "o.json"), "--device", "gpu"]):
        capsys.readouterr()
        try:
            code = main(["history", *argv, "--db", str(path)])
        except SystemExit as exc:
            code = exc.code
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1 and "damaged" in err, (argv, err)
    with TuningDB(path, readonly=True) as db:
        with pytest.raises(InvalidInputError, match="damaged"):
            db.measurements()
            db.devices()  # reached when the measurements' columns are whole


def test_timings_of_a_damaged_config_column_are_bad_input(tmp_path):
    """``timings`` (tune's history) reads the config column: damaged, it is bad input."""
    path = tmp_path / "t.db"
    with TuningDB(path) as db:
        db.add([Measurement(Workload("k", [8], ("x",)), "gpu", "t",
                            MeasureRecord.ok({"x": 1}, time_ms=1.0))])
        db.connection.execute("UPDATE measurements SET config='{bad'")
        with pytest.raises(InvalidInputError, match="damaged"):
            db.timings(["x"])
