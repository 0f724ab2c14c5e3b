"""Hostile data and arguments to the tuning database's API (probe42 #5, #6, #11, #15, #19,
#31, #32, #34, #35, #36, #40, #42): a damaged file, features that are no numbers, numpy
value lists, device aliases in export, and the small public helpers given None or the
wrong type. Each is one InvalidInputError naming the argument (or the file); valid input
behaves as before."""

from __future__ import annotations

import json
import math
import os
import sqlite3

import numpy as np
import pytest

from iobound.errors import InvalidInputError
from search.db import Measurement, TuningDB, Workload
from search.db.db_file import DatabaseFileError
from search.measure.base import MeasureRecord

W = Workload("k", [8], ("x",))


def _ok(x, t=1.0, **extra) -> MeasureRecord:
    return MeasureRecord.ok({"x": x}, time_ms=t, extra=extra)


# -- #19: a file damaged past its schema pages -------------------------------------------

@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    """A database of 300 padded rows (about 220 kB) with three pages in its middle
    overwritten: it opens (the schema pages are sound), its rows cannot be read."""
    path = tmp_path_factory.mktemp("damaged") / "d.db"
    with TuningDB(path) as db:
        db.add([Measurement(W, "d", "t", _ok(i, 1.0 + i, pad="y" * 200)) for i in range(300)])
    data = bytearray(path.read_bytes())
    mid = len(data) // 2
    for i in range(mid, mid + 4096 * 3):
        data[i] = (data[i] * 7 + 13) & 0xFF
    path.write_bytes(bytes(data))
    return path


def _copy(damaged, tmp_path):
    copy = tmp_path / "copy.db"
    copy.write_bytes(damaged.read_bytes())
    return copy


READS = {
    "measurements": lambda db: db.measurements(),
    "measurements of a workload": lambda db: db.measurements(W, device="d"),
    "timings": lambda db: db.timings(["x"]),
    "summary": lambda db: __import__("search.db.queries", fromlist=["x"]).summary(db),
    "best": lambda db: __import__("search.db.queries", fromlist=["x"]).best(db, W, "d", k=3),
    "history_for_space": lambda db: __import__(
        "search.db.queries", fromlist=["x"]).history_for_space(
            db, __import__("search.grid_space", fromlist=["x"]).GridSpace({"x": [1]})),
    "workload_cache": lambda db: __import__(
        "search.db.export", fromlist=["x"]).workload_cache(db, W, "d"),
    "plan": lambda db: __import__("search.db.remove", fromlist=["x"]).plan(
        db, __import__("search.db.remove", fromlist=["x"]).Selection(device="d")),
}


@pytest.mark.parametrize("read", sorted(READS))
def test_a_read_of_a_damaged_file_names_the_file(damaged, tmp_path, read):
    """Was: a raw sqlite3.DatabaseError ("database disk image is malformed")."""
    with TuningDB(_copy(damaged, tmp_path)) as db:
        with pytest.raises(InvalidInputError, match="copy.db.*damaged.*malformed") as info:
            READS[read](db)
    assert isinstance(info.value, DatabaseFileError) and info.value.path.endswith("copy.db")


@pytest.mark.parametrize("write", ["add", "remove"])
def test_nothing_is_written_into_a_damaged_file(damaged, tmp_path, write):
    """Was: add stored the measurement into the damaged file (and returned 1); remove
    raised a raw sqlite3.DatabaseError."""
    from search.db.remove import Selection, remove
    path = _copy(damaged, tmp_path)
    with TuningDB(path) as db:
        before = db.last_id()
        with pytest.raises(DatabaseFileError, match="copy.db.*damaged"):
            if write == "add":
                db.add([Measurement(W, "d", "t", _ok(5000))])
            else:
                remove(db, Selection(device="d"))
        assert db.last_id() == before == 300 and db.count() == 300


def test_a_sound_file_is_written_after_its_check(tmp_path):
    """Valid input unchanged: the first write of a connection checks the file, the
    later ones do not need to; every measurement is stored."""
    path = tmp_path / "t.db"
    with TuningDB(path) as db:
        assert db.add([Measurement(W, "d", "t", _ok(1))]) == 1
        assert db.add([Measurement(W, "d", "t", _ok(2))]) == 1
    with TuningDB(path) as db:
        assert db.add([Measurement(W, "d", "t", _ok(3))]) == 1
        assert [m.record.config["x"] for m in db.measurements(order="stored")] == [1, 2, 3]


def test_other_sqlite_errors_are_kept(tmp_path):
    """Only damage is turned into DatabaseFileError: a constraint a row breaks stays
    SQLite's own error (the write transaction relies on it)."""
    with TuningDB(tmp_path / "t.db") as db:
        with pytest.raises(sqlite3.IntegrityError):
            db.write(lambda c: c.execute("INSERT INTO devices (name) VALUES (NULL)"))


# -- #5: Measurement.features --------------------------------------------------------------

@pytest.mark.parametrize("features, needle", [
    ({"a": float("nan")}, r"features\['a'\] must be a finite number, got nan"),
    ({"a": 1.0, "b": float("inf")}, r"features\['b'\] must be a finite number, got inf"),
    ({"a": np.array([1.0])}, r"features\['a'\] must be a finite number"),
    ({"a": "fast"}, r"features\['a'\] must be a finite number, got 'fast'"),
    ({"a": {"b": [1]}}, r"features\['a'\] must be a finite number"),
    ({"a": object()}, r"features\['a'\] must be a finite number"),
    ({"a": 10 ** 400}, r"features\['a'\] must be a finite number"),
    ({"a": True}, r"features\['a'\] must be a finite number, got True"),
    ({("a",): 1.0}, r"features: the key \('a',\) is no feature name"),
    ({None: 1.0}, r"features: the key None is no feature name"),
])
def test_features_that_are_no_numbers_are_refused(features, needle):
    """Was: NaN and Infinity stored as the non-JSON tokens NaN and Infinity, a string or
    a dict stored as given, None stored as the key "null", and a raw TypeError from
    inside the write for an array, a tuple key or an object."""
    db = TuningDB(":memory:")
    with pytest.raises(InvalidInputError, match=needle):
        db.add([Measurement(W, "d", "t", _ok(1), features=features)])
    assert db.count() == 0


def test_numpy_features_are_stored_as_python_numbers():
    db = TuningDB(":memory:")
    db.add([Measurement(W, "d", "t", _ok(1), features={"a": np.float32(1.5), "b": np.int64(3)})])
    stored = db.connection.execute("SELECT features FROM measurements").fetchone()[0]
    assert json.loads(stored) == {"a": 1.5, "b": 3} and "NaN" not in stored
    assert db.measurements()[0].features == {"a": 1.5, "b": 3}


# -- #6: record_features --------------------------------------------------------------------

def test_numpy_features_of_a_record_are_kept():
    """Was: np.float32 and np.int64 are no int or float: dropped, features None."""
    m = Measurement(W, "d", "t", _ok(1, features={"a": np.float32(1.5), "b": np.int64(2)}))
    assert m.features == {"a": 1.5, "b": 2.0}
    m = Measurement(W, "d", "t", _ok(1, occupancy=np.float64(0.5), flops=np.int64(7)))
    assert m.features == {"occupancy": 0.5, "flops": 7.0}


@pytest.mark.parametrize("extra", [{"features": {"a": 10 ** 400}}, {"flops": 10 ** 400},
                                   {"flops": float("nan")}, {"features": {"a": -math.inf}}])
def test_a_record_value_that_is_no_finite_float_is_no_feature(extra):
    """Was: a raw OverflowError from the Measurement constructor for a huge int, and NaN
    stored as a NaN token. Such a value stays in the record's extra data (as a tuning log
    writes a NaN as null, which import passes over), and the measurement is stored."""
    m = Measurement(W, "d", "t", _ok(1, **extra))
    assert m.features is None
    db = TuningDB(":memory:")
    assert db.add([m]) == 1
    assert db.connection.execute("SELECT features FROM measurements").fetchone()[0] is None


def test_the_model_measurers_features_are_unchanged():
    """Valid input: the analytic features the model measurer keeps in a record's extra
    are stored as the floats they were."""
    from iobound.layer import ConvLayer
    from kernels.analytic import FEATURE_NAMES
    from search.conv_space import ConvSpace
    from search.measure.model import ModelMeasurer
    layer = ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=32, k_h=3, k_w=3, padding=1)
    space = ConvSpace(layer, "v100", "direct")
    measurer = ModelMeasurer(layer, "v100", "direct")
    configs = [space.get(i) for i in range(0, len(space), max(1, len(space) // 12))]
    records = [r for r in measurer.measure(configs) if r.is_ok]
    assert records
    for r in records:
        want = {k: float(v) for k, v in r.extra.items() if k in FEATURE_NAMES
                and isinstance(v, (int, float)) and not isinstance(v, bool)}
        assert want and Measurement(W, "d", "t", r).features == want


# -- #11: a workload stored with value lists alone -----------------------------------------

def test_removing_a_named_workload_without_measurements_removes_it():
    """Was: add([], tune_params={w2: ...}) stores w2, and remove(Selection(workloads=[w2]))
    deleted nothing and kept it, so it could never be removed."""
    from search.db.remove import Selection, remove
    db = TuningDB(":memory:")
    w2 = Workload("k", [16], ("x",))
    db.add([Measurement(W, "d", "t", _ok(1))])
    assert db.add([], {w2: {"x": [1, 2]}}) == 0 and set(db.workloads()) == {W, w2}
    assert remove(db, Selection(workloads=[w2])) == []
    assert db.workloads() == [W] and db.count() == 1


# -- #15: Selection's source ---------------------------------------------------------------

@pytest.mark.parametrize("source", ["", "/", "..", "runs/..", "  "])
def test_a_source_that_names_no_file_is_refused(source):
    """Was: "" selected every measurement TuningDB.add stored without a source (and remove
    deleted them all), "/" was kept as the file name "/"."""
    from search.db.remove import Selection
    with pytest.raises(InvalidInputError, match="source must name a file"):
        Selection(source=source)
    assert Selection(source="runs/old.json.gz").source == "old.json.gz"
    assert Selection(source="tune").source == "tune"


# -- #40: workload_cache and a device alias -----------------------------------------------

def test_workload_cache_takes_a_device_alias():
    """Was: "no measurements of k [8] on device 'v100'" for a database holding them under
    V100-SXM2 (the name iobound stores for v100)."""
    from search.db.export import workload_cache
    db = TuningDB(":memory:")
    db.add([Measurement(W, "V100-SXM2", "t", _ok(1))])
    cache = workload_cache(db, W, "v100")
    assert cache.device_name == "V100-SXM2" and [e["x"] for e in cache.entries] == [1]
    assert workload_cache(db, W, "V100-SXM2").entries == cache.entries
    db.add([Measurement(W, "Tesla V100-SXM2-16GB", "t", _ok(2))])
    with pytest.raises(InvalidInputError, match="under 2 names: Tesla V100-SXM2-16GB, V100-SXM2"):
        workload_cache(db, W, "v100")
    assert [e["x"] for e in workload_cache(db, W, "Tesla V100-SXM2-16GB").entries] == [2]
    with pytest.raises(InvalidInputError, match="no measurements of k"):
        workload_cache(db, W, "a100")


# -- #42: numpy value lists ------------------------------------------------------------------

def test_tune_params_take_numpy_values_as_configs_do():
    """Was: "'x' has a value that is no parameter value: np.int64(3)", and "the values of
    'x' must be a list" for a numpy array."""
    db = TuningDB(":memory:")
    db.add([Measurement(W, "d", "t", MeasureRecord.ok({"x": np.int64(3)}, time_ms=1.0))],
           {W: {"x": [np.int64(3)]}})
    db.add([], {W: {"x": np.array([1, 2])}})
    known = db.tune_params(W)
    assert known == {"x": [3, 1, 2]} and all(type(v) is int for v in known["x"])
    for bad, needle in [(np.array(5), "must be a list"), ([np.float64("nan")], "no parameter"),
                        ([object()], "no parameter value"), ({1, 2}, "must be a list")]:
        with pytest.raises(InvalidInputError, match=needle):
            db.add([], {W: {"x": bad}})


# -- #36: open_database's flags and option -------------------------------------------------

@pytest.mark.parametrize("kwargs, needle", [
    ({"option": "--db", "readonly": "no"}, "readonly must be True or False, got 'no'"),
    ({"option": "--db", "readonly": False, "must_exist": "yes"},
     "must_exist must be True or False, got 'yes'"),
    ({"option": 5, "readonly": True}, "option must be a builtins.str, got 5"),
    ({"option": None, "readonly": False}, "option must be a builtins.str, got None"),
])
def test_open_database_checks_its_flags_and_option(tmp_path, kwargs, needle):
    """Was: "no" taken as True ("no such database"), option 5 printed as the option, and
    option None unchecked (the database created)."""
    from search.db.opening import open_database
    path = tmp_path / "o.db"
    option = kwargs.pop("option")
    with pytest.raises(InvalidInputError, match=needle):
        open_database(path, option, **kwargs)
    assert not path.exists()
    with open_database(path, "--db", readonly=False, must_exist=False) as db:
        assert db.count() == 0


# -- #31, #32, #34, #35: the small public helpers ------------------------------------------

def _helpers():
    from search.db.conv_template import conv_algorithm
    from search.db.db_file import path_fault, side_files_fault
    from search.db.device_names import device_as_stored, held_names
    from search.db.file_access import cannot_open_reason, is_wal, may_write
    from search.db.insertion import storable
    from search.db.layer_keys import (conv_layer_key, layer_key_workload, replay_layer_key,
                                      workload_layer_key)
    from search.db.model import config_fault, digest_of, record_features, recorded_workload
    from search.db.opening import check_new_database_name
    from search.db.schema import schema_version
    return [
        # 31
        (lambda: layer_key_workload(None, ("x",)), "layer must be"),
        (lambda: layer_key_workload(5, ("x",)), "layer must be"),
        (lambda: workload_layer_key(None), "w must be"),
        (lambda: replay_layer_key(5, [1]), "kernel must be"),
        (lambda: replay_layer_key("k", {1}), "problem must be a JSON value"),
        (lambda: replay_layer_key("k", [float("nan")]), "problem .* holds NaN"),
        (lambda: conv_layer_key({1}), "problem must be"),
        (lambda: conv_layer_key({"n": float("nan")}), "problem .* holds NaN"),
        (lambda: conv_algorithm(None), "params must be a list of parameter names"),
        # 32
        (lambda: storable(None), "m must be"),
        (lambda: record_features(None), "record must be"),
        (lambda: digest_of(("k", "[8]", '["x"]'), "d", "t", None), "record must be"),
        (lambda: config_fault(None, ("x",)), "config must be"),
        (lambda: config_fault([("x", 1)], ("x",)), "config must be"),
        (lambda: recorded_workload("k", [1], None), "params must be a list"),
        # 34
        (lambda: check_new_database_name(None, "--db"), "path must be a path"),
        (lambda: check_new_database_name(5, "--db"), "path must be a path"),
        (lambda: path_fault(None, False), "path must be a path"),
        (lambda: side_files_fault(None), "path must be a path"),
        (lambda: may_write(None), "path must be a path"),
        (lambda: is_wal(None), "path must be a path"),
        (lambda: cannot_open_reason(None, Exception()), "path must be a path"),
        (lambda: schema_version(None), "conn must be"),
        # 35
        (lambda: held_names("v100", None), "held must be"),
        (lambda: device_as_stored(None, "v100"), "conn must be"),
    ]


@pytest.mark.parametrize("k", range(len(_helpers())))
def test_the_small_helpers_name_a_bad_argument(k):
    """Was: a raw AttributeError or TypeError (or, for a NaN problem, the key
    'replay:k:[NaN]', which no workload could have)."""
    call, needle = _helpers()[k]
    with pytest.raises(InvalidInputError, match=needle):
        call()


def test_is_wal_does_not_open_a_file_descriptor(tmp_path):
    """Was: is_wal(5) opened the process's file descriptor 5, read it and closed it."""
    from search.db.file_access import is_wal
    (tmp_path / "f").write_bytes(b"x" * 32)
    fd = os.open(tmp_path / "f", os.O_RDONLY)
    try:
        with pytest.raises(InvalidInputError, match="path must be a path"):
            is_wal(fd)
        assert os.lseek(fd, 0, os.SEEK_CUR) == 0  # neither read nor closed
    finally:
        try:
            os.close(fd)
        except OSError:
            pass


def test_the_small_helpers_on_valid_input_are_unchanged():
    from search.db.layer_keys import layer_key_workload, replay_layer_key, workload_layer_key
    from search.db.model import config_fault, recorded_workload
    from search.db.device_names import held_names
    w = layer_key_workload(replay_layer_key("ns::conv", [64, 64]), ("x", "y"))
    assert (w.template, w.problem) == ("ns::conv", [64, 64])
    assert workload_layer_key(w) == 'replay:"ns::conv":[64, 64]'
    assert config_fault({"x": 1, "z": 2}, ("x", "y")) == "it lacks y and has z"
    assert recorded_workload("k", [1], ["x"]) == Workload("k", [1], ("x",))
    assert held_names("v100", iter(["V100-SXM2", "A100-PCIE-40GB"])) == ("V100-SXM2",)
