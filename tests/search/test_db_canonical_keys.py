"""One key for values Python calls equal (search/db/model.py ``canon_key``), and the
migration of version-1 databases to it (search/db/migrate_v1.py).

References: Python's ``==`` (the replayed space and the cache reader compare parameter
values with it: ``search.kt_keys.value_key``); a database written fresh by this version
from the same measurements (a migrated file must hold the same rows, keyed alike); the
version-1 writer of tests/search/v1_database.py (checked against the version-1 code).
"""

from __future__ import annotations

import hashlib
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from search.cli.main import main
from search.db import Measurement, TuningDB, Workload
from search.db.export import export_cache
from search.db.insertion import ID_HIGH_WATER
from search.db.model import canon_key
from search.db.queries import best
from search.db.schema import SCHEMA_VERSION, schema_version
from search.kt_cache import load_cache, value_key
from search.measure.base import MeasureRecord

from v1_database import v1_digest, write_v1

SCALARS = (st.none() | st.booleans() | st.integers() | st.text(max_size=4)
           | st.floats(allow_nan=False, allow_infinity=False))
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=3), inner, max_size=4), max_leaves=12)
PARAM_SCALARS = (st.none() | st.booleans() | st.integers(-2**53, 2**53) | st.text(max_size=3)
                 | st.floats(allow_nan=False, allow_infinity=False)
                 | st.sampled_from([0.0, -0.0, 1.0]))
PARAM_VALUES = PARAM_SCALARS | st.lists(PARAM_SCALARS, max_size=3)


def _respelled(value, data):
    """``value`` with its numbers written another way Python calls equal, drawn."""
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return data.draw(st.sampled_from([int(value), float(value), bool(value)]))
    if isinstance(value, int):
        return data.draw(st.sampled_from([value, float(value)])) if float(value) == value else value
    if isinstance(value, float) and value.is_integer():
        return data.draw(st.sampled_from([value, int(value)]))
    if isinstance(value, list):
        return [_respelled(v, data) for v in value]
    if isinstance(value, dict):
        return {k: _respelled(v, data) for k, v in value.items()}
    return value


@given(JSON_VALUES, st.data())
def test_a_value_written_another_equal_way_has_the_same_key(value, data):
    other = _respelled(value, data)
    assert other == value
    assert canon_key(other) == canon_key(value)


@given(JSON_VALUES, JSON_VALUES)
def test_two_values_share_a_key_exactly_when_python_calls_them_equal(a, b):
    assert (canon_key(a) == canon_key(b)) == (a == b)


@given(PARAM_VALUES, PARAM_VALUES)
def test_the_key_of_a_parameter_value_agrees_with_the_replayed_space(a, b):
    assert (canon_key(a) == canon_key(b)) == (value_key(a) == value_key(b))


def _m(problem, x, time_ms=1.0, stamp=5.0, device="gpu one", status="ok"):
    return Measurement(Workload("k", problem, ("x", "y")), device, "kt",
                       MeasureRecord({"x": x, "y": 0.5}, status,
                                     time_ms=time_ms if status == "ok" else None, timestamp=stamp))


def test_equal_values_are_one_configuration_of_one_workload():
    """{"x": 1}, {"x": 1.0} and {"x": True} of the problems [64] and [64.0]: one workload,
    one configuration at its fastest; the same measurement respelled is stored once."""
    db = TuningDB(":memory:")
    assert db.add([_m([64], 1, 3.0, 1.0), _m([64.0], 1.0, 2.0, 2.0), _m([64], True, 4.0, 3.0)]) == 3
    assert db.add([_m([64.0], True, 3.0, 1.0)]) == 0  # the first, written another way
    (w,) = db.workloads()
    assert [m.time_ms for m in best(db, w, "gpu one", k=5)] == [2.0]
    assert len(db.measurements(w)) == 3


def test_value_lists_of_one_workload_written_two_ways_are_merged():
    db = TuningDB(":memory:")
    w64, w64f = Workload("k", [64], ("x", "y")), Workload("k", [64.0], ("x", "y"))
    db.add([], {w64: {"x": [1, 2], "y": [0.5]}})
    db.add([], {w64f: {"x": [2.0, 4.0], "y": [0.5, 1.5]}})
    assert db.tune_params(w64f) == {"x": [1, 2, 4.0], "y": [0.5, 1.5]}


@pytest.mark.parametrize("values", [(1, 1.0), (True, 1), ([1, 2], [1.0, 2])])
def test_export_writes_one_entry_for_configurations_python_calls_equal(tmp_path, values):
    """Kernel Tuner's cache (and load_cache) compares values as Python does: the database now
    agrees, so export writes the configuration once, at its latest measurement (the one
    stored last of equal timestamps), in a cache that reads back."""
    w = Workload("k", [8], ("x",))
    db_path = tmp_path / "t.db"
    with TuningDB(db_path) as db:
        db.add([Measurement(w, "gpu", "kernel_tuner",
                            MeasureRecord({"x": v}, "ok", time_ms=1.0 + i, timestamp=5.0))
                for i, v in enumerate(values)])
        export_cache(db, tmp_path / "out.json", w, "gpu")
    cache = load_cache(tmp_path / "out.json")
    assert [e["time"] for e in cache.entries] == [2.0]
    code = main(["history", "export", "--db", str(db_path), str(tmp_path / "cli.json")])
    assert code in (0, None)
    assert len(load_cache(tmp_path / "cli.json").entries) == 1


ITEMS = [_m([64], 2, 1.0, 5.0), _m([64.0], 2.0, 2.0, 5.0), _m([64], True, 1.0, 5.0),
         _m([64.0], 2.0, 1.0, 5.0),  # the first written another way: removed, the first kept
         _m([64], 4, 2.0, 6.0), _m([64.0], 2, 1.0, 6.0), _m([64], 8, status="compile_error",
                                                           device="gpu two", stamp=7.0)]


def _rows(db: TuningDB) -> list[tuple]:
    return sorted(db.connection.execute(
        "SELECT w.template, w.problem, w.params, d.name, m.toolchain, m.config, m.status, "
        "m.time_ms, m.timestamp, m.record, m.digest FROM measurements m JOIN workloads w ON "
        "m.workload = w.id JOIN devices d ON m.device = d.id").fetchall())


def _fresh(items) -> TuningDB:
    db = TuningDB(":memory:")
    db.add(items)
    return db


def test_a_version_1_database_is_rekeyed_in_place_keeping_ids(tmp_path):
    path = tmp_path / "v1.db"
    write_v1(path, ITEMS)
    with TuningDB(path) as db:
        assert schema_version(db.connection) == SCHEMA_VERSION == 2
        assert _rows(db) == _rows(_fresh(ITEMS))
        assert [r[0] for r in db.connection.execute("SELECT id FROM measurements ORDER BY id")] \
            == [1, 2, 3, 5, 6, 7]
        assert len(db.workloads()) == 1
        assert db.add(ITEMS) == 0  # importing them again adds nothing


def test_a_version_1_database_read_only_is_migrated_in_memory_only(tmp_path):
    path = tmp_path / "v1.db"
    write_v1(path, ITEMS)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with TuningDB(path, readonly=True) as db:
        assert _rows(db) == _rows(_fresh(ITEMS))
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_the_id_of_a_removed_duplicate_is_never_given_again(tmp_path):
    path = tmp_path / "v1.db"
    write_v1(path, ITEMS[:2] + [_m([64.0], 2.0, 1.0, 5.0)])  # id 3 duplicates id 1
    with TuningDB(path) as db:
        assert db.connection.execute("SELECT value FROM meta WHERE key=?",
                                     (ID_HIGH_WATER,)).fetchone() == ("3",)
        db.add([_m([64], 16, 1.0, 9.0)])
        assert db.last_id() == 4


def test_an_unreadable_row_is_left_as_it_was_for_its_reader_to_name(tmp_path):
    path = tmp_path / "v1.db"
    write_v1(path, ITEMS[:2])
    raw = sqlite3.connect(path)
    raw.execute("UPDATE measurements SET record='{bad' WHERE id=2")
    raw.commit()
    raw.close()
    with TuningDB(path) as db:
        assert db.connection.execute("SELECT digest FROM measurements WHERE id=2").fetchone() \
            == (v1_digest(ITEMS[1]),)
        with pytest.raises(Exception, match="damaged measurement id 2"):
            db.measurements()


SPELLINGS = st.sampled_from([(2, 2.0), (1, True), (1.0, 1), (4, 4), ("2", "2"), ([1, 2], [1.0, 2])])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(SPELLINGS, st.booleans(), st.booleans(), st.integers(1, 3),
                          st.sampled_from(["a", "b"])), min_size=1, max_size=8))
def test_a_migrated_database_holds_what_this_version_would_have_stored(drawn):
    """Any mix of spellings, in any order: migrating the version-1 file gives the rows a
    fresh database of this version holds for the same measurements, and storing them again
    adds nothing (the import is still idempotent)."""
    items = [_m([64.0] if problem else [64], pair[second], float(t), float(t), device)
             for pair, second, problem, t, device in drawn]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "v1.db"
        write_v1(path, items)
        with TuningDB(path) as db:
            assert _rows(db) == _rows(_fresh(items))
            assert db.add(items) == 0
