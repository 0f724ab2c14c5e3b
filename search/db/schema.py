"""The tuning database's SQLite schema: versions, migration, and safe concurrent writes.

Version 1 (this one) has four tables:

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

Version 0 is the single ``measurements`` table of the first ``--history`` databases
(primary key layer, device, toolchain, config); :func:`connect` migrates such a file
in place, in one transaction, keeping every row.

Concurrency: files are opened in WAL mode with a busy timeout, and every write runs
in ``BEGIN IMMEDIATE`` through :func:`write`, which retries a bounded number of
times when another process holds the lock, so two tuning processes writing one
database lose nothing.

Examples
--------
>>> conn = connect(":memory:")
>>> schema_version(conn)
1
>>> write(conn, lambda c: c.execute("INSERT INTO devices (name) VALUES ('v100')").rowcount)
1
"""

from __future__ import annotations

from iobound.errors import InvalidInputError

import os
import random
import sqlite3
import time
from typing import Callable, TypeVar

__all__ = ["SCHEMA_VERSION", "connect", "schema_version", "write"]

SCHEMA_VERSION = 1
T = TypeVar("T")

#: How long one statement waits for a lock, and how often :func:`write` starts over.
BUSY_TIMEOUT_MS = 10_000
WRITE_ATTEMPTS = 20

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


def _is_locked(exc: sqlite3.OperationalError) -> bool:
    msg = str(exc).lower()
    return "locked" in msg or "busy" in msg


def write(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    """Run ``fn(conn)`` in one ``BEGIN IMMEDIATE`` transaction, retrying while locked.

    All of ``fn``'s statements commit together or not at all. A lock held by
    another writer longer than the busy timeout starts the transaction over, at
    most :data:`WRITE_ATTEMPTS` times (with a short random pause), then raises.
    """
    for attempt in range(WRITE_ATTEMPTS):
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if not _is_locked(exc) or attempt == WRITE_ATTEMPTS - 1:
                raise
            time.sleep(random.uniform(0.01, 0.1) * (attempt + 1))
            continue
        try:
            out = fn(conn)
            conn.execute("COMMIT")
            return out
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    raise AssertionError("unreachable")  # pragma: no cover


def schema_version(conn: sqlite3.Connection) -> int:
    """The file's schema version (0 for a first-generation ``--history`` file)."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "meta" in tables:
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row[0]) if row else 0
    return 0 if "measurements" in tables else SCHEMA_VERSION


def connect(path: str | os.PathLike) -> sqlite3.Connection:
    """Open (creating or migrating) the database at ``path``; ``":memory:"`` works.

    Raises
    ------
    ValueError
        When the file has a newer schema version than this iobound knows.
    sqlite3.DatabaseError
        When the file is not an SQLite database.
    """
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if str(path) != ":memory:":
        for attempt in range(WRITE_ATTEMPTS):  # switching to WAL needs a moment without readers
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                break
            except sqlite3.OperationalError as exc:
                if not _is_locked(exc) or attempt == WRITE_ATTEMPTS - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))
    conn.execute("PRAGMA foreign_keys = ON")
    version = schema_version(conn)
    if version > SCHEMA_VERSION:
        conn.close()
        raise InvalidInputError(f"database {str(path)!r} has schema version {version}; this iobound "
                         f"reads versions up to {SCHEMA_VERSION}")
    if version < SCHEMA_VERSION or not _has_meta(conn):
        write(conn, _create_or_migrate)
    return conn


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
