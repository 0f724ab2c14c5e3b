"""What the file system lets SQLite do with a tuning database file: whether this process
may write it and its folder, whether it is in WAL mode, on a read-only medium, may be read
with SQLite's ``immutable`` URI parameter, and why SQLite could not open a file that exists
(:func:`search.db.schema.connect` uses them).

Examples
--------
>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "h.db")
>>> open(path, "wb").close()
>>> may_write(path), is_wal(path)
(True, False)
"""

from __future__ import annotations

import os
from pathlib import Path

from ..option_checks import check_path

__all__ = ["may_write", "is_wal", "read_only_medium", "immutable_ok", "cannot_open_reason"]


def may_write(path: str) -> bool:
    """Whether this process may write the file ``path`` and create files beside it.

    >>> import tempfile
    >>> may_write(os.path.join(tempfile.mkdtemp(), "missing.db"))  # no file to write
    False
    """
    path = check_path("path", path)
    return os.access(path, os.W_OK) and os.access(Path(path).resolve().parent, os.W_OK)


def is_wal(path: str) -> bool:
    """Whether the file's header says WAL mode (bytes 18 and 19 of an SQLite file are 2).
    ``path`` is a path (an int is refused, not taken for a file descriptor).

    >>> import sqlite3, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "w.db")
    >>> conn = sqlite3.connect(path)
    >>> conn.execute("PRAGMA journal_mode=WAL").fetchone()
    ('wal',)
    >>> conn.execute("CREATE TABLE t (x)").close(); conn.close()
    >>> is_wal(path)
    True
    """
    path = check_path("path", path)
    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError:
        return False
    return len(head) == 20 and head[18:20] == b"\x02\x02"


def read_only_medium(path: str) -> bool:
    """Whether the file's folder is on a file system mounted read-only.

    >>> import tempfile
    >>> read_only_medium(tempfile.mkdtemp() + "/h.db")
    False
    """
    path = check_path("path", path)
    try:
        return bool(os.statvfs(Path(path).resolve().parent).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def immutable_ok(path: str) -> bool:
    """Whether a WAL database SQLite could not open read-only may be opened with the
    ``immutable=1`` URI parameter: SQLite needs its -shm file (created beside it unless
    present) to read a WAL database, or ``immutable``, which "causes SQLite to assume the
    file cannot be changed". True only on a read-only file system (so nothing can change
    the file) and with no -wal file holding content (immutable would not read it).

    >>> import tempfile
    >>> immutable_ok(tempfile.mkdtemp() + "/h.db")  # not WAL, on a writable folder
    False
    """
    path = check_path("path", path)
    if not (is_wal(path) and read_only_medium(path)):
        return False
    try:
        return os.path.getsize(path + "-wal") == 0
    except OSError:
        return True  # no -wal file: everything is in the database file


def cannot_open_reason(path: str, exc: Exception) -> str:
    """The reason SQLite's "unable to open database file" has for a file that exists.

    >>> import sqlite3, tempfile
    >>> path = tempfile.mkdtemp() + "/h.db"
    >>> open(path, "wb").close()
    >>> cannot_open_reason(path, sqlite3.OperationalError("unable to open  database file"))
    'cannot open it: unable to open database file'
    """
    path = check_path("path", path)
    folder = Path(path).resolve().parent
    if Path(path).is_file() and is_wal(path) and (
            read_only_medium(path) or not os.access(folder, os.W_OK)):
        where = "on a read-only file system" if read_only_medium(path) else "not writable"
        return (f"cannot open it: its folder {str(folder)!r} is {where}, and SQLite must "
                f"create the -wal and -shm files beside a WAL-mode database to read it"
                + (" (its -wal file holds changes not yet in the file)"
                   if os.path.exists(path + "-wal") else "")
                + "; copy it to a writable folder")
    return f"cannot open it: {' '.join(str(exc).split())}"
