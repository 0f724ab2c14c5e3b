"""Tests of TuningDB.add: what it stores is what import would accept and export can write.

A measurement whose config is not its workload's parameters with plain values, or
whose workload's problem is not finite, is refused (the importer refuses the same;
stored, it would make export of its workload refuse for good). numpy scalars, which
a space built with numpy hands out, are stored as the Python values they are.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from iobound.errors import InvalidInputError
from search.db import Measurement, TuningDB, Workload
from search.db.export import workload_cache
from search.measure.base import MeasureRecord

W = Workload("k", [8], ("x", "y"))


def _m(config, workload=W, **extra):
    return Measurement(workload, "d", "t", MeasureRecord.ok(config, time_ms=1.0, extra=extra))


@pytest.mark.parametrize("workload, config, needle", [
    (W, {"x": 1}, "lacks y"),
    (W, {"x": 1, "y": 1, "z": 1}, "has z"),
    (W, {"x": 1, "y": {"a": 1}}, "parameter 'y' is not a finite number"),
    (W, {"x": 1, "y": math.nan}, "parameter 'y' is not a finite number"),
])
def test_a_measurement_export_could_not_write_is_refused(workload, config, needle):
    """Refused naming the workload and what is wrong; nothing of that call is stored."""
    with TuningDB(":memory:") as db:
        with pytest.raises(InvalidInputError, match=needle) as info:
            db.add([_m({"x": 2, "y": 2}), _m(config, workload)])
        assert "k " in str(info.value) and db.count() == 0 and db.workloads() == []


@pytest.mark.parametrize("problem", [[math.nan], {"n": math.inf}])
def test_a_workload_whose_problem_export_could_not_write_is_refused_where_made(problem):
    """(Refused by add before; the workload itself refuses it now, as its other fields.)"""
    with pytest.raises(InvalidInputError, match="NaN or Infinity"):
        Workload("k", problem, ("x", "y"))


def test_numpy_scalars_are_stored_as_python_values():
    """A config of numpy integers (a space built from np.arange): stored, read back as
    Python ints, exported; the same config with Python ints is the same measurement."""
    rec = MeasureRecord.ok({"x": np.int64(2), "y": np.float32(0.5)}, time_ms=1.0,
                           extra={"regs": np.int32(40), "shape": (np.int16(1), 2)})
    with TuningDB(":memory:") as db:
        assert db.add([Measurement(W, "d", "t", rec)]) == 1
        (back,) = db.measurements(W)
        assert back.record.config == {"x": 2, "y": 0.5} and type(back.record.config["x"]) is int
        assert back.record.extra == {"regs": 40, "shape": [1, 2]}
        assert workload_cache(db, W, "d").entries[0]["x"] == 2
        plain = MeasureRecord(**{**rec.__dict__, "config": {"x": 2, "y": 0.5},
                                 "extra": {"regs": 40, "shape": [1, 2]}})
        assert db.add([Measurement(W, "d", "t", plain)]) == 0


numpy_ints = st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16])


@given(st.integers(0, 120), st.integers(0, 120), numpy_ints, numpy_ints)
def test_a_numpy_config_is_the_same_measurement_as_its_python_one(x, y, tx, ty):
    """Adding a config of numpy integers after the same one of Python ints adds nothing."""
    rec = MeasureRecord.ok({"x": x, "y": y}, time_ms=1.0 + x)
    as_numpy = MeasureRecord(**{**rec.__dict__, "config": {"x": tx(x), "y": ty(y)}})
    with TuningDB(":memory:") as db:
        assert db.add([Measurement(W, "d", "t", rec)]) == 1
        assert db.add([Measurement(W, "d", "t", as_numpy)]) == 0


@given(st.dictionaries(st.sampled_from(["x", "y", "z"]), st.integers(0, 9)))
def test_only_configs_of_the_workloads_parameters_are_stored(config):
    """add stores a config exactly when it holds the workload's parameters, x and y."""
    with TuningDB(":memory:") as db:
        if set(config) == {"x", "y"}:
            assert db.add([_m(config)]) == 1
        else:
            with pytest.raises(InvalidInputError, match="config"):
                db.add([_m(config)])
            assert db.count() == 0


@pytest.mark.parametrize("call, needle", [
    (lambda db: db.add(None), "measurements must be a sequence of search.db.model.Measurement"),
    (lambda db: db.add([None]), r"measurements\[0\] must be a search.db.model.Measurement"),
    (lambda db: db.add([], 5), "tune_params must be a collections.abc.Mapping"),
    (lambda db: db.add([], {"x": {}}), "a tune_params key must be a search.db.model.Workload"),
    (lambda db: db.add([], {W: 5}), "tune_params of k must be a collections.abc.Mapping"),
    (lambda db: db.measurements("k"), "workload must be a search.db.model.Workload"),
    (lambda db: db.measurements(device=5), "device must be a builtins.str"),
    (lambda db: db.measurements(toolchain=["t"]), "toolchain must be a builtins.str"),
    (lambda db: db.measurements(counted_only="no"), "counted_only must be True or False"),
    (lambda db: db.tune_params(None), "workload must be a search.db.model.Workload"),
])
def test_wrong_objects_are_named(call, needle):
    """Objects of the wrong class are one InvalidInputError naming the argument and the
    expected class (were TypeError/AttributeError/sqlite3 errors, or silently no filter)."""
    with TuningDB(":memory:") as db:
        with pytest.raises(InvalidInputError, match=needle):
            call(db)
        assert db.count() == 0


@given(st.lists(st.sampled_from([0.5, 1.0, 2.0, None]), min_size=1, max_size=8))
def test_measurements_in_stored_order_and_fastest_first(times):
    """``order="stored"`` gives the measurements as added; the default, fastest first
    (untimed last, ties in the order added)."""
    recs = [MeasureRecord.ok({"x": i, "y": 0}, time_ms=t) for i, t in enumerate(times)]
    with TuningDB(":memory:") as db:
        for r in recs:
            db.add([Measurement(W, "d", "t", r)])
        stored = [m.record.config["x"] for m in db.measurements(order="stored")]
        fastest = [m.record.config["x"] for m in db.measurements()]
    assert stored == list(range(len(times)))
    assert fastest == sorted(stored, key=lambda i: (times[i] is None, times[i] or 0.0, i))


@pytest.mark.parametrize("order", ["slowest", "", None, 1, ["stored"]])
def test_an_unknown_measurement_order_is_named(order):
    with TuningDB(":memory:") as db, pytest.raises(InvalidInputError, match="order must be one "
                                                                           "of fastest, stored"):
        db.measurements(order=order)
