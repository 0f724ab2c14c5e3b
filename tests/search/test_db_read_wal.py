"""Reading a WAL tuning database leaves nothing behind (search/db/schema.py).

Reference: SQLite itself. A database written by the tuner is in WAL mode; reading it
(``history list``/``best``/``export``, merging) must leave the file's bytes as they
were and, where this process may write the folder, no ``-wal``/``-shm`` files beside
it; it must see what a writer still connected has committed, and refuse to write.
Where it may not write, the file is opened with SQLite's ``mode=ro`` (as before).
"""

from __future__ import annotations

import os
import sqlite3

import pytest

from iobound.errors import InvalidInputError
from search.cli.main import main
from search.db import Measurement, TuningDB, Workload, schema
from search.measure.base import MeasureRecord

W = Workload("k", [8], ("x",))


def _m(x: int, t: float) -> Measurement:
    return Measurement(W, "v100", "t", MeasureRecord.ok({"x": x}, time_ms=t))


def _files(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture
def wal_db(tmp_path):
    path = tmp_path / "h.db"
    with TuningDB(path) as db:
        db.add([_m(1, 2.0), _m(2, 1.0)])
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()
    assert _files(tmp_path) == ["h.db"]
    return path


def test_reading_leaves_the_file_as_it_was_and_nothing_beside_it(wal_db):
    before, stamp = wal_db.read_bytes(), wal_db.stat().st_mtime_ns
    with TuningDB(wal_db, readonly=True) as db:
        assert [m.record.time_ms for m in db.measurements()] == [1.0, 2.0]
        assert len(_files(wal_db.parent)) == 3  # SQLite's -wal and -shm while open
    assert _files(wal_db.parent) == ["h.db"]
    assert wal_db.read_bytes() == before and wal_db.stat().st_mtime_ns == stamp


@pytest.mark.parametrize("argv", [["history", "list"], ["history", "best", "-k", "1"]])
def test_history_list_and_best_leave_nothing_beside_the_database(wal_db, capsys, argv):
    before = wal_db.read_bytes()
    assert main([*argv, "--db", str(wal_db)]) == 0
    assert "v100" in capsys.readouterr().out
    assert _files(wal_db.parent) == ["h.db"] and wal_db.read_bytes() == before


def test_a_reader_sees_what_a_connected_writer_committed_and_cannot_write(wal_db):
    """The writer stays connected (its records still in the -wal file) while the
    database is read; whichever closes last, the records stay and the folder is clean."""
    writer = TuningDB(wal_db)
    writer.add([_m(3, 0.5)])
    reader = TuningDB(wal_db, readonly=True)
    assert [m.record.time_ms for m in reader.measurements()] == [0.5, 1.0, 2.0]
    with pytest.raises(InvalidInputError, match="opened read-only"):
        reader.add([_m(4, 0.1)])
    with pytest.raises(sqlite3.OperationalError, match="readonly"):  # SQLite refuses it too
        reader.connection.execute("INSERT INTO devices (name) VALUES ('x')")
    writer.close()
    reader.close()
    assert _files(wal_db.parent) == ["h.db"]
    with TuningDB(wal_db, readonly=True) as db:
        assert [m.record.time_ms for m in db.measurements()] == [0.5, 1.0, 2.0]


def test_where_it_may_not_write_it_reads_with_sqlites_read_only_mode(wal_db, monkeypatch):
    """(Root may write any file, so the permission is stood in for.)"""
    monkeypatch.setattr(schema, "_may_write", lambda path: False)
    before = wal_db.read_bytes()
    with TuningDB(wal_db, readonly=True) as db:
        assert len(db.measurements()) == 2
        assert db.connection.execute("PRAGMA query_only").fetchone()[0] == 0
        with pytest.raises(InvalidInputError, match="opened read-only"):
            db.add([_m(4, 0.1)])
        with pytest.raises(sqlite3.OperationalError, match="readonly"):  # SQLite refuses it too
            db.connection.execute("INSERT INTO devices (name) VALUES ('x')")
    assert wal_db.read_bytes() == before


def test_may_write_follows_the_file_and_its_folder(tmp_path):
    """A writable file in a writable folder may be written; a read-only file, or a
    writable file in a read-only folder, may not (seen without root's override)."""
    from tests.search.permissions import run_python
    (tmp_path / "rw.db").write_bytes(b"")
    (tmp_path / "ro.db").write_bytes(b"")
    (tmp_path / "ro.db").chmod(0o444)
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "h.db").write_bytes(b"")
    (locked / "h.db").chmod(0o666)
    locked.chmod(0o555)
    try:
        got = run_python("import sys; from search.db import schema; "
                         "print([schema._may_write(p) for p in sys.argv[1:]])",
                         *(str(p) for p in (tmp_path / "rw.db", tmp_path / "ro.db", locked / "h.db")))
    finally:
        locked.chmod(0o755)
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip() == "[True, False, False]"


def test_a_wal_database_in_a_folder_we_cannot_write_says_why(wal_db, tmp_path):
    """Without root's override of permissions, SQLite says "attempt to write a readonly
    database" there; the refusal explains the folder and the -shm file instead."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is not installed: cannot drop the permission override")
    folder = tmp_path / "ro"
    folder.mkdir()
    shutil.copy(wal_db, folder / "h.db")
    folder.chmod(0o555)
    drop = [setpriv, "--bounding-set=-dac_override,-dac_read_search"]
    try:
        probe = subprocess.run([*drop, sys.executable, "-c",
                                f"import os; print(os.access({str(folder)!r}, os.W_OK))"],
                               capture_output=True, text=True)
        if probe.returncode != 0 or probe.stdout.strip() != "False":
            pytest.skip("cannot run without write permission to the folder here")
        root = Path(__file__).resolve().parents[2]
        got = subprocess.run([*drop, sys.executable, "-m", "search.cli.main", "history", "list",
                              "--db", str(folder / "h.db")], capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(root)}, timeout=120)
    finally:
        folder.chmod(0o755)
    assert got.returncode == 2, got.stderr
    assert "is not writable, and SQLite must create the -wal and -shm files" in got.stderr
    assert "attempt to write" not in got.stderr
