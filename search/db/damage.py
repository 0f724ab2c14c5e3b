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
    which sets its ``database_file``), else ``exc`` itself."""
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
    :class:`DatabaseFileError` naming ``path`` unless SQLite finds it sound."""
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
    :func:`~.schema.connect` says what is wrong itself)."""

    database_file: str | None = None

    def cursor(self, factory=None):
        return super().cursor(factory or _Cursor)

    def execute(self, *args):
        return self.cursor().execute(*args)

    def executemany(self, *args):
        return self.cursor().executemany(*args)

    def executescript(self, *args):
        return self.cursor().executescript(*args)
