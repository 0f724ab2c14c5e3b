"""Edges of search/db/schema.py and search/db/transactions.py that the CLI-level tests do not reach.

References: the module's documented contract (the version of an empty file is the
current one, a newer version is refused, a ``readonly`` file is never written, a
path that cannot be a file is a DatabaseFileError) and SQLite itself (a file's bytes,
its ``journal_mode``); :func:`write`'s retry rule is checked against a stand-in
connection whose ``BEGIN IMMEDIATE`` fails a scripted number of times.
"""

from __future__ import annotations

import json
import pickle
import sqlite3
import types

import pytest

from iobound.errors import InvalidInputError
from search.db import schema, transactions
from search.db.migrate import V0_SCHEMA
from search.db.schema import SCHEMA_VERSION, DatabaseFileError, connect, schema_version, write
from search.measure.base import MeasureRecord


def test_a_file_without_tables_has_the_current_version():
    """An empty SQLite file is created as the current version, so its version is that."""
    assert schema_version(sqlite3.connect(":memory:")) == SCHEMA_VERSION


@pytest.mark.parametrize("readonly", [False, True])
def test_a_newer_schema_version_is_refused_unchanged(tmp_path, readonly):
    """A database whose meta says a version above this iobound's is refused, not read."""
    path = tmp_path / "new.db"
    connect(path).close()
    raw = sqlite3.connect(path)
    raw.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    raw.commit()
    raw.close()
    before = path.read_bytes()
    with pytest.raises(DatabaseFileError, match=f"schema version {SCHEMA_VERSION + 1}"):
        connect(path, readonly=readonly)
    assert path.read_bytes() == before


def test_readonly_reads_a_rollback_journal_database_and_leaves_it_so(tmp_path):
    """A current-version file in SQLite's default journal mode (written by another tool)
    opens read-only, and its bytes and journal mode stay as they were."""
    path = tmp_path / "h.db"
    conn = connect(path)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    before = path.read_bytes()
    conn = connect(path, readonly=True)
    assert schema_version(conn) == SCHEMA_VERSION
    conn.close()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.db"]
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_a_path_holding_a_nul_character_is_refused(tmp_path):
    """No file name holds NUL: a DatabaseFileError saying so (not SQLite's ValueError)."""
    with pytest.raises(DatabaseFileError, match="NUL character"):
        connect(str(tmp_path / "a\0b.db"))


class _BytesPath:
    """An os.PathLike whose path is bytes."""

    def __fspath__(self):
        return b"x.db"


@pytest.mark.parametrize("path", [b"x.db", _BytesPath(), None, 3])
def test_connect_refuses_a_path_of_another_type(tmp_path, monkeypatch, path):
    """connect itself (not only TuningDB) refuses bytes (also through __fspath__) and
    non-paths, creating nothing."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidInputError, match="must be a str or os.PathLike"):
        connect(path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("readonly", [1, "yes", None])
def test_connect_refuses_a_readonly_that_is_no_flag(tmp_path, readonly):
    with pytest.raises(InvalidInputError, match="readonly must be True or False"):
        connect(tmp_path / "h.db", readonly=readonly)
    assert list(tmp_path.iterdir()) == []


class _Scripted:
    """A connection whose ``BEGIN IMMEDIATE`` (or ``failing``) raises the next of
    ``failures`` until they run out; it counts the attempts."""

    def __init__(self, failures, failing="BEGIN IMMEDIATE"):
        self.failures, self.begins, self.in_transaction = list(failures), 0, False
        self.failing = failing

    def execute(self, sql):
        if sql == self.failing:
            self.begins += 1
            if self.failures:
                raise sqlite3.OperationalError(self.failures.pop(0))
            self.in_transaction = True
        elif sql in ("COMMIT", "ROLLBACK"):
            self.in_transaction = False


@pytest.fixture
def no_pause(monkeypatch):
    """No real pause: a clock that moves only by each pause plus the slice a
    ``BEGIN IMMEDIATE`` waited (the scripted connection waits none)."""
    now = [0.0]

    def sleep(s):
        now[0] += s + transactions.WAIT_SLICE_MS / 1000

    clock = types.SimpleNamespace(sleep=sleep, monotonic=lambda: now[0])
    monkeypatch.setattr(schema, "time", clock)  # _wal's pauses
    monkeypatch.setattr(transactions, "time", clock)  # write's
    return now


@pytest.mark.parametrize("message", ["database is locked", "database is busy",
                                     "database table is locked"])
def test_write_starts_over_while_the_database_is_locked_or_busy(no_pause, message):
    """A lock (SQLITE_LOCKED or SQLITE_BUSY) held by another writer: try again."""
    conn = _Scripted([message] * 3)
    assert write(conn, lambda c: "done") == "done"
    assert conn.begins == 4 and not conn.in_transaction


def test_write_gives_up_with_sqlites_error_after_its_wait(no_pause):
    """Locked on every attempt: tries again until WRITE_WAIT_S has passed, then the lock
    error itself."""
    conn = _Scripted(["database is locked"] * 100_000)
    with pytest.raises(sqlite3.OperationalError, match="^database is locked$"):
        write(conn, lambda c: "never")
    assert transactions.WRITE_WAIT_S <= no_pause[0] < transactions.WRITE_WAIT_S + 1
    assert conn.begins >= transactions.WRITE_WAIT_S / (transactions.WAIT_SLICE_MS / 1000 + 0.1)


def test_a_signal_the_caller_lets_end_waits_ends_the_wait_for_a_lock(no_pause):
    """Within signals_deferred(give_up_waits=True) a noted signal ends the wait at the next
    slice (the run's log holds what was to be stored); a deferred block that does not
    let it (the default) waits on, and so does a write with no signal noted."""
    import signal

    from search.interrupts import signals_deferred
    with signals_deferred(give_up_waits=True) as deferred:
        conn = _Scripted(["database is locked"] * 100_000)
        deferred.signal = signal.SIGINT
        with pytest.raises(sqlite3.OperationalError, match="locked .not waited for: interrupted"):
            write(conn, lambda c: "never")
        assert conn.begins == 1
    with signals_deferred() as deferred:
        deferred.signal = signal.SIGINT
        conn = _Scripted(["database is locked"] * 3)
        assert write(conn, lambda c: "done") == "done" and conn.begins == 4


def test_write_raises_another_error_at_once(no_pause):
    conn = _Scripted(["disk I/O error"])
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        write(conn, lambda c: "never")
    assert conn.begins == 1


@pytest.mark.parametrize("message, raised", [
    ("unable to open database file", DatabaseFileError),
    ("database is locked", sqlite3.OperationalError), ("disk I/O error", sqlite3.OperationalError)])
def test_only_sqlites_unable_to_open_is_a_file_error(tmp_path, monkeypatch, message, raised):
    """The documented split: SQLite failing to open the file names the file; a lock held
    too long or an I/O error stays SQLite's OperationalError."""
    def fail(path, readonly):
        raise sqlite3.OperationalError(message)

    monkeypatch.setattr(schema, "_open", fail)
    with pytest.raises((sqlite3.OperationalError, DatabaseFileError)) as info:
        connect(tmp_path / "h.db")
    assert type(info.value) is raised
    assert message in str(info.value)


def test_wal_mode_waits_for_readers_a_bounded_number_of_times(no_pause):
    """Switching to WAL needs a moment without readers: a lock is waited out, at most
    WRITE_ATTEMPTS times; another error is raised at once."""
    wal = "PRAGMA journal_mode = WAL"
    conn = _Scripted(["database is locked"] * 3, failing=wal)
    schema._wal(conn)
    assert conn.begins == 4
    conn = _Scripted(["database is locked"] * (schema.WRITE_ATTEMPTS + 5), failing=wal)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        schema._wal(conn)
    assert conn.begins == schema.WRITE_ATTEMPTS
    conn = _Scripted(["disk I/O error"], failing=wal)
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        schema._wal(conn)
    assert conn.begins == 1


def test_a_database_file_error_pickles_with_its_path_and_reason():
    """It crosses process boundaries (executors, Ray) whole."""
    err = pickle.loads(pickle.dumps(DatabaseFileError("/x/h.db", "is a folder")))
    assert (type(err), err.path, err.reason) == (DatabaseFileError, "/x/h.db", "is a folder")
    assert str(err) == "database '/x/h.db': is a folder"


def test_a_migrated_version_0_file_holds_exactly_the_current_tables(tmp_path):
    """Migration in place leaves the four tables of the current schema and nothing of the
    old one (its rows are in ``measurements``)."""
    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.executescript(V0_SCHEMA)
    rec = MeasureRecord.ok({"x": 1}, time_ms=2.0)
    old.execute("INSERT INTO measurements VALUES ('L', 'v100', 't', '{}', 'ok', 2.0, 0, ?, 'r')",
                (json.dumps(rec.to_dict()),))
    old.commit()
    old.close()
    conn = connect(path)
    assert {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")} \
        == {"meta", "workloads", "devices", "measurements"}
    assert conn.execute("SELECT COUNT(*) FROM measurements").fetchone()[0] == 1


def test_foreign_keys_are_enforced(tmp_path):
    """A measurement must name a stored workload and device."""
    conn = connect(tmp_path / "h.db")
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
        conn.execute("INSERT INTO measurements (workload, device, toolchain, config, status, "
                     "estimate, timestamp, record, digest) VALUES (7, 9, 't', '{}', 'ok', 0, 0, "
                     "'{}', 'd')")


@pytest.mark.parametrize("returned", [0, None, "", [], 1])
def test_write_commits_whatever_fn_returns(returned):
    """fn's statements commit together, whatever (falsy) value fn returns."""
    conn = connect(":memory:")

    def add(c):
        c.execute("INSERT INTO devices (name) VALUES ('v100')")
        return returned

    assert write(conn, add) == returned
    assert not conn.in_transaction
    assert conn.execute("SELECT name FROM devices").fetchall() == [("v100",)]


def test_another_programs_file_is_refused_naming_its_tables_not_its_indexes(tmp_path):
    path = tmp_path / "other.db"
    raw = sqlite3.connect(path)
    raw.executescript("CREATE TABLE notes (a); CREATE INDEX by_a ON notes (a);")
    raw.commit()
    raw.close()
    with pytest.raises(DatabaseFileError, match=r"\(its tables: notes\)$"):
        connect(path)
