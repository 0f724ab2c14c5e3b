"""The tuner through an executor: the same run as in process, faults logged once each."""

from __future__ import annotations

import pytest

from executor_faults import FaultMeasurer, FaultStages
from iobound.layer import ConvLayer
from search.conv_space import ConvSpace
from search.executors import ExecutorMeasurer, make_executor, measure_batch, stages_for
from search.measure.model import ModelMeasurer
from search.records import read_log
from search.grid_space import GridSpace
from search.tuner import tune

LAYER = ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=32, k_h=3, k_w=3, padding=1)


def _run(result):
    return [(t.index, t.record.status, t.record.time_ms) for t in result.trials]


def test_tune_through_an_executor_follows_the_same_path():
    """Explorer + model measurer: the same trials, best and records with 2 local workers."""
    space = ConvSpace(LAYER, "v100")
    measurer = ModelMeasurer(LAYER, "v100")
    alone = tune(space, measurer, "explorer", budget=16, seed=3)
    with make_executor(measurer, workers=2) as ex:
        spread = tune(space, ExecutorMeasurer(measurer, ex), "explorer", budget=16, seed=3)
    assert _run(spread) == _run(alone)
    assert spread.best.index == alone.best.index and spread.measure == "model"


def test_a_log_written_through_an_executor_resumes_in_process(tmp_path):
    """The log of an executor run resumes without an executor: nothing is measured again."""
    space = ConvSpace(LAYER, "v100")
    measurer = ModelMeasurer(LAYER, "v100")
    log = tmp_path / "run.jsonl"
    with make_executor(measurer, workers=2) as ex:
        first = tune(space, ExecutorMeasurer(measurer, ex), "random", budget=8, seed=1, log=log)

    class Refuse(ModelMeasurer):
        def measure(self, configs):
            raise AssertionError("measured again")

    again = tune(space, Refuse(LAYER, "v100"), "random", budget=8, seed=1, resume=log)
    assert again.resumed == 8 and again.best.index == first.best.index


def test_faults_during_tuning_are_logged_once_each(tmp_path):
    """A grid over healthy and crashing configs: the log has each exactly once, crashes as
    runtime_error, and the tuner carried on to its budget."""
    space = GridSpace({"n": [1, 2, 3, 4], "fault": ["ok", "segfault", "die_once"]})
    measurer = FaultMeasurer(tmp_path)
    assert isinstance(stages_for(measurer), FaultStages)  # the measurer's own stages
    log = tmp_path / "faults.jsonl"
    with make_executor(measurer, workers=2, retries=1) as ex:
        result = tune(space, ExecutorMeasurer(measurer, ex), "grid", budget=len(space), log=log)
    entries = read_log(log).entries
    assert sorted(e.index for e in entries) == list(range(len(space)))
    for e in entries:
        fault = e.record.config["fault"]
        assert e.record.status.value == ("runtime_error" if fault == "segfault" else "ok")
        assert e.record.extra.get("attempts", 1) == {"ok": 1, "segfault": 2, "die_once": 2}[fault]
    assert result.evaluations == len(space) and result.best.config == {"n": 1, "fault": "ok"}


def test_measure_batch_measures_the_space_configs(tmp_path):
    """measure_batch turns indices into the space's configs and back."""
    space = GridSpace({"n": [5, 6, 7], "fault": ["ok"]})
    with make_executor(FaultStages(tmp_path), workers=2) as ex:
        got = dict(measure_batch(ex, space, [2, 0]))
    assert {i: r.time_ms for i, r in got.items()} == {2: 7.0, 0: 5.0}
    with pytest.raises(ValueError, match="twice"):
        with make_executor(FaultStages(tmp_path), workers=1) as ex:
            list(measure_batch(ex, space, [1, 1]))


def test_executor_measurer_non_mapping_config_is_an_invalid_record(tmp_path):
    """Through an executor too, a non-mapping configuration is an invalid record in its
    place (not a TypeError in the batch check) and the others are measured."""
    from iobound.errors import InvalidInputError

    with make_executor(FaultStages(tmp_path), workers=1) as ex:
        m = ExecutorMeasurer(FaultMeasurer(tmp_path), ex)
        records = m.measure([{"n": 5, "fault": "ok"}, None, {"n": 6, "fault": "ok"}])
        with pytest.raises(InvalidInputError, match="configs must be a list"):
            m.measure(None)
    assert [r.status.value for r in records] == ["ok", "invalid", "ok"]
    assert [r.time_ms for r in records] == [5.0, None, 6.0] and records[1].config == {}
