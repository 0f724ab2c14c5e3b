"""A tuning database damaged past its first pages: named, never a raw SQLite error, and
never written into.

SQLite reads a page only when a statement needs it, so a file damaged past its schema
opens fine and its damage shows on a later read or write. :class:`FileConnection` (the
connection :func:`~.schema.connect` gives) turns SQLite's "database disk image is
malformed" of any statement or row into a :class:`~.db_file.DatabaseFileError` naming
the file; :func:`check_sound` is the whole-file check a connection's first write runs
(:meth:`~.store.TuningDB.write`), so nothing goes into a file with a damaged page
elsewhere.

Examples
--------
>>> import sqlite3
>>> conn = sqlite3.connect(":memory:", factory=FileConnection)
>>> conn.database_file = "t.db"
>>> check_sound(conn, "t.db")
>>> print(damage_error(conn, sqlite3.DatabaseError("database disk image is malformed")))
database 't.db': the file is damaged (SQLite: database disk image is malformed); restore a copy of it
"""

from __future__ import annotations

import functools
import sqlite3

from .db_file import DatabaseFileError

__all__ = ["FileConnection", "damage_error", "check_sound"]

#: SQLite's primary result codes of a damaged file: SQLITE_CORRUPT ("database disk image
#: is malformed") and SQLITE_NOTADB ("file is not a database").
_DAMAGE_CODES = (11, 26)


def damage_error(conn: sqlite3.Connection, exc: sqlite3.DatabaseError) -> Exception:
    """``exc`` as the error to raise: a :class:`DatabaseFileError` naming the database file
    when it says the file is damaged (and ``conn`` is one :func:`~.schema.connect` opened,
    which sets its ``database_file``), else ``exc`` itself.

    >>> conn = sqlite3.connect(":memory:", factory=FileConnection)
    >>> conn.database_file = "t.db"
    >>> exc = sqlite3.OperationalError("no such table: t")
    >>> damage_error(conn, exc) is exc  # no damage: raised as it is
    True
    """
    path = getattr(conn, "database_file", None)
    code = getattr(exc, "sqlite_errorcode", None)
    damaged = (code & 0xFF in _DAMAGE_CODES) if code is not None else \
        type(exc) is sqlite3.DatabaseError
    if path is None or not damaged:
        return exc
    return DatabaseFileError(path, f"the file is damaged (SQLite: "
                                   f"{' '.join(str(exc).split())}); restore a copy of it")


def check_sound(conn: sqlite3.Connection, path: str) -> None:
    """``PRAGMA quick_check`` of the database of ``conn`` (about 0.3 s per 100 MB): a
    :class:`DatabaseFileError` naming ``path`` unless SQLite finds it sound.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "d.db")
    >>> with sqlite3.connect(path) as c:
    ...     _ = c.execute("CREATE TABLE t (x)")
    ...     _ = c.executemany("INSERT INTO t VALUES (?)", [(str(i) * 50,) for i in range(200)])
    >>> with open(path, "r+b") as f:  # a cell offset of the third page out of range
    ...     _ = f.seek(2 * 4096 + 8); _ = f.write(bytes([255, 255]))
    >>> conn = sqlite3.connect(path, factory=FileConnection)
    >>> conn.database_file = "d.db"
    >>> check_sound(conn, "d.db")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    search.db.db_file.DatabaseFileError: database 'd.db': the file is damaged (SQLite...); \
restore a copy of it...
    """
    found = [r[0] for r in conn.execute("PRAGMA quick_check(3)")]
    if found != ["ok"]:
        said = "; ".join(" ".join(str(f).replace("*** in database main ***", "").split())
                         for f in found)[:160]
        raise DatabaseFileError(path, f"the file is damaged (SQLite's quick_check: {said}); "
                                      f"restore a copy of it: nothing was written")


def _named(method):
    """``method`` of a cursor, its damage errors named (:func:`damage_error`)."""
    @functools.wraps(method)
    def named(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            raise damage_error(self.connection, exc) from None
    return named


class _Cursor(sqlite3.Cursor):
    """A cursor of a :class:`FileConnection`: damage SQLite finds running a statement or
    stepping through its rows is named (:func:`damage_error`)."""

    execute = _named(sqlite3.Cursor.execute)
    executemany = _named(sqlite3.Cursor.executemany)
    executescript = _named(sqlite3.Cursor.executescript)
    __next__ = _named(sqlite3.Cursor.__next__)
    fetchone = _named(sqlite3.Cursor.fetchone)
    fetchmany = _named(sqlite3.Cursor.fetchmany)
    fetchall = _named(sqlite3.Cursor.fetchall)


class FileConnection(sqlite3.Connection):
    """A connection whose statements run on :class:`_Cursor` s (see the module doc).
    ``database_file`` is set once the file is opened and checked (before that,
    :func:`~.schema.connect` says what is wrong itself).

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "d.db")
    >>> with sqlite3.connect(path) as c:
    ...     _ = c.execute("CREATE TABLE t (x)").executemany("INSERT INTO t VALUES (?)",
    ...                                                      [("x" * 150,)] * 200)
    >>> with open(path, "r+b") as f:  # the third page overwritten
    ...     _ = f.seek(2 * 4096); _ = f.write(bytes([255]) * 100)
    >>> conn = sqlite3.connect(path, factory=FileConnection)
    >>> conn.database_file = "d.db"
    >>> conn.execute("SELECT COUNT(*) FROM t").fetchall()
    Traceback (most recent call last):
    ...
    search.db.db_file.DatabaseFileError: database 'd.db': the file is damaged (SQLite: \
database disk image is malformed); restore a copy of it
    """

    database_file: str | None = None

    def cursor(self, factory=None):
        return super().cursor(factory or _Cursor)

    def execute(self, *args):
        return self.cursor().execute(*args)

    def executemany(self, *args):
        return self.cursor().executemany(*args)

    def executescript(self, *args):
        return self.cursor().executescript(*args)
