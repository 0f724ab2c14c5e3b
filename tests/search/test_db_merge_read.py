"""Reading another tuning database for import (search/db/merge.py), directly.

References: SQLite's file header (the 16 bytes ``SQLite format 3\\0``), and the stored
measurements themselves: read_database gives one FileImport per (workload, device)
holding exactly that pair's measurements, ordered by workload label then device, and
checks ``device`` as ``--device`` is checked even when there is nothing to read.
"""

from __future__ import annotations

import hashlib
import itertools

import pytest

from iobound.errors import InvalidInputError
from search.db import Measurement, TuningDB, Workload
from search.db.merge import is_sqlite, read_database
from search.measure.base import MeasureRecord

WORKLOADS = [Workload("k", [16], ("x",)), Workload("j", 1, ("x",)), Workload("k", [8], ("x",))]
DEVICES = ["v100", "a100", "GPU 3"]


@pytest.mark.parametrize("head, sqlite", [
    (b"SQLite format 3\x00rest", True), (b"SQLite format 3 notes\n", False),
    (b"SQLite format 3", False), (b"sqlite format 3\x00", False), (b"", False)])
def test_is_sqlite_is_sqlites_16_byte_header(tmp_path, head, sqlite):
    path = tmp_path / "f"
    path.write_bytes(head)
    assert is_sqlite(path) is sqlite


def test_a_real_database_has_the_header(tmp_path):
    TuningDB(tmp_path / "h.db").close()
    assert is_sqlite(tmp_path / "h.db")


def test_one_import_per_workload_and_device_in_label_then_device_order(tmp_path):
    path = tmp_path / "other.db"
    pairs = list(itertools.product(WORKLOADS, DEVICES))
    with TuningDB(path) as db:
        db.add([Measurement(w, d, "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + x))
                for x, (w, d) in enumerate(pairs + pairs[::2])])
        stored = {m.digest() for m in db.measurements()}
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    got = read_database(path)
    assert [(f.workload, f.device) for f in got] == sorted(
        pairs, key=lambda p: (p[0].label(), p[1]))
    for f in got:
        assert f.kind == "tuning-db" and f.read == len(f.measurements)
        assert {(m.workload, m.device) for m in f.measurements} == {(f.workload, f.device)}
    assert {m.digest() for f in got for m in f.measurements} == stored
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


@pytest.mark.parametrize("device", ["", "a\nb", "  "])
def test_a_bad_device_name_is_refused_even_for_an_empty_database(tmp_path, device):
    path = tmp_path / "empty.db"
    TuningDB(path).close()
    with pytest.raises(InvalidInputError, match="a device name must be"):
        read_database(path, device=device)
    assert read_database(path) == []


def test_a_version_0_database_is_read_as_migrated_and_left_as_it_was(tmp_path):
    """Read-only: the old file is migrated in memory, never in place."""
    import json
    import sqlite3

    from search.db.migrate import V0_SCHEMA
    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.executescript(V0_SCHEMA)
    rec = MeasureRecord.ok({"x": 1}, time_ms=2.0)
    old.execute("INSERT INTO measurements VALUES ('replay:k:[8]', 'v100', 't', '{}', 'ok', 2.0, 0, "
                "?, '')", (json.dumps(rec.to_dict()),))
    old.commit()
    old.close()
    before = path.read_bytes()
    (got,) = read_database(path)
    assert (got.device, got.read, got.measurements[0].time_ms) == ("v100", 1, 2.0)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["old.db"]


def test_a_damaged_device_name_inside_is_refused_naming_the_file(tmp_path):
    """An error about what the database holds names the database file, once."""
    import sqlite3
    path = tmp_path / "other.db"
    with TuningDB(path) as db:
        db.add([Measurement(WORKLOADS[0], "v100", "t", MeasureRecord.ok({"x": 1}, time_ms=1.0))])
    raw = sqlite3.connect(path)
    raw.execute("UPDATE devices SET name='a' || char(10) || 'b'")
    raw.commit()
    raw.close()
    with pytest.raises(InvalidInputError) as info:
        read_database(path)
    assert str(info.value).startswith(f"{path}: ") and str(info.value).count(str(path)) == 1


def test_a_file_that_is_no_database_is_refused_as_path_colon_reason(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("not a database at all, just text\n" * 20)
    with pytest.raises(InvalidInputError) as info:
        read_database(path)
    assert str(info.value).startswith(f"{path}: not an SQLite database")


def test_tables_without_their_columns_are_refused_naming_the_file(tmp_path):
    """A file whose meta says version 1 and whose tables lack their columns: one line
    naming the file and the first table's missing columns (checked on opening, before any
    read: tune --history reached SQLite's "no such column" otherwise)."""
    import sqlite3
    path = tmp_path / "odd.db"
    raw = sqlite3.connect(path)
    raw.executescript("CREATE TABLE meta (key TEXT, value TEXT); "
                      "INSERT INTO meta VALUES ('schema_version', '1'); "
                      "CREATE TABLE workloads (id INTEGER); CREATE TABLE devices (id INTEGER); "
                      "CREATE TABLE measurements (id INTEGER);")
    raw.commit()
    raw.close()
    with pytest.raises(InvalidInputError, match="damaged: its table devices lacks the "
                                                "columns name, properties") as info:
        read_database(path)
    assert str(info.value).startswith(f"{path}: ")


@pytest.mark.parametrize("record", ['{"status": 3}', '{"config": [1], "status": "ok"}', "{not"])
def test_a_damaged_record_is_one_line_naming_the_database_and_the_measurement(
        tmp_path, capsys, record):
    """A stored record that is not a measurement (no config, a config that is no mapping,
    not JSON): `history import` and `history best` end in one line, exit 2, naming the
    database, the workload and the device, never a traceback; nothing is imported."""
    import sqlite3

    from search.cli.main import main
    path = tmp_path / "other.db"
    with TuningDB(path) as db:
        db.add([Measurement(WORKLOADS[0], "v100", "t", MeasureRecord.ok({"x": 1}, time_ms=1.0))])
    conn = sqlite3.connect(path)
    with conn:  # commits
        conn.execute("UPDATE measurements SET record=?", (record,))
    conn.close()
    target = tmp_path / "t.db"
    for argv in (["import", str(path), "--db", str(target)], ["best", "--db", str(path)]):
        code = main(["history", *argv])
        out, err = capsys.readouterr()
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
        assert "damaged measurement" in err and WORKLOADS[0].label() in err and "v100" in err
        assert argv[0] != "import" or "other.db" in err
    assert not target.exists() or TuningDB(target).count() == 0
