"""Hostile input to the tuning session, its log header, executors, progress bar and the
output-path helpers: one InvalidInputError naming the argument, never a raw exception,
a log that strict JSON readers refuse, or a silent wrong answer."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from iobound.errors import InvalidInputError
from search.executors import make_executor, measure_batch
from search.grid_space import GridSpace
from search.kt_cache import KtCache
from search.log_writer import LogWriter
from search.measure.base import MeasureRecord, Measurer
from search.measure.replay import ReplayMeasurer
from search.outputs import (check_distinct_files, check_not_tuning_data, check_output_dir,
                            check_output_file, json_safe, write_atomic)
from search.progress import ProgressBar
from search.session.replay import tune_replay
from search.session.settings import Builders
from search.tuner import tune


class Bowl(Measurer):
    name = "bowl"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=1.0 + c["a"]) for c in configs]


def _strict(text: str):
    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")
    return json.loads(text, parse_constant=refuse)


# -- the log's header is strict JSON ------------------------------------------------------

@pytest.mark.parametrize("value", [math.nan, -math.inf, np.float32("nan"), np.float64("inf"),
                                   [1.0, math.nan]])
def test_a_header_value_json_cannot_hold_is_refused_before_the_log_is_made(tmp_path, value):
    log = tmp_path / "run.jsonl"
    with pytest.raises(InvalidInputError, match="'goal'"):
        tune(GridSpace({"a": [1, 2, 3]}), Bowl(), budget=2, log=log, header={"goal": value})
    assert not log.exists()


def test_a_log_writer_header_with_nan_is_refused_naming_the_key(tmp_path):
    with pytest.raises(InvalidInputError, match="'goal' is nan"):
        LogWriter(tmp_path / "run.jsonl", header={"goal": math.nan})


def test_a_header_of_numpy_values_is_written_as_strict_json(tmp_path):
    log = tmp_path / "run.jsonl"
    tune(GridSpace({"a": [1, 2, 3]}), Bowl(), budget=2, log=log,
         header={"goal": np.float32(0.5), "shape": np.arange(3)})
    head = _strict(log.read_text().splitlines()[0])
    assert head["goal"] == 0.5 and head["shape"] == [0, 1, 2]


def test_json_safe_turns_numpy_nan_and_arrays_into_strict_json():
    got = json_safe({"a": np.float32("nan"), "b": np.array([1.5, np.inf]), "c": np.int64(2),
                     "d": np.bool_(True)})
    assert _strict(json.dumps(got)) == {"a": None, "b": [1.5, None], "c": 2, "d": True}


# -- the session's arguments --------------------------------------------------------------

def test_tune_replay_refuses_settings_that_are_no_tune_settings(tmp_path):
    with pytest.raises(InvalidInputError, match="settings must be a .*TuneSettings"):
        tune_replay(tmp_path / "cache.json", {"budget": 5})


@pytest.mark.parametrize("field", ["space", "measurer", "strategy"])
def test_builders_refuse_what_cannot_be_called(field):
    with pytest.raises(InvalidInputError, match=f"{field} must be callable"):
        Builders(**{field: 5})


def test_builders_refuse_a_function_of_the_wrong_arguments():
    with pytest.raises(InvalidInputError, match=r"space must be callable as space\("):
        Builders(space=lambda layer: None)


def test_default_builders_still_build():
    assert callable(Builders().strategy)


# -- executors -----------------------------------------------------------------------------

def _replay():
    space = GridSpace({"a": [1, 2]})
    m = ReplayMeasurer(KtCache(tune_params={"a": [1, 2]}, entries=[{"a": 1, "time": 2.0}]))
    return space, m


@pytest.mark.parametrize("index", [-1, 2, 10**6])
def test_measure_batch_refuses_an_index_outside_the_space(index):
    space, m = _replay()
    with make_executor(m, workers=1) as ex:
        with pytest.raises(InvalidInputError, match=f"index {index} is outside the space of 2"):
            list(measure_batch(ex, space, [index]))


def test_measure_batch_takes_an_iterator_of_indices_once():
    space, m = _replay()
    with make_executor(m, workers=1) as ex:
        got = sorted((i, r.status.value) for i, r in measure_batch(ex, space, iter([1, 0])))
    assert got == [(0, "ok"), (1, "invalid")]


def test_an_executor_measures_no_more_after_its_with_block():
    space, m = _replay()
    with make_executor(m, workers=1) as ex:
        assert len(list(measure_batch(ex, space, [0]))) == 1
    with pytest.raises(InvalidInputError, match="local executor is closed"):
        list(measure_batch(ex, space, [0]))


# -- the progress bar ----------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, name", [
    ({"total": 2.7}, "total"), ({"total": math.nan}, "total"), ({"total": True}, "total"),
    ({"total": -1}, "total"), ({"total": 4, "width": -5}, "width"),
    ({"total": 4, "width": 0}, "width"), ({"total": 4, "min_interval": math.nan}, "min_interval"),
    ({"total": 4, "min_interval": -1.0}, "min_interval"), ({"total": 4, "label": 3}, "label"),
    ({"total": 4, "force": "yes"}, "force"), ({"total": 4, "unit": None}, "unit")])
def test_progress_bar_checks_its_arguments(kwargs, name):
    with pytest.raises(InvalidInputError, match=name):
        ProgressBar(**kwargs)


def test_progress_bar_of_nothing_to_do_counts_one_step():
    import io
    out = io.StringIO()
    bar = ProgressBar(0, stream=out, force=True, width=4)
    bar(0, 0)
    bar.close()
    assert out.getvalue().endswith("\r[....] 0/1\n")


# -- output paths --------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: check_output_file("--emit", 5), lambda: check_output_dir("--out-dir", None),
    lambda: check_not_tuning_data("--export-cache", 5),
    lambda: check_distinct_files([("--log", 3.5)]), lambda: write_atomic(7, b"x")])
def test_output_helpers_refuse_what_is_no_path(call):
    with pytest.raises(InvalidInputError, match="must be a path"):
        call()


def test_write_atomic_refuses_text_for_bytes(tmp_path):
    with pytest.raises(InvalidInputError, match="data must be"):
        write_atomic(tmp_path / "a", "text")
    assert not (tmp_path / "a").exists()
