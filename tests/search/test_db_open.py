"""Tests of opening the tuning database: files that are not one, damaged ones, read-only use.

The contract: a file that is not an iobound tuning database (another program's
SQLite file, a damaged one) is one line on stderr and exit 2 for every action,
and the file is left as it was; ``list``, ``best`` and ``export`` never change the
database file; an import that fails leaves no new database file behind.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from iobound.errors import InvalidInputError
from search.cli.main import main
from search.db import Measurement, TuningDB, Workload
from search.db.migrate import V0_SCHEMA
from search.measure.base import MeasureRecord

ACTIONS = ["list", "best", "export", "import"]


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _action(action, db, tmp_path, cache):
    """The argv of ``history ACTION`` on ``db`` (export writes o_<db>.json: one file per
    database, as an export never replaces another's measurements; import reads ``cache``)."""
    extra = {"export": [str(tmp_path / f"o_{db.stem}.json")], "import": [str(cache)]}.get(action, [])
    return ["history", action, *extra, "--db", str(db)]


def _sqlite(path, script):
    conn = sqlite3.connect(path)
    conn.executescript(script)
    conn.commit()
    conn.close()
    return path


def _refused_unchanged(capsys, argv, path, needle):
    """``argv`` exits 2 with one stderr line holding ``needle``; ``path`` is byte for byte
    as it was."""
    before = path.read_bytes()
    code, out, err = _run(capsys, *argv)
    assert (code, out) == (2, ""), err
    assert len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err
    assert path.read_bytes() == before


@pytest.fixture
def cache(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"device_name": "d", "kernel_name": "k", "problem_size": [8],
                                "tune_params": {"x": [1, 2]},
                                "cache": {"1": {"x": 1, "time": 1.0}}}))
    return path


@pytest.mark.parametrize("action", ACTIONS)
def test_another_programs_sqlite_file_is_refused(capsys, tmp_path, cache, action):
    """A SQLite file with other tables and no meta: refused, and no tables added to it."""
    db = _sqlite(tmp_path / "f.db", "CREATE TABLE users (id INT, name TEXT);"
                                    "INSERT INTO users VALUES (1, 'a');")
    _refused_unchanged(capsys, _action(action, db, tmp_path, cache), db,
                       "not an iobound tuning database")


def test_tune_history_refuses_another_programs_sqlite_file(capsys, tmp_path, synth_cache_path):
    """tune --history on a foreign SQLite file: refused before tuning, the file unchanged."""
    db = _sqlite(tmp_path / "f.db", "CREATE TABLE measurements (a INT, b TEXT);")
    argv = ["tune", "--measure", f"replay:{synth_cache_path}", "--budget", "3", "--history",
            str(db)]
    _refused_unchanged(capsys, argv, db, "not an iobound tuning database")


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("script, needle", [
    ("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
     "INSERT INTO meta VALUES ('schema_version', 'abc');", "schema_version"),
    ("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
     "INSERT INTO meta VALUES ('schema_version', '1');", "lacks"),
    ("CREATE TABLE meta (a INT);", "not an iobound tuning database"),
    (V0_SCHEMA + "INSERT INTO measurements VALUES ('L', 'v100', 't', '{}', 'ok', 2.0, 0, "
                 "'{not json', '');", "version-0"),
    (V0_SCHEMA + "INSERT INTO measurements VALUES ('L', 'v100', 't', '{}', 'ok', 2.0, 0, "
                 "'{\"status\": \"ok\"}', '');", "version-0"),
])
def test_a_damaged_database_is_one_line(capsys, tmp_path, cache, action, script, needle):
    """A meta table without a usable version, or without the other tables, or a version-0
    file with a record that is not one: one line naming it, the file unchanged."""
    db = _sqlite(tmp_path / "t.db", script)
    _refused_unchanged(capsys, _action(action, db, tmp_path, cache), db, needle)


@pytest.mark.parametrize("action", ACTIONS)
def test_a_malformed_database_file_is_one_line(capsys, tmp_path, cache, action):
    """Pages of a database overwritten (SQLite: 'malformed', found only when the rows are
    read), or the file cut short: one line, exit 2, the file unchanged."""
    db = tmp_path / "t.db"
    w = Workload("k", [8], ("x",))
    with TuningDB(db) as handle:
        handle.add([Measurement(w, "d", "t", MeasureRecord.ok({"x": i}, time_ms=1.0 + i))
                    for i in range(400)])
    data = bytearray(db.read_bytes())
    data[5 * 4096: 13 * 4096] = b"Z" * (8 * 4096)
    db.write_bytes(bytes(data))
    _refused_unchanged(capsys, _action(action, db, tmp_path, cache), db, "malformed")
    db.write_bytes(bytes(data[: len(data) // 2]))
    _refused_unchanged(capsys, _action(action, db, tmp_path, cache), db, "t.db")


@pytest.mark.parametrize("action", ["list", "best", "export"])
def test_reading_actions_leave_the_file_as_it_was(capsys, tmp_path, cache, action):
    """list, best and export open the database read-only: a 0-byte file stays 0 bytes, a
    version-0 file stays version 0 (migrated in memory only), a current one unchanged."""
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    v0 = _sqlite(tmp_path / "v0.db", V0_SCHEMA + "INSERT INTO measurements VALUES "
                 "('L', 'v100', 't', '{\"x\":1}', 'ok', 2.0, 0, '{\"config\": {\"x\": 1}, "
                 "\"status\": \"ok\", \"time_ms\": 2.0}', '');")
    current = tmp_path / "cur.db"
    assert _run(capsys, "history", "import", str(cache), "--db", str(current))[0] == 0
    for db in (empty, v0, current):
        before = db.read_bytes()
        code, _, err = _run(capsys, *_action(action, db, tmp_path, cache))
        assert "Traceback" not in err and db.read_bytes() == before
        assert code == (0 if db != empty else {"list": 0, "best": 1, "export": 2}[action])
    code, out, _ = _run(capsys, "history", "list", "--db", str(v0), "--json")
    assert code == 0 and [r["best_ms"] for r in json.loads(out)] == [2.0]


def test_a_failed_import_leaves_no_new_database_file(capsys, tmp_path, cache):
    """Import into a path that did not exist, of a file that cannot be read: no file left."""
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    db = tmp_path / "new.db"
    code, _, err = _run(capsys, "history", "import", str(cache), str(bad), "--db", str(db))
    assert code == 2 and "bad.json" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json", "c.json"]


def _not_sqlite(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("these are notes, not a database " * 40)
    return path


@pytest.mark.parametrize("readonly", [False, True])
@pytest.mark.parametrize("make, needle", [
    (lambda tmp: tmp, "is a folder"),
    (lambda tmp: tmp / "no" / "such" / "t.db", "does not exist"),
    (_not_sqlite, "not an SQLite database"),
    (lambda tmp: "/dev/null", "not a regular file"),
])
def test_a_path_that_is_no_database_file_is_bad_input_naming_it(tmp_path, make, needle,
                                                                 readonly):
    """A folder, a missing folder, a file of another kind, a device: InvalidInputError
    naming the path and what is wrong (never SQLite's 'unable to open database file')."""
    from iobound.errors import InvalidInputError
    path = make(tmp_path)
    with pytest.raises(InvalidInputError, match=needle) as info:
        TuningDB(path, readonly=readonly)
    assert str(path) in str(info.value) and len(str(info.value).splitlines()) == 1


@pytest.mark.parametrize("path, readonly, needle", [
    ("", False, "the path is empty"), ("  ", True, "the path is empty"),
    (":memory:", True, "in-memory database"), ("missing.db", True, "no such file")])
def test_an_empty_path_or_nothing_to_read_is_refused(tmp_path, monkeypatch, path, readonly,
                                                     needle):
    """An empty path (SQLite would open a private temporary database), a read-only
    in-memory database, a read-only file that is not there: refused, nothing created."""
    from iobound.errors import InvalidInputError
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidInputError, match=needle):
        TuningDB(path, readonly=readonly)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("make, needle", [(_not_sqlite, "not an SQLite database"),
                                          (lambda tmp: "/dev/null", "not a regular file")])
def test_tune_history_that_is_no_database_is_one_line_naming_the_flag(capsys, tmp_path,
                                                                      synth_cache_path, make,
                                                                      needle):
    """tune --history FILE where FILE is no database: '--history FILE: why', exit 2, before
    anything is tuned."""
    path = make(tmp_path)
    code, out, err = _run(capsys, "tune", "--measure", f"replay:{synth_cache_path}",
                          "--budget", "3", "--history", str(path))
    assert (code, out) == (2, "") and len(err.strip().splitlines()) == 1, err
    assert f"--history {path}: " in err and needle in err and "Traceback" not in err


def test_history_import_into_a_folder_is_one_line_naming_the_flag(capsys, tmp_path, cache):
    """history import --db FOLDER: '--db FOLDER: ... is a folder', exit 2."""
    code, out, err = _run(capsys, "history", "import", str(cache), "--db", str(tmp_path))
    assert (code, out) == (2, "") and len(err.strip().splitlines()) == 1, err
    assert f"--db {tmp_path}: " in err and "is a folder" in err


def test_select_history_that_is_no_database_is_one_line_naming_the_flag(capsys, tmp_path):
    """select --history FILE where FILE is not SQLite's: '--history FILE: why' once."""
    path = _not_sqlite(tmp_path)
    code, out, err = _run(capsys, "select", "--layer", "cin=2,hin=4,cout=2,kh=3,pad=1",
                          "--history", str(path))
    assert (code, out) == (2, "") and len(err.strip().splitlines()) == 1, err
    assert f"--history {path}: not an SQLite database" in err and err.count(str(path)) == 1


@pytest.mark.parametrize("path", [None, 2.5, True, 0, b"x.db", ["x.db"], object()])
def test_a_path_of_another_type_is_refused_and_makes_no_file(path, tmp_path, monkeypatch):
    """``TuningDB(None)`` created a database file named 'None' (2.5: '2.5'...) in the
    working folder: str() of anything was taken as the path."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidInputError, match="database path must be a str"):
        TuningDB(path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("readonly", [None, "no", 1, 0])
def test_readonly_is_a_flag(readonly, tmp_path):
    """``readonly="no"`` opened the database read-only (a truthy stand-in)."""
    with pytest.raises(InvalidInputError, match="readonly must be True or False"):
        TuningDB(tmp_path / "h.db", readonly=readonly)


def test_a_closed_database_says_so(tmp_path):
    """After close(), every method was sqlite3.ProgrammingError; closing twice is fine."""
    db = TuningDB(tmp_path / "h.db")
    db.close()
    db.close()
    for call in (db.count, db.workloads, db.devices, db.measurements, lambda: db.add([])):
        with pytest.raises(InvalidInputError, match="is closed"):
            call()


@pytest.mark.parametrize("name", ["h.json", "h.JSONL", "h.json.gz"])
@pytest.mark.parametrize("empty_file", [False, True])
def test_a_new_database_under_a_cache_or_log_name_is_refused(capsys, tmp_path, cache, name,
                                                             empty_file):
    """history import --db cache.json (or tune --history run.jsonl) where the file is
    missing or empty made an SQLite database under a cache's or a log's name: the option
    was taken for an output. One line, exit 2, nothing written."""
    db = tmp_path / name
    if empty_file:
        db.write_bytes(b"")
    for argv in (["history", "import", str(cache), "--db", str(db)],
                 ["tune", "--layer", "cin=2,hin=4,cout=2,kh=3,pad=1", "--budget", "2",
                  "--history", str(db)]):
        code, out, err = _run(capsys, *argv)
        assert (code, out) == (2, "") and len(err.strip().splitlines()) == 1, err
        assert "not for a new tuning database" in err and str(db) in err
        assert db.exists() == empty_file and (not empty_file or db.read_bytes() == b"")


def test_an_existing_database_under_a_json_name_still_opens(tmp_path, cache):
    """The refusal is for creating one: a database made before under such a name is read."""
    db = tmp_path / "old.json"
    TuningDB(db).close()
    assert main(["history", "list", "--db", str(db)]) == 0
    assert main(["history", "import", str(cache), "--db", str(db)]) == 0
