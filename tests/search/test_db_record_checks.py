"""Tests of the checks on what the tuning database stores and how it is written.

A measurement is refused where it is made when a field is of the wrong kind (a toolchain
of None or 5, a missing workload or record, a time of True or "1"), never dropped by the
database without a word; :meth:`TuningDB.add` passes over only a measurement it already
holds (the same digest: import is idempotent); a database opened read-only, or a file
that cannot be written, refuses every write in one line; a mark ``up_to`` that is no
measurement id is refused naming it.
"""

from __future__ import annotations

import math
import os
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iobound.errors import InvalidInputError
from search.db import Measurement, TuningDB, Workload, queries, remove
from search.db.importer import import_files
from search.db.insertion import insert
from search.kt_cache import KtCache
from search.kt_cache_write import write_cache
from search.measure.base import MeasureRecord
from search.grid_space import GridSpace

W = Workload("k", [64], ("x",))


def _rec(x=2, t=1.0, **kw):
    return MeasureRecord.ok({"x": x}, time_ms=t, **kw)


@pytest.mark.parametrize("toolchain", [None, 5, b"nvcc", ["nvcc"]])
def test_a_toolchain_that_is_no_string_is_refused(toolchain):
    """Was: None stored nothing and add returned 0 (INSERT OR IGNORE swallowed the NOT
    NULL failure); 5 was stored as '5'."""
    with pytest.raises(InvalidInputError, match=r'toolchain must be a string \(\"\" when unknown\)'):
        Measurement(W, "v100", toolchain, _rec())


def test_an_unknown_toolchain_is_the_empty_string():
    """"" is the unknown toolchain (as a tuning log without one is imported): stored."""
    with TuningDB(":memory:") as db:
        assert db.add([Measurement(W, "v100", "", _rec())]) == 1
        assert [m.toolchain for m in db.measurements()] == [""]


def test_a_row_the_database_refuses_is_an_error_not_a_silent_zero():
    """A row that breaks a constraint other than the digest's (here a toolchain set to
    None behind the record's back, past the checks of add) fails the write; nothing of
    it is stored."""
    bad = Measurement(W, "v100", "t", _rec(3))
    object.__setattr__(bad, "toolchain", None)
    with TuningDB(":memory:") as db:
        with pytest.raises(sqlite3.IntegrityError, match="NOT NULL"):
            db.connection.execute("BEGIN")
            try:
                insert(db.connection, [Measurement(W, "v100", "t", _rec(2)), bad], {})
            finally:
                db.connection.execute("ROLLBACK")
        assert db.count() == 0


_records = st.lists(st.tuples(st.integers(0, 3), st.sampled_from([1.0, 2.0]),
                              st.sampled_from(["a", "b"]), st.sampled_from([0.0, 5.0])),
                    max_size=12)


@settings(max_examples=40, deadline=None)
@given(first=_records, second=_records)
def test_add_passes_over_exact_duplicates_only(first, second):
    """Property: each add stores every measurement whose digest is new, once; what it
    returns is that number (duplicates within a call and of earlier calls passed over)."""
    def ms(rows):
        return [Measurement(W, dev, "t", MeasureRecord(**{**_rec(x, t).__dict__,
                                                          "timestamp": stamp}))
                for x, t, dev, stamp in rows]
    with TuningDB(":memory:") as db:
        seen: set = set()
        for rows in (first, second):
            batch = ms(rows)
            new = {m.digest() for m in batch} - seen
            assert db.add(batch) == len(new)
            seen |= new
            assert db.count() == len(seen)
            assert {m.digest() for m in db.measurements()} == seen


@pytest.mark.parametrize("make, needle", [
    (lambda: Workload(None, [1], ("x",)), "template must be a builtins.str"),
    (lambda: Workload("k", [64], (1,)), "parameter name of workload 'k' must be a builtins.str"),
    (lambda: Workload("k", [64], "xy"), "params must be a sequence of parameter names"),
    (lambda: Workload("k", {1, 2}, ("x",)), "problem must be a JSON value"),
    (lambda: Workload("k", [object()], ("x",)), "problem must be a JSON value"),
    (lambda: Measurement(W, "d", "t", None), "record must be a search.measure.base.MeasureRecord"),
    (lambda: Measurement(None, "d", "t", _rec()), "workload must be a search.db.model.Workload"),
    (lambda: Measurement(W, "d", "t", _rec(), run=None), "run must be a builtins.str"),
    (lambda: Measurement(W, "d", "t", _rec(), source=3), "source must be a builtins.str"),
    (lambda: MeasureRecord.ok({"x": 1}, time_ms=math.nan), "time_ms must be a finite number"),
    (lambda: MeasureRecord.ok({"x": 1}, time_ms=math.inf), "time_ms must be a finite number"),
    (lambda: MeasureRecord.ok({"x": 1}, time_ms=True), "time_ms must be a finite number"),
    (lambda: MeasureRecord.ok({"x": 1}, time_ms="1"), "time_ms must be a finite number"),
    (lambda: MeasureRecord.ok({"x": 1}, costs=["1"]), "a cost must be a real number"),
    (lambda: MeasureRecord.ok({"x": 1}, costs=5), "costs must be a sequence of numbers"),
    (lambda: MeasureRecord.ok(None, time_ms=1.0), "config must be a collections.abc.Mapping"),
    (lambda: MeasureRecord.ok("x", time_ms=1.0), "config must be a collections.abc.Mapping"),
    (lambda: MeasureRecord(None, "ok"), "config must be a collections.abc.Mapping"),
    (lambda: MeasureRecord({"x": 1}, "fine"), "status must be one of ok"),
    (lambda: MeasureRecord({"x": 1}, "ok", estimate="yes"), "estimate must be True or False"),
    (lambda: MeasureRecord({"x": 1}, "ok", timestamp=math.nan), "timestamp must be a finite"),
    (lambda: MeasureRecord.failed({"x": 1}, "ok"), "needs a failure status"),
])
def test_records_with_a_bad_field_are_refused_where_made(make, needle):
    """Were: IntegrityError on add, TypeError, JSON TypeError, AttributeError, accepted
    then failing in add, plain ValueError, or True/'1' taken as 1.0."""
    with pytest.raises(InvalidInputError, match=needle):
        make()


def test_tune_params_values_must_be_lists():
    """Was: TypeError ('int' object is not iterable) from inside the write."""
    with TuningDB(":memory:") as db:
        with pytest.raises(InvalidInputError, match="the values of 'x' must be a list, got 5"):
            db.add([], tune_params={W: {"x": 5}})
        with pytest.raises(InvalidInputError, match="the values of 'x' must be a list"):
            db.add([], tune_params={W: {"x": "12"}})  # not taken letter by letter
        assert db.add([], tune_params={W: {"x": [1, 2]}}) == 0 and db.tune_params(W) == {"x": [1, 2]}


@pytest.fixture
def db_file(tmp_path):
    path = str(tmp_path / "t.db")
    with TuningDB(path) as db:
        db.add([Measurement(W, "v100", "t", _rec(1))])
    return path


def _cache_file(tmp_path):
    path = str(tmp_path / "k_A100.json")
    write_cache(path, KtCache(tune_params={"x": [1, 2]}, kernel_name="k",
                              entries=[{"x": 1, "time": 2.0, "times": [2.0]}]))
    return path


@pytest.mark.parametrize("action", ["add", "remove", "import"])
def test_a_database_opened_read_only_refuses_writes(db_file, tmp_path, action):
    """Were: sqlite3.OperationalError 'attempt to write a readonly database'."""
    with TuningDB(db_file, readonly=True) as db:
        with pytest.raises(InvalidInputError, match="opened read-only"):
            if action == "add":
                db.add([Measurement(W, "v100", "t", _rec(2))])
            elif action == "remove":
                remove.remove(db, remove.Selection(device="v100"))
            else:
                import_files(db, [_cache_file(tmp_path)])
    with TuningDB(db_file, readonly=True) as db:
        assert db.count() == 1


def test_a_file_that_cannot_be_written_is_named(db_file):
    """Opened for writing, but the file's permissions say no: one line naming it. Run
    without root's permission override (root writes any file); the mode is set before the
    database is opened (SQLite keeps writing through a descriptor it already holds)."""
    from tests.search.permissions import run_python
    os.chmod(db_file, 0o444)
    try:
        got = run_python("""
import sys
from iobound.errors import InvalidInputError
from search.db.model import Measurement
from search.db.store import TuningDB
from tests.search.test_db_record_checks import W, _rec
with TuningDB(sys.argv[1]) as db:
    try:
        db.add([Measurement(W, "v100", "t", _rec(2))])
    except InvalidInputError as exc:
        print(exc)
    else:
        print("stored")
""", db_file)
    finally:
        os.chmod(db_file, 0o644)
    assert got.returncode == 0, got.stderr
    assert "cannot be written" in got.stdout and repr(db_file) in got.stdout, got.stdout
    with TuningDB(db_file, readonly=True) as db:
        assert db.count() == 1


@pytest.mark.parametrize("up_to", ["abc", math.nan, 10 ** 30, [1], -1, 2.0, True])
def test_a_mark_that_is_no_measurement_id_is_refused(up_to):
    """Were: ValueError, OverflowError or TypeError from int() or SQLite; 2.0 and True
    were taken as 2 and 1."""
    space = GridSpace({"x": [1, 2]})
    with TuningDB(":memory:") as db:
        for call in (lambda: db.timings(["x"], up_to=up_to),
                     lambda: queries.history_for_space(db, space, up_to=up_to)):
            with pytest.raises(InvalidInputError, match="up_to"):
                call()
        from search.transfer import transfer_options
        with pytest.raises(InvalidInputError, match="up_to"):
            transfer_options(db, space, up_to=up_to)


def test_a_mark_of_an_empty_database_is_valid():
    with TuningDB(":memory:") as db:
        assert db.timings(["x"], up_to=db.last_id()) == []
