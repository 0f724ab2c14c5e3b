"""A live record whose time (or surrogate cost) is not a positive finite number is taken
as ``invalid`` on arrival, by the rule a log is read back with, so a resumed run keeps
the finished run's best (reviewer finding: a 0 ms time was the best live, invalid on
--resume)."""

from __future__ import annotations

from search.measure.base import MeasureRecord, Measurer, Status
from search.records import read_log
from search.grid_space import GridSpace
from search.tuner import tune

SPACE = GridSpace({"a": list(range(4)), "b": list(range(3))})


class Odd(Measurer):
    """a=0: a 0 ms time; a=1: a NaN surrogate cost; a=2: a negative time; else a time."""

    name = "odd"

    def measure(self, configs):
        out = []
        for c in configs:
            if c["a"] == 0:
                out.append(MeasureRecord.ok(c, time_ms=0.0))
            elif c["a"] == 1:
                out.append(MeasureRecord.ok(c, surrogate_cost=float("nan")))
            elif c["a"] == 2:
                out.append(MeasureRecord.ok(c, time_ms=-1.0))
            else:
                out.append(MeasureRecord.ok(c, time_ms=1.0 + c["b"]))
        return out


def test_bad_times_are_invalid_live_and_logged(tmp_path):
    log = tmp_path / "run.jsonl"
    res = tune(SPACE, Odd(), "grid", budget=len(SPACE), seed=0, log=log)
    assert res.best.config == {"a": 3, "b": 0}
    bad = [t.record for t in res.trials if t.config["a"] < 3]
    assert bad and all(r.status is Status.INVALID for r in bad)
    assert all(r.error.startswith("measured ") and r.extra["measured_status"] == "ok"
               for r in bad)
    logged = {e.index: e.record.status for e in read_log(log).entries}
    assert sorted(logged.values(), key=str) == sorted((t.record.status for t in res.trials), key=str)


def test_resume_of_a_finished_run_keeps_its_best_and_path(tmp_path):
    log = tmp_path / "run.jsonl"
    first = tune(SPACE, Odd(), "explorer", budget=10, seed=1, log=log)
    again = tune(SPACE, Odd(), "explorer", budget=10, seed=1, resume=log)
    assert first.best is not None and first.best.config["a"] == 3
    assert first.best.config == again.best.config
    assert first.best.record.status == again.best.record.status
    assert [t.index for t in first.trials] == [t.index for t in again.trials]
    assert [t.record.status for t in first.trials] == [t.record.status for t in again.trials]
