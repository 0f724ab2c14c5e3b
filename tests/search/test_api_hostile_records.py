"""Hostile input to the records, logs, Kernel Tuner caches and spaces of the search.

Each test is one finding of a probe: bad input to a public function is one
InvalidInputError naming the argument or the file (and line), never a raw exception, a
silent partial read or a lost measurement.
"""

from __future__ import annotations

import gzip
import json
import math

import numpy as np
import pytest

from iobound.errors import InvalidInputError
from kernels.status import Status
from search.grid_space import GridSpace
from search.kt_cache import KtCache, entry_status, load_cache, named, recorded_time
from search.kt_cache_write import records_to_cache, write_cache
from search.measure.base import MeasureRecord, Measurer
from search.measure.replay import ReplayMeasurer
from search.records import LOG_HEAD, as_logged, bad_time, is_log_file, read_log
from search.replay_space import ReplaySpace
from search.resume import check_resume_header, check_resume_identity, load_resume
from search.space import sample_excluding
from search.t4_results import as_cache_dict
from search.tune_result import StopReason, Trial, TuneResult
from search.tuner import tune

HEADER = json.dumps(LOG_HEAD)
GOOD = {"config": {"a": 1}, "status": "ok", "time_ms": 1.0}


class Bowl(Measurer):
    name = "bowl"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=1.0 + c["a"]) for c in configs]


def _log(tmp_path, *lines: str, header: str = HEADER):
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join([header, *lines]) + "\n")
    return path


def _line(index=0, kind="record", **record) -> str:
    return json.dumps({"kind": kind, "index": index, "record": {**GOOD, **record}})


# -- 1. a damaged gzip log given as a new log ---------------------------------------------

def _damaged_gzip_log(tmp_path):
    data = bytearray(gzip.compress((HEADER + "\n" + "x" * 1000 + "\n").encode()))
    for k in range(12, len(data) - 8):  # the deflate data, not the gzip header
        data[k] ^= 0x55
    path = tmp_path / "bad.jsonl.gz"
    path.write_bytes(bytes(data))
    return path


def test_tune_refuses_a_damaged_gzip_log_naming_it(tmp_path):
    path = _damaged_gzip_log(tmp_path)
    with pytest.raises(InvalidInputError, match="bad.jsonl.gz.* exists and is no run's log"):
        tune(GridSpace({"a": [1, 2]}), Bowl(), strategy="grid", budget=2, seed=0, log=str(path))


def test_is_log_file_of_a_damaged_gzip_names_it(tmp_path):
    with pytest.raises(InvalidInputError, match="bad.jsonl.gz.* cannot be read"):
        is_log_file(_damaged_gzip_log(tmp_path))


def test_is_log_file_of_a_missing_path_or_a_folder_is_false(tmp_path):
    assert is_log_file(tmp_path / "missing.jsonl") is False
    assert is_log_file(tmp_path) is False


# -- 2. read_log ---------------------------------------------------------------------------

@pytest.mark.parametrize("status, extra", [("ok", {}), ("compile_error", {"time_ms": None}),
                                            ("ok", {"surrogate_cost": 10 ** 400})])
def test_a_surrogate_cost_that_is_no_number_is_an_invalid_record(tmp_path, status, extra):
    record = {"status": status, "surrogate_cost": "x", **extra}
    path = _log(tmp_path, _line(0, **record), _line(1))
    first, second = read_log(path).entries
    assert first.record.status is Status.INVALID and "surrogate cost" in first.record.error
    assert second.record.time_ms == 1.0


@pytest.mark.parametrize("kind", ["recrod", None, "header", 5])
def test_a_record_line_of_another_kind_names_the_file_and_line(tmp_path, kind):
    line = json.dumps({"index": 0, "record": GOOD, **({} if kind is None else {"kind": kind})})
    with pytest.raises(InvalidInputError, match=r"run.jsonl' line 3: a line holding a 'record'"):
        read_log(_log(tmp_path, _line(0), line))


def test_lines_without_a_record_are_still_passed_over(tmp_path):
    path = _log(tmp_path, _line(0), json.dumps({"kind": "note"}), HEADER, _line(1))
    assert [e.index for e in read_log(path).entries] == [0, 1]


@pytest.mark.parametrize("version", ["true", "1.0", '"1"'])
def test_a_header_version_that_is_no_integer_1_is_refused(tmp_path, version):
    header = HEADER.replace('"version": 1', f'"version": {version}')
    with pytest.raises(InvalidInputError, match="has schema version"):
        read_log(_log(tmp_path, _line(0), header=header))


def test_bad_time_of_a_record_without_status_or_of_no_mapping():
    assert bad_time({}) == ""
    with pytest.raises(InvalidInputError, match="a logged record"):
        bad_time(None)


def test_as_logged_turns_arrays_into_lists_and_refuses_other_objects():
    assert as_logged({"x": np.array([1, 2])}) == {"x": [1, 2]}
    with pytest.raises(InvalidInputError, match="cannot write"):
        as_logged({"x": object()})


# -- 3. writing a cache --------------------------------------------------------------------

def test_numpy_configs_of_a_grid_space_are_written_to_a_cache(tmp_path):
    values = np.array([1, 2])
    cache = records_to_cache([MeasureRecord.ok(GridSpace({"a": values}).get(1), time_ms=1.0)],
                             {"a": values})
    got = load_cache(write_cache(tmp_path / "c.json", cache))
    assert [(e["a"], e["time"]) for e in got.entries] == [(2, 1.0)]


def test_a_tuple_value_is_written_as_the_list_load_cache_reads(tmp_path):
    cache = records_to_cache([MeasureRecord.ok({"a": (1, 2)}, time_ms=1.0)], {"a": [[1, 2]]})
    assert load_cache(write_cache(tmp_path / "c.json", cache)).entries[0]["a"] == [1, 2]


def test_configs_python_calls_equal_are_one_entry_the_last_wins(tmp_path):
    recs = [MeasureRecord.ok({"a": v}, time_ms=t) for v, t in ((1, 2.0), (1.0, 3.0), (True, 4.0))]
    cache = records_to_cache(recs, {"a": [1]})
    assert [e["time"] for e in cache.entries] == [4.0]
    assert len(load_cache(write_cache(tmp_path / "c.json", cache)).entries) == 1


def test_a_record_lacking_a_parameter_or_holding_a_dict_value_is_named():
    with pytest.raises(InvalidInputError, match="lacks the parameter 'b'"):
        records_to_cache([MeasureRecord.ok({"a": 1}, time_ms=1.0)], {"a": [1], "b": [2]})
    with pytest.raises(InvalidInputError, match="parameter 'a' holds"):
        records_to_cache([MeasureRecord.ok({"a": {"x": 1}}, time_ms=1.0)], {"a": [1]})


def test_tune_result_to_dict_of_numpy_configs_is_json():
    rec = MeasureRecord.ok({"a": np.int64(2)}, time_ms=1.0, extra={"n": np.float32(0.5)})
    t = Trial(1, {"a": np.int64(2)}, rec)
    res = TuneResult(best=t, trials=(t,), strategy="grid", measure="bowl", seed=0, budget=1,
                     rounds=1, stop_reason=StopReason.BUDGET, space={}, strategy_seconds=0.0,
                     measure_seconds=0.0)
    assert json.loads(json.dumps(res.to_dict()))["best"]["config"] == {"a": 2}


# -- 4. a key given twice in a cache file --------------------------------------------------

def test_a_duplicate_cache_key_is_refused_naming_the_file_and_key(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('{"tune_params_keys": ["a"], "tune_params": {"a": [1]}, "cache": {'
                    '"1": {"a": 1, "time": 2.0}, "1": {"a": 1, "time": 9.0}}}')
    with pytest.raises(InvalidInputError, match=r"c.json' holds the key '1' twice"):
        load_cache(path)


# -- 5. ReplaySpace.status -----------------------------------------------------------------

def _replay() -> ReplaySpace:
    return ReplaySpace(KtCache({"a": [1, 2]}, [{"a": 1, "time": 1.0}, {"a": 2, "time": 2.0}]))


@pytest.mark.parametrize("i", [2.7, True, "1", None])
def test_status_of_no_integer_is_refused(i):
    with pytest.raises(InvalidInputError, match="index must be an integer"):
        _replay().status(i)


@pytest.mark.parametrize("i", [-1, 2, 100])
def test_status_outside_the_space_is_an_index_error(i):
    with pytest.raises(IndexError, match="outside"):
        _replay().status(i)


# -- 6. sample_excluding -------------------------------------------------------------------

@pytest.mark.parametrize("exclude, free", [({100, 200}, 4), ([0, 0, 0], 3), ([], 4)])
def test_sample_excluding_counts_only_distinct_indices_in_the_space(exclude, free):
    got = sample_excluding(GridSpace({"a": [1, 2, 3, 4]}), 5, exclude, np.random.default_rng(0))
    assert len(got) == len(set(got)) == free and not set(got) & set(exclude)


@pytest.mark.parametrize("n, exclude", [(2.5, set()), (True, set()), (-1, set()), (2, None),
                                        (2, ["0"]), (2, 3)])
def test_sample_excluding_refuses_a_bad_n_or_exclude(n, exclude):
    with pytest.raises(InvalidInputError, match="n|exclude"):
        sample_excluding(GridSpace({"a": [1, 2, 3, 4]}), n, exclude, np.random.default_rng(0))


# -- 7. a KtCache built directly -----------------------------------------------------------

@pytest.mark.parametrize("params, entries, needle", [
    ({"a": [1]}, [{"b": 1, "time": 1.0}], "entry 0 lacks the parameter 'a'"),
    (None, [], "tune_params must be a mapping"),
    ({}, [{"a": 1}], "tune_params must be a mapping naming at least one"),
    ({"a": [1]}, [{"a": 1, "time": 1.0}, {"a": 1.0, "time": 2.0}], "twice"),
    ({"a": [1]}, [5], "entry 0 is not a mapping"),
    ({"a": [1]}, None, "entries must be"),
])
def test_a_bad_kt_cache_is_refused_where_it_is_built(params, entries, needle):
    with pytest.raises(InvalidInputError, match=needle):
        KtCache(params, entries)


def test_an_in_memory_legacy_failure_time_replays_as_load_cache_reads_it(tmp_path):
    cache = KtCache({"a": [1, 2]}, [{"a": 1, "time": 1e20}, {"a": 2, "time": 2.0}])
    loaded = load_cache(write_cache(tmp_path / "c.json", cache))
    assert [entry_status(e) for e in loaded.entries] == [entry_status(e) for e in cache.entries]
    rec = ReplayMeasurer(cache).measure([{"a": 1}])[0]
    assert rec.status is Status.RUNTIME_ERROR and recorded_time(cache.entries[0]) is None
    assert ReplaySpace(cache).status(0) is Status.RUNTIME_ERROR


# -- 8. MeasureRecord ----------------------------------------------------------------------

@pytest.mark.parametrize("d, needle", [
    ({**GOOD, "estimate": "false"}, "estimate must be True or False"),
    ({"status": "ok"}, "lacks 'config'"),
    ([1], "a record's dict must be"),
    (None, "a record's dict must be"),
    ({**GOOD, "config": None}, "config must be"),
    ({**GOOD, "extra": None}, "extra must be"),
    ({**GOOD, "timestamp": None}, "timestamp must be a finite number"),
    ({**GOOD, "timestamp": "5"}, "timestamp must be a finite number"),
    ({**GOOD, "timestamp": True}, "timestamp must be a finite number"),
])
def test_from_dict_checks_every_field(d, needle):
    with pytest.raises(InvalidInputError, match=needle):
        MeasureRecord.from_dict(d)


def test_a_cost_past_float_range_and_an_extra_of_no_mapping_are_named():
    with pytest.raises(InvalidInputError, match="a cost must be a real number within float"):
        MeasureRecord.ok({}, costs=[10 ** 400])
    with pytest.raises(InvalidInputError, match="extra must be"):
        MeasureRecord.failed({}, "invalid", extra="abc")
    with pytest.raises(InvalidInputError, match="surrogate_cost must be a real number within"):
        MeasureRecord.ok({}, surrogate_cost=10 ** 400)


def test_the_time_of_nan_costs_is_the_median_of_the_numbers():
    rec = MeasureRecord.ok({}, costs=[math.nan, 1.0, 2.0])
    assert rec.time_ms == 1.5 and MeasureRecord.ok({}, costs=[2.0, math.nan, 1.0]).time_ms == 1.5


# -- 9. small raw exceptions ---------------------------------------------------------------

@pytest.mark.parametrize("call, needle", [
    (lambda: named(5), "a device name must be"),
    (lambda: entry_status(None), "a cache entry must be"),
    (lambda: recorded_time(None), "a cache entry must be"),
    (lambda: as_cache_dict({}, "w.json"), "w.json: not a T4 results file"),
    (lambda: ReplayMeasurer(""), "path must not be empty"),
])
def test_small_calls_name_the_bad_argument(call, needle):
    with pytest.raises(InvalidInputError, match=needle):
        call()


def test_a_t4_timestamp_that_is_an_object_is_named():
    r = [{"configuration": {"a": 1}, "invalidity": "constraints", "timestamp": {"x": 1}}]
    with pytest.raises(InvalidInputError, match="result 0 has a timestamp"):
        as_cache_dict({"results": r}, "f.json")


def test_a_file_with_results_and_cache_says_so(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"results": [], "cache": {}}))
    with pytest.raises(InvalidInputError, match="holds both 'results'.* and 'cache'"):
        load_cache(path)


def test_resume_checks_its_arguments(tmp_path):
    space = GridSpace({"a": [1, 2]})
    with pytest.raises(InvalidInputError, match="header must be"):
        check_resume_header("r.jsonl", None, space, Bowl())
    with pytest.raises(InvalidInputError, match="measurer must be"):
        check_resume_header("r.jsonl", {}, space, None)
    path = _log(tmp_path, _line(0))
    with pytest.raises(InvalidInputError, match="space must be"):
        load_resume(path, None, Bowl())
    with pytest.raises(InvalidInputError, match="measurer must be"):
        load_resume(path, space, None)


@pytest.mark.parametrize("key", ["space", "measurer"])
def test_a_resume_header_whose_space_is_no_object_is_refused(key):
    with pytest.raises(InvalidInputError, match=f"records a {key} that is no object"):
        check_resume_identity("r.jsonl", {key: ["conv"]}, {"kind": "GridSpace"}, "bowl")


def test_report_winner_refuses_a_verify_that_is_no_flag(tmp_path):
    from iobound.layer import ConvLayer
    from search.winner import report_winner
    layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=16, k_h=3, k_w=3, padding=1)
    with pytest.raises(InvalidInputError, match="verify must be True or False"):
        report_winner(layer, dict(x=4, y=4, z=8, alpha=4, tx=4, ty=4, tz=2), "direct",
                      str(tmp_path), verify="no")


# -- 10. index of a config with another key ------------------------------------------------

def test_grid_and_replay_index_refuse_a_config_with_another_key():
    assert GridSpace({"a": [1, 2]}).index({"a": 1, "b": 0}) is None
    assert _replay().index({"a": 1, "b": 0}) is None
    assert _replay().index({"a": 1}) == 0


def test_conv_space_index_refuses_another_key_and_winograd_e_refuses_a_mapping():
    from iobound.layer import ConvLayer
    from search.conv_space import ConvSpace
    layer = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=64, k_h=3, k_w=3)
    space = ConvSpace(layer, "v100")
    cfg = space.get(100)
    assert space.index(cfg) == 100 and space.index({**cfg, "extra": 1}) is None
    with pytest.raises(InvalidInputError, match="winograd e must be integers"):
        ConvSpace(layer, "v100", "winograd", winograd_e={2: 1})
