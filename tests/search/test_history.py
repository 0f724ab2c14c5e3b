"""Tests of the SQLite history database."""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from search.db import Workload
from search.db.layer_keys import layer_key_workload, replay_layer_key, workload_layer_key
from search.history import History, HistoryKey
from search.measure.base import MeasureRecord


def test_keys_keep_layers_devices_and_toolchains_apart(tmp_path):
    """Records under different keys never mix, and survive reopening the file."""
    db = tmp_path / "h.sqlite"
    k1 = HistoryKey("conv1", "v100", "model v1")
    k2 = HistoryKey("conv1", "a100", "model v1")
    with History(db) as h:
        h.add(k1, [MeasureRecord.ok({"x": 1}, time_ms=3.0)])
        h.add(k2, [MeasureRecord.ok({"x": 1}, time_ms=1.0), MeasureRecord.failed({"x": 2}, "timeout")])
    with History(db) as h:
        assert h.best(k1).time_ms == 3.0 and h.best(k2).time_ms == 1.0
        assert len(h.records(k2)) == 2 and set(h.keys()) == {k1, k2}


def test_latest_measurement_of_a_config_wins(tmp_path):
    """Storing the same config twice keeps one row, the latest."""
    k = HistoryKey("L", "d", "t")
    with History(tmp_path / "h.sqlite") as h:
        h.add(k, [MeasureRecord.ok({"x": 1}, time_ms=3.0)])
        h.add(k, [MeasureRecord.ok({"x": 1}, time_ms=2.0)])
        assert [r.time_ms for r in h.records(k)] == [2.0]


def test_best_ignores_failures(tmp_path):
    """best() is None when nothing ran ok."""
    k = HistoryKey("L", "d", "t")
    with History(tmp_path / "h.sqlite") as h:
        h.add(k, [MeasureRecord.failed({"x": 1}, "compile_error")])
        assert h.best(k) is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                               max_size=3),
    max_leaves=8)


@given(st.text(max_size=12), json_values)
@example("ns::conv", [64, 64])
@example("ns::conv", ["fp16", 64])
@example('"q":', {"a:b": "c:d"})
@example("", "x:y")
@example("k", "123")
def test_a_recorded_spaces_key_names_exactly_its_workload(kernel, problem):
    """Whatever the kernel name holds (':' of C++ 'ns::conv', quotes) and whatever JSON the
    problem is, the key a replay session stores under is the workload of the kernel and
    problem (what importing the cache creates)."""
    assert layer_key_workload(replay_layer_key(kernel, problem), ("x",)) == Workload(
        kernel, problem, ("x",))


@given(st.text(max_size=12).filter(lambda k: ":" not in k and not k.startswith('"')),
       st.lists(st.integers(), max_size=4))
def test_keys_of_plain_names_are_written_and_read_as_before(kernel, problem):
    """A kernel name without ':' and a list of integers: the key is the one earlier
    versions wrote (replay:KERNEL:str(problem)), read back as before."""
    old = f"replay:{kernel}:{problem}"
    assert replay_layer_key(kernel, problem) == old
    assert layer_key_workload(old, ("x",)) == Workload(kernel, problem, ("x",))


@given(st.text(max_size=12), json_values)
def test_any_workload_key_reads_back_as_that_workload(template, problem):
    """workload_layer_key inverts layer_key_workload for every workload (History.keys)."""
    w = Workload(template, problem, ("x",))
    assert layer_key_workload(workload_layer_key(w), ("x",)) == w


@pytest.mark.parametrize("kernel, problem", [("ns::conv", [64, 64]), ("", "x:y"), ("k", None)])
def test_records_stored_under_a_replay_key_are_found_under_it(tmp_path, kernel, problem):
    """records, best and keys find what add stored under a recorded space's key, whatever
    the kernel name and problem (one workload may have two key strings: "x:y" and
    'replay::"x:y"' both name template "" and problem "x:y")."""
    key = HistoryKey(replay_layer_key(kernel, problem), "gpu", "replay")
    with History(tmp_path / "h.db") as h:
        h.add(key, [MeasureRecord.ok({"x": 1}, time_ms=2.0)])
        assert h.best(key).time_ms == 2.0 and len(h.records(key)) == 1
        (stored,) = h.keys()
        assert layer_key_workload(stored.layer, ("x",)) == Workload(kernel, problem, ("x",))
        assert h.db.workloads() == [Workload(kernel, problem, ("x",))]


def test_records_of_two_parameter_sets_are_two_workloads(tmp_path):
    """A layer's direct and Winograd configurations under one key: each stored under the
    workload of its own parameter names (export can write both), all found under the key."""
    key = HistoryKey('{"c_in": 2}', "v100", "model v2")
    direct, wino = {"x": 6, "alpha": 1}, {"x": 6, "e": 2}
    with History(tmp_path / "h.db") as h:
        assert h.add(key, [MeasureRecord.ok(direct, time_ms=2.0),
                           MeasureRecord.ok(wino, time_ms=1.5)]) == 2
        assert {w.params for w in h.db.workloads()} == {("x", "alpha"), ("x", "e")}
        assert [r.config for r in h.records(key)] == [wino, direct] and h.keys() == [key]
