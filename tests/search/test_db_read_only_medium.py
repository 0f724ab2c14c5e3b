"""A WAL tuning database on a read-only medium is read (SQLite's ``immutable=1``), or
refused with the reason (search/db/schema.py).

Reference: SQLite's WAL documentation: reading a WAL database needs its -shm file, which
SQLite creates beside it, unless the database is opened ``immutable`` (nothing can change
it: true of a read-only file system). Before, history list/best/export, select --history
and kernel --from-history said "cannot open it: unable to open database file" of a file
that exists and is readable.

A read-only file system needs a root mount (tmpfs, remounted read-only, unmounted after);
without one, a read-only folder (not root) checks the message; else the test is skipped.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import pytest

from iobound.errors import InvalidInputError
from search.cli.main import main
from search.db import Measurement, TuningDB, Workload
from search.measure.base import MeasureRecord

W = Workload("k", [8], ("x",))


def _wal_db(path: Path, pending: bool = False) -> None:
    """A WAL database at ``path``; ``pending``: with a -wal file holding a change."""
    work = Path(tempfile.mkdtemp())
    with TuningDB(work / "h.db") as db:
        db.add([Measurement(W, "v100", "t", MeasureRecord.ok({"x": x}, time_ms=float(x)))
                for x in (1, 2)])
    conn = sqlite3.connect(work / "h.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    if pending:
        conn.execute("PRAGMA wal_autocheckpoint = 0")
        conn.execute("INSERT INTO meta VALUES ('note', 'x')")
        conn.commit()
        shutil.copy(work / "h.db-wal", str(path) + "-wal")
    shutil.copy(work / "h.db", path)
    conn.close()
    shutil.rmtree(work)


def _run(argv) -> int:
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.fixture
def read_only_folder(tmp_path):
    """``(folder, fill)``: call ``fill(folder)`` to put files in, after which the folder
    is read-only: a tmpfs remounted read-only (root), or chmod 555 (not root)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        def fill(f):
            f.chmod(0o555)
        yield folder, fill, False
        folder.chmod(0o755)
        return
    if shutil.which("mount") is None or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)],
            capture_output=True).returncode != 0:
        pytest.skip("root, but cannot mount a tmpfs: a read-only medium cannot be simulated")

    def fill(f):
        subprocess.run(["mount", "-o", "remount,ro", str(f)], check=True, capture_output=True)
    try:
        yield folder, fill, True
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True)


def test_a_wal_database_on_a_read_only_medium_is_read(read_only_folder, capsys, tmp_path):
    folder, fill, medium = read_only_folder
    if not medium:
        pytest.skip("not root: no read-only file system (a read-only folder is tested below)")
    _wal_db(folder / "h.db")
    fill(folder)
    with TuningDB(folder / "h.db", readonly=True) as db:
        assert [m.time_ms for m in db.measurements()] == [1.0, 2.0]
    for argv in (["history", "list"], ["history", "best"],
                 ["history", "export", str(tmp_path / "o.json")]):
        assert _run([*argv, "--db", str(folder / "h.db")]) == 0, capsys.readouterr().err
    assert sorted(os.listdir(folder)) == ["h.db"]
    with pytest.raises(InvalidInputError, match="cannot be written|read-only"):
        TuningDB(folder / "h.db").add([Measurement(W, "v100", "t",
                                                   MeasureRecord.ok({"x": 3}, time_ms=3.0))])


def test_a_wal_database_that_cannot_be_read_says_why(read_only_folder, capsys):
    """With a -wal file holding changes (immutable would not read them), or in a
    read-only folder of a writable file system (another process may write the file),
    the error says the folder is not writable and WAL mode needs that."""
    folder, fill, medium = read_only_folder
    _wal_db(folder / "h.db", pending=medium)
    fill(folder)
    with pytest.raises(InvalidInputError) as info:
        TuningDB(folder / "h.db", readonly=True)
    msg = str(info.value)
    assert "h.db" in msg and "-wal and -shm" in msg and str(folder) in msg, msg
    assert ("read-only file system" if medium else "not writable") in msg, msg
    assert _run(["history", "list", "--db", str(folder / "h.db")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "WAL-mode" in err, err
