"""One write transaction of the tuning database, waiting while another connection holds
the lock: SQLite's own wait runs in C, where no Python signal handler runs, so the wait
is cut into short ones, between which a signal the caller lets end waits ends it.

Examples
--------
>>> import sqlite3
>>> conn = sqlite3.connect(":memory:", isolation_level=None)
>>> _ = conn.execute("CREATE TABLE t (x)")
>>> write(conn, lambda c: c.execute("INSERT INTO t VALUES (1)").rowcount)
1
"""

from __future__ import annotations

import random
import sqlite3
import time
from typing import Callable, TypeVar

__all__ = ["BUSY_TIMEOUT_MS", "WRITE_ATTEMPTS", "WRITE_WAIT_S", "WAIT_SLICE_MS", "is_locked",
           "write"]

T = TypeVar("T")

#: How long one statement waits for a lock, and how often switching to WAL starts over.
BUSY_TIMEOUT_MS = 10_000
WRITE_ATTEMPTS = 20
#: How long :func:`write` waits in all for another writer's lock before it raises, in
#: waits of WAIT_SLICE_MS between which a signal may end it
#: (:func:`search.interrupts.waits_given_up`).
WRITE_WAIT_S = BUSY_TIMEOUT_MS / 1000 * WRITE_ATTEMPTS
WAIT_SLICE_MS = 250


def is_locked(exc: sqlite3.OperationalError) -> bool:
    """Whether SQLite's error is another connection's lock (SQLITE_LOCKED or SQLITE_BUSY).

    >>> is_locked(sqlite3.OperationalError("database is locked"))
    True
    >>> is_locked(sqlite3.OperationalError("no such table: t"))
    False
    """
    msg = str(exc).lower()
    return "locked" in msg or "busy" in msg


def write(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    """Run ``fn(conn)`` in one ``BEGIN IMMEDIATE`` transaction, waiting while locked.

    All of ``fn``'s statements commit together or not at all. A lock held by another
    writer is waited for in slices of :data:`WAIT_SLICE_MS` (with a short random pause
    between), for :data:`WRITE_WAIT_S` in all, then raises; a signal the caller lets end
    waits (:func:`search.interrupts.waits_given_up`) ends it at the next slice, raising
    the lock's error. Any other error is raised as it is: one after which SQLite has
    already rolled back (a full disk, an I/O error) is not hidden behind a failed
    ROLLBACK.

    >>> conn = sqlite3.connect(":memory:", isolation_level=None)
    >>> _ = conn.execute("CREATE TABLE t (x)")
    >>> def fails(c):
    ...     c.execute("INSERT INTO t VALUES (1)")
    ...     raise ValueError("stop")
    >>> write(conn, fails)
    Traceback (most recent call last):
    ...
    ValueError: stop
    >>> conn.execute("SELECT COUNT(*) FROM t").fetchone()[0]  # rolled back
    0
    """
    from ..interrupts import waits_given_up
    deadline = time.monotonic() + WRITE_WAIT_S
    while True:
        try:
            _begin_immediate(conn)
        except sqlite3.OperationalError as exc:
            if not is_locked(exc) or time.monotonic() >= deadline:
                raise
            if waits_given_up():
                raise sqlite3.OperationalError(f"{exc} (not waited for: interrupted)") from None
            time.sleep(random.uniform(0.01, 0.1))
            continue
        try:
            out = fn(conn)
            conn.execute("COMMIT")
            return out
        except BaseException:
            if conn.in_transaction:  # SQLite already rolled back on a full disk or I/O error
                conn.execute("ROLLBACK")
            raise


def _begin_immediate(conn: sqlite3.Connection) -> None:
    """``BEGIN IMMEDIATE``, waiting at most :data:`WAIT_SLICE_MS` for a lock (SQLite's
    wait runs in C, where no signal handler runs)."""
    conn.execute(f"PRAGMA busy_timeout = {WAIT_SLICE_MS}")
    try:
        conn.execute("BEGIN IMMEDIATE")
    finally:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
