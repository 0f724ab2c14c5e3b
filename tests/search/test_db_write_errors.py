"""Tests of writes that fail inside SQLite: the error the caller sees is SQLite's own.

SQLite rolls a transaction back by itself on a full disk or an I/O error; a second
ROLLBACK would hide that cause behind "cannot rollback - no transaction is active".
"""

from __future__ import annotations

import sqlite3

import pytest

from search.db import Measurement, TuningDB, Workload
from search.db.schema import write
from search.measure.base import MeasureRecord

W = Workload("k", [8], ("x",))


def _ms(xs):
    return [Measurement(W, "d", "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + x)) for x in xs]


def test_a_full_database_says_full_and_keeps_what_it_had(tmp_path):
    """A write that fills the file: SQLite's 'full' error, nothing of it stored, the
    connection usable for the next write."""
    with TuningDB(tmp_path / "full.db") as db:
        assert db.add(_ms([0])) == 1
        pages = db.connection.execute("PRAGMA page_count").fetchone()[0]
        db.connection.execute(f"PRAGMA max_page_count = {pages + 2}")
        with pytest.raises(sqlite3.OperationalError, match="full"):
            db.add(_ms(range(1, 3000)))
        assert db.count() == 1 and not db.connection.in_transaction
        assert db.add(_ms([1])) == 1


def test_an_error_of_the_callers_own_is_rolled_back_and_raised():
    """An exception raised by the function inside write(): its changes are undone and the
    exception itself comes out."""
    with TuningDB(":memory:") as db:
        def fail(c):
            c.execute("INSERT INTO devices (name) VALUES ('gone')")
            raise KeyError("mine")
        with pytest.raises(KeyError, match="mine"):
            write(db.connection, fail)
        assert db.devices() == {} and not db.connection.in_transaction
