"""The tuning database's SQLite schema: versions, migration, and safe concurrent writes.

Version 2 (this one) has four tables:

- ``meta``: ``schema_version`` and other facts about the file;
- ``workloads``: what was tuned. ``template`` (our kernel template such as
  ``iobound.conv``, or a recorded kernel's name), ``problem`` (canonical JSON: the
  layer, or the recorded problem size), ``params`` (JSON list of parameter names) and
  ``tune_params`` (JSON: each parameter's value list, as far as known);
- ``devices``: ``name`` and ``properties`` (JSON; the preset's fields where the name
  is a known preset, else ``{}``);
- ``measurements``: one row per measurement: workload, device, toolchain, config
  (canonical JSON), status, ``time_ms`` (positive and finite, or NULL), estimate flag,
  timestamp, cost-model ``features`` (JSON, NULL when unknown), the full record JSON,
  the run and the source file it came from, and ``digest``, a SHA-256 over everything
  that makes it this measurement (UNIQUE: importing it again adds nothing).

The keys (a problem, a config, the digest) are :func:`~search.db.model.canon_key`'s: values
Python calls equal (2, 2.0 and True) are one key. Version 1 had the same tables keyed by
the JSON text as written; :func:`connect` migrates such a file in place, in one
transaction (:mod:`search.db.migrate_v1`: rows of one key merged, the ids kept).

Version 0 is the single ``measurements`` table of the first ``--history`` databases
(primary key layer, device, toolchain, config); :func:`connect` migrates such a file
in place, in one transaction, keeping every row.

Any other SQLite file is refused (:class:`~iobound.errors.InvalidInputError`, never
changed): one with another program's tables (no ``meta`` table, no version-0
``measurements`` table), one whose ``meta`` has no integer ``schema_version``, or
one whose ``meta`` says version 1 or 2 without the other tables or their columns. A file opened
``readonly`` is never written: one that needs creating or migrating (empty, version
0 or 1) is copied into memory and migrated there; reading a WAL database leaves no -wal
and -shm files behind when this process may write the file and its folder; a WAL
database on a read-only file system (where SQLite cannot create its -shm file) is read
with SQLite's ``immutable=1`` unless its -wal file holds changes, else refused saying
so. Each table must have the columns this version creates. A path
that cannot be one (empty, a folder, a device, in a missing folder, a file that is
not SQLite's) is a :class:`DatabaseFileError` naming it.

Concurrency: files are opened in WAL mode with a busy timeout, and every write runs
in ``BEGIN IMMEDIATE`` through :func:`write` (:mod:`.transactions`), which waits a
bounded time while another process holds the lock, so two tuning processes writing one
database lose nothing.

Examples
--------
>>> conn = connect(":memory:")
>>> schema_version(conn)
2
>>> write(conn, lambda c: c.execute("INSERT INTO devices (name) VALUES ('v100')").rowcount)
1
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from pathlib import Path

from iobound.errors import InvalidInputError

from .damage import FileConnection
from .db_file import DatabaseFileError, path_fault
from .file_access import cannot_open_reason, immutable_ok
from .file_access import may_write as _may_write  # a module global: tests replace it
from .transactions import BUSY_TIMEOUT_MS, WRITE_ATTEMPTS, is_locked as _is_locked, write

__all__ = ["SCHEMA_VERSION", "DB_FILE_ENDINGS", "DatabaseFileError", "connect", "schema_version",
           "write"]

SCHEMA_VERSION = 2

log = logging.getLogger(__name__)

#: What SQLite appends to a database's name for its files: the database, its journals.
DB_FILE_ENDINGS = ("", "-wal", "-shm", "-journal")

#: The columns that make a ``measurements`` table without ``meta`` a version-0 one.
_V0_COLUMNS = {"layer", "device", "toolchain", "config", "record"}

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS workloads (
    id INTEGER PRIMARY KEY,
    template TEXT NOT NULL,
    problem TEXT NOT NULL,
    params TEXT NOT NULL,
    tune_params TEXT NOT NULL DEFAULT '{}',
    UNIQUE (template, problem, params)
);
CREATE TABLE IF NOT EXISTS devices (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    properties TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS measurements (
    id INTEGER PRIMARY KEY,
    workload INTEGER NOT NULL REFERENCES workloads (id),
    device INTEGER NOT NULL REFERENCES devices (id),
    toolchain TEXT NOT NULL,
    config TEXT NOT NULL,
    status TEXT NOT NULL,
    time_ms REAL CHECK (time_ms IS NULL OR time_ms > 0),
    estimate INTEGER NOT NULL,
    timestamp REAL NOT NULL,
    features TEXT,
    record TEXT NOT NULL,
    run TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT '',
    digest TEXT NOT NULL UNIQUE
);
CREATE INDEX IF NOT EXISTS by_workload_device ON measurements (workload, device, time_ms);
"""


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def schema_version(conn: sqlite3.Connection) -> int:
    """The file's schema version (0 for a first-generation ``--history`` file; the
    current one for a file without tables, which is created as such).

    >>> schema_version(sqlite3.connect(":memory:"))  # no tables yet: created as this version
    2
    >>> other = sqlite3.connect(":memory:")
    >>> _ = other.execute("CREATE TABLE orders (a)")
    >>> schema_version(other)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: not an iobound tuning database (its tables: orders)

    Raises
    ------
    InvalidInputError
        When the file is not an iobound tuning database (see the module doc), or ``conn``
        is no SQLite connection.
    """
    if not isinstance(conn, sqlite3.Connection):
        raise InvalidInputError(f"conn must be an sqlite3.Connection, got {conn!r:.60}")
    tables = _tables(conn)
    if "meta" in tables:
        try:
            row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.OperationalError:  # another program's table called meta
            row = None
        if row is None:
            raise InvalidInputError("not an iobound tuning database: its meta table holds no "
                                    "schema_version")
        try:
            version = int(row[0])
        except (TypeError, ValueError):
            raise InvalidInputError(f"damaged: meta.schema_version {str(row[0])[:20]!r} is not "
                                    f"an integer") from None
        if version < 1:  # version 0 has no meta table: another program's, or damaged
            raise InvalidInputError(f"not an iobound tuning database: its meta table says "
                                    f"schema version {version} (those with one start at 1)")
        return version
    if not tables:
        return SCHEMA_VERSION
    if _V0_COLUMNS <= {r[1] for r in conn.execute("PRAGMA table_info(measurements)")}:
        return 0
    raise InvalidInputError(f"not an iobound tuning database (its tables: "
                            f"{', '.join(sorted(tables))[:80]})")


def _open(path: str, readonly: bool, immutable: bool = False) -> sqlite3.Connection:
    tidy = readonly and not immutable and _may_write(path)
    if readonly:
        path = Path(path).resolve().as_uri() + ("?mode=rw" if tidy else "?mode=ro")
        if immutable:  # see file_access.read_only_medium: nothing can change the file
            path += "&immutable=1"
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           uri=readonly, factory=FileConnection)
    if tidy:
        # Opened mode=ro, a WAL database keeps the -wal and -shm files SQLite makes for
        # the reader; opened for writing but query_only, the last connection to close
        # removes them as after any writer, and nothing can change the file either.
        conn.execute("PRAGMA query_only = ON")
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def _in_memory(conn: sqlite3.Connection) -> sqlite3.Connection:
    """A copy of ``conn``'s database in memory (to migrate a file opened read-only)."""
    mem = _open(":memory:", False)
    conn.backup(mem)
    conn.close()
    return mem


def connect(path: str | os.PathLike, readonly: bool = False) -> sqlite3.Connection:
    """Open (creating or migrating) the database at ``path``; ``":memory:"`` works.

    With ``readonly`` the file is never written (see the module doc).

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> conn = connect(os.path.join(folder, "tuning.db"))
    >>> schema_version(conn)
    2
    >>> conn.close(); sorted(os.listdir(folder))  # created; no -wal and -shm left behind
    ['tuning.db']
    >>> connect(os.path.join(folder, "none.db"), readonly=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    search.db.db_file.DatabaseFileError: database '...none.db': no such file

    Raises
    ------
    DatabaseFileError
        An :class:`~iobound.errors.InvalidInputError` naming the file, when the path
        is empty, a folder, not a regular file, in a missing folder (or missing, to
        read), when the file is not an SQLite database, has a newer schema version
        than this iobound knows, is not an iobound tuning database, or is damaged
        (see the module doc).
    sqlite3.OperationalError
        When SQLite cannot go on for another reason (a lock held too long, a full
        disk, an I/O error).
    """
    if not isinstance(path, (str, os.PathLike)) or isinstance(os.fspath(path), bytes):
        # str() of None, 2.5 or an object would name a file in the working folder
        raise InvalidInputError(f"database path must be a str or os.PathLike, got {path!r}")
    if not isinstance(readonly, bool):
        raise InvalidInputError(f"readonly must be True or False, got {readonly!r}")
    where = os.fspath(path)
    fault = path_fault(where, readonly)
    if fault:
        raise DatabaseFileError(where, fault)
    try:
        try:
            conn = _ready(_open(where, readonly), where, readonly)
        except sqlite3.OperationalError as exc:
            if not (readonly and _cannot_open(exc) and immutable_ok(where)):
                raise
            # a WAL database on a read-only medium or in a folder we cannot write: SQLite
            # cannot create its -shm file
            conn = _ready(_open(where, readonly, immutable=True), where, readonly)
        conn.database_file = where  # from now on damage found is named (FileConnection)
        return conn
    except InvalidInputError as exc:
        raise DatabaseFileError(where, str(exc)) from None
    except sqlite3.OperationalError as exc:
        if not _cannot_open(exc):
            raise
        raise DatabaseFileError(where, cannot_open_reason(where, exc)) from None
    except sqlite3.DatabaseError as exc:  # "file is not a database", "malformed"
        raise DatabaseFileError(where, f"not an SQLite database, or a damaged one: "
                                       f"{' '.join(str(exc).split())}") from None


def _cannot_open(exc: sqlite3.OperationalError) -> bool:
    """SQLite's words for a file it may not open as asked: "unable to open database file",
    or, for a WAL database in a folder it cannot write (no -shm file), "attempt to write a
    readonly database"."""
    return any(words in str(exc) for words in ("unable to open", "attempt to write a readonly"))


def _ready(conn: sqlite3.Connection, path: str, readonly: bool) -> sqlite3.Connection:
    """``conn`` in WAL mode, created or migrated, and checked; closed when it cannot be."""
    try:
        _check_stored_columns(conn)  # before any row is read (meta's, a version 0 file's)
        version = schema_version(conn)
        if version > SCHEMA_VERSION:
            raise InvalidInputError(f"schema version {version}; this iobound reads versions up "
                                    f"to {SCHEMA_VERSION}")
        if version >= 1 and _has_meta(conn):  # before a migration reads them
            _check_tables(conn, version)
        if version < SCHEMA_VERSION or not _has_meta(conn):
            if readonly:
                conn = _in_memory(conn)
            write(conn, _create_or_migrate)
        _check_tables(conn, version)
        if path != ":memory:" and not readonly:  # last: WAL mode rewrites the file's header
            _wal(conn)
        return conn
    except BaseException:
        conn.close()
        raise


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


_EXPECTED: dict[str, list[str]] = {}


def _expected_columns() -> dict[str, list[str]]:
    """Each table's columns as this version creates them."""
    if not _EXPECTED:
        mem = sqlite3.connect(":memory:")
        mem.executescript(_TABLES)
        _EXPECTED.update({t: _columns(mem, t) for t in _tables(mem)})
        mem.close()
    return _EXPECTED


def _check_tables(conn: sqlite3.Connection, version: int) -> None:
    """InvalidInputError when a file whose meta says ``version`` lacks a table or a column
    this version reads."""
    missing = {"workloads", "devices", "measurements"} - _tables(conn)
    if missing:
        raise InvalidInputError(f"damaged: its meta table says schema version {version} but "
                                f"it lacks the tables {', '.join(sorted(missing))}")
    _check_columns(conn)


def _check_columns(conn: sqlite3.Connection) -> None:
    """InvalidInputError naming the first table that lacks a column this version reads
    (a file changed by another program: a query would fail later with SQLite's "no such
    column", after a tuning run had measured)."""
    for table, wanted in sorted(_expected_columns().items()):
        missing = [c for c in wanted if c not in set(_columns(conn, table))]
        if missing:
            raise InvalidInputError(f"damaged: its table {table} lacks the column"
                                    f"{'s' if len(missing) > 1 else ''} {', '.join(missing)}")


def _check_stored_columns(conn: sqlite3.Connection) -> None:
    """InvalidInputError when a table we read has a generated column: its values are not
    stored but computed on every read (a few bytes of schema can compute a gigabyte per
    row), so such a file is no tuning database of ours."""
    for table in {"meta", "workloads", "devices", "measurements"} & _tables(conn):
        for row in conn.execute(f"PRAGMA table_xinfo({table})"):
            if row[6] in (2, 3):  # hidden: 2 a virtual, 3 a stored generated column
                raise InvalidInputError(f"not an iobound tuning database: its column "
                                        f"{table}.{str(row[1])[:40]} is computed, not stored")


def _wal(conn: sqlite3.Connection) -> None:
    for attempt in range(WRITE_ATTEMPTS):  # switching to WAL needs a moment without readers
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if not _is_locked(exc) or attempt == WRITE_ATTEMPTS - 1:
                raise
            time.sleep(0.05 * (attempt + 1))


def _has_meta(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone() is not None


def _create_or_migrate(conn: sqlite3.Connection) -> None:
    version = schema_version(conn)  # checked again inside the lock: another process may have won
    if version == SCHEMA_VERSION and _has_meta(conn):
        return
    legacy = version == 0 and conn.execute(
        "SELECT 1 FROM sqlite_master WHERE name='measurements'").fetchone() is not None
    if legacy:
        conn.execute("ALTER TABLE measurements RENAME TO measurements_v0")
        conn.execute("DROP INDEX IF EXISTS by_key")
    for stmt in filter(str.strip, _TABLES.split(";")):
        conn.execute(stmt)
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
    if legacy:
        from .migrate import migrate_v0
        migrate_v0(conn)
        conn.execute("DROP TABLE measurements_v0")
    elif version == 1:
        from .migrate_v1 import migrate_v1
        merged, removed = migrate_v1(conn)
        if merged or removed:
            log.info("tuning database migrated to schema version %d: %d workloads and %d "
                     "measurements that were stored twice under keys Python calls equal were "
                     "merged", SCHEMA_VERSION, merged, removed)
