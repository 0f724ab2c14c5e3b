"""Damaged rows and tables of a tuning database are bad input naming the file and the row.

Found by a sweep: a config stored as a JSON list, a time stored as text (the column's
CHECK ``time_ms > 0`` lets text through) or a dropped column reached ``tune --history``
and ``history list`` as TypeError / ValueError / sqlite3.OperationalError tracebacks.
The project never drops data silently: such a row is one error line (exit 2) naming the
database and the measurement's id, never skipped.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iobound.errors import InvalidInputError
from search.cli.main import main
from search.db import Measurement, TuningDB, Workload
from search.measure.base import MeasureRecord

W = Workload("k", [8], ("x", "y"))


def _db(path, sql: str | None = None, args=()):
    with TuningDB(path) as db:
        db.add([Measurement(W, "gpu", "t", MeasureRecord.ok({"x": x, "y": 2}, time_ms=float(x)))
                for x in (1, 2, 3)])
    if sql:
        conn = sqlite3.connect(path)
        conn.execute(sql, args)
        conn.commit()
        conn.close()
    return path


def _cli(argv, capsys) -> tuple[int, str]:
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


ROW_DAMAGE = [("UPDATE measurements SET config='[1,2]' WHERE id=2", "not a JSON object"),
              ("UPDATE measurements SET config='{\"x\": 1}' WHERE id=2", "lacks y"),
              ("UPDATE measurements SET time_ms='fast' WHERE id=2", "'fast' is not a number"),
              ("UPDATE measurements SET features='[1]' WHERE id=2", "features")]


@pytest.mark.parametrize("sql, what", ROW_DAMAGE)
def test_a_damaged_row_names_the_database_and_its_id(tmp_path, sql, what):
    path = _db(tmp_path / "t.db", sql)
    with TuningDB(path, readonly=True) as db:
        for read in (lambda: db.timings(["x", "y"]), db.measurements):
            with pytest.raises(InvalidInputError) as info:
                read()
            msg = str(info.value)
            assert "t.db" in msg and "measurement id 2" in msg and what in msg, msg


@settings(max_examples=30, deadline=None)
@given(st.one_of(st.lists(st.integers(), max_size=3), st.integers(), st.text(max_size=5),
                 st.none(), st.booleans(), st.floats(allow_nan=False, allow_infinity=False)))
def test_any_stored_config_that_is_no_object_is_bad_input(tmp_path_factory, value):
    """Whatever JSON value not an object a config column holds, reading it for tuning
    is an InvalidInputError naming the row, never a TypeError."""
    path = _db(tmp_path_factory.mktemp("d") / "t.db", "UPDATE measurements SET config=? "
               "WHERE id=3", (json.dumps(value),))
    with TuningDB(path, readonly=True) as db:
        with pytest.raises(InvalidInputError, match="measurement id 3"):
            db.timings(["x", "y"])


def test_history_list_of_a_time_stored_as_text_is_one_line(tmp_path, capsys):
    """``history list`` formatted the text 'fast' with :.4f (ValueError) when it was the
    only time of its workload; with others SQLite's MIN hid it. Both are one line now."""
    for where in ("", " WHERE id=1"):
        path = _db(tmp_path / f"t{len(where)}.db", "UPDATE measurements SET time_ms='fast'" + where)
        code, err = _cli(["history", "list", "--db", str(path)], capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert "measurement id 1" in err and "'fast'" in err, err


def test_a_dropped_column_is_refused_when_the_database_is_opened(tmp_path):
    path = _db(tmp_path / "t.db", "ALTER TABLE measurements DROP COLUMN features")
    for readonly in (True, False):
        with pytest.raises(InvalidInputError, match="measurements lacks the column features"):
            TuningDB(path, readonly=readonly)


@pytest.mark.parametrize("sql", ["UPDATE measurements SET config='[1,2]'",
                                 "UPDATE measurements SET time_ms='fast'",
                                 "ALTER TABLE measurements DROP COLUMN features"])
def test_tune_with_a_damaged_history_is_one_line_exit_2(tmp_path, capsys, sql):
    path = tmp_path / "w.db"
    code, err = _cli(["tune", "--layer", "resnet18.conv4_1b", "--measure", "model", "--budget",
                      "2", "--no-verify", "--history", str(path), "--out-dir", str(tmp_path / "k")],
                     capsys)
    assert code == 0, err
    conn = sqlite3.connect(path)
    conn.execute(sql)
    conn.commit()
    conn.close()
    code, err = _cli(["tune", "--layer", "resnet18.conv4_1b", "--measure", "model", "--budget",
                      "2", "--no-verify", "--history", str(path), "--out-dir", str(tmp_path / "k")],
                     capsys)
    lines = err.strip().splitlines()
    assert code == 2 and "Traceback" not in err and "w.db" in lines[-1], err
    assert "damaged" in lines[-1], err


@settings(max_examples=25, deadline=None)
@given(damaged=st.integers(1, 3), k=st.integers(1, 4), device=st.sampled_from([None, "gpu"]))
def test_a_time_stored_as_text_is_refused_by_a_limited_read_too(tmp_path_factory, damaged, k,
                                                                device):
    """Text sorts after every number, so ``history best -k`` (a read with a limit) never
    reached the damaged row unless k covered it, and answered as if it were not there."""
    from search.db.queries import best

    path = _db(tmp_path_factory.mktemp("d") / "t.db",
               f"UPDATE measurements SET time_ms='fast' WHERE id={damaged}")
    with TuningDB(path, readonly=True) as db:
        with pytest.raises(InvalidInputError, match=f"measurement id {damaged}.*'fast'"):
            best(db, W, device=device, k=k)
        with pytest.raises(InvalidInputError, match=f"measurement id {damaged}"):
            db.measurements(limit=k, order="stored")


def test_history_best_of_a_time_stored_as_text_is_one_line(tmp_path, capsys):
    path = _db(tmp_path / "t.db", "UPDATE measurements SET time_ms='fast' WHERE id=3")
    code, err = _cli(["history", "best", "-k", "1", "--db", str(path)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "measurement id 3" in err and "'fast'" in err, err
