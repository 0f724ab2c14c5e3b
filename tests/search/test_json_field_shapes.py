"""Cache and T4 results files whose fields have the wrong JSON type are bad input.

Found by static analysis (mypy: a value read from a file used as a dict key or indexed
without a type check). ``load_cache`` / ``ReplaySpace`` promise InvalidInputError naming
the file for "wrong shapes or types"; these raised TypeError/KeyError tracebacks (and
``iobound tune --measure replay:FILE`` printed them)."""

import json

import pytest

from iobound.errors import InvalidInputError
from search.kt_cache import entry_status, load_cache
from search.measure.base import Status
from search.replay_space import ReplaySpace


def _cache(tmp_path, status):
    raw = {"device_name": "A100", "kernel_name": "k", "problem_size": [8],
           "tune_params_keys": ["a"], "tune_params": {"a": [1, 2]}, "objective": "time",
           "cache": {"1": {"a": 1, "time": 1.5, "times": [1.5]},
                     "2": {"a": 2, "time": "RuntimeFailedConfig", "status": status}}}
    path = tmp_path / "c.json"
    path.write_text(json.dumps(raw))
    return path


@pytest.mark.parametrize("status", [["x"], {"v": 1}])
def test_an_unhashable_status_beside_a_failure_string_is_no_crash(tmp_path, status):
    # the time says how it failed; a status that is no status value is ignored (as "odd")
    assert entry_status({"time": "RuntimeFailedConfig", "status": status}) is Status.RUNTIME_ERROR
    try:
        space = ReplaySpace(_cache(tmp_path, status))
    except InvalidInputError:
        return  # refusing the file is fine too; a TypeError is not
    assert len(space) == 2


def _t4(tmp_path, result_fields):
    result = {"configuration": {"a": 1}, "invalidity": "correct",
              "measurements": [{"name": "time", "value": 1.5, "unit": "ms"}], **result_fields}
    path = tmp_path / "r-results.json"
    path.write_text(json.dumps({"schema_version": "1.0.0", "results": [result]}))
    return path


@pytest.mark.parametrize("fields", [
    {"objectives": 5},                                     # TypeError: not subscriptable
    {"objectives": {"a": 1}},                              # KeyError: 0
    {"measurements": 5},                                   # TypeError: not iterable
    {"measurements": [{"name": ["time"], "value": 1.5}]},  # TypeError: unhashable
])
def test_t4_results_fields_of_the_wrong_type_are_refused_by_name(tmp_path, fields):
    with pytest.raises(InvalidInputError, match="r-results.json"):
        load_cache(_t4(tmp_path, fields))
