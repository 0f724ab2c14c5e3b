"""Gaps found by mutation testing of the tuning loop and its log reader.

- a signal that lands while the run is wound up (the ledger completed, the log closed) is
  noted, not raised, and the run still reports ``interrupted``;
- a measurer that returns fewer records than configurations is a ``MeasurerError`` naming
  it, not a stray ``KeyError``;
- a logged failure that carries a time is read as an ``invalid`` record (counted, never
  the best), not a crash;
- a local worker that dies before it is ready is a setup error, not an endless restart.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

from search.measure.base import MeasureRecord, Measurer, MeasurerError
from search.records import SCHEMA, SCHEMA_VERSION, read_log
from search.grid_space import GridSpace
from search.tune_ledger import Ledger
from search.tuner import tune

SPACE = GridSpace({"a": list(range(6))})


class Flat(Measurer):
    name = "flat"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=1.0 + c["a"]) for c in configs]


class Short(Measurer):
    """Drops the last record of every batch: a broken measurer."""

    name = "short"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=1.0) for c in configs][:-1]


def test_a_signal_while_the_run_is_wound_up_makes_it_interrupted(monkeypatch, tmp_path):
    real = Ledger.add_unreached

    def signalled(self, space):
        os.kill(os.getpid(), signal.SIGINT)  # noted by signals_deferred, not raised
        real(self, space)

    monkeypatch.setattr(Ledger, "add_unreached", signalled)
    log = tmp_path / "run.jsonl"
    res = tune(SPACE, Flat(), "grid", budget=4, seed=0, log=log)
    assert res.stop_reason == "interrupted" and res.evaluations == 4
    assert [e.index for e in read_log(log).entries] == [t.index for t in res.trials]


def test_a_measurer_returning_too_few_records_is_a_measurer_error():
    with pytest.raises(MeasurerError, match="short"):
        tune(SPACE, Short(), "grid", budget=4, seed=0)


def test_a_logged_failure_with_a_time_is_read_as_invalid(tmp_path):
    log = tmp_path / "run.jsonl"
    head = {"schema": SCHEMA, "version": SCHEMA_VERSION, "kind": "header"}
    bad = {"kind": "record", "index": 2, "record": {
        "config": {"a": 2}, "status": "compile_error", "time_ms": 0.5, "costs": []}}
    log.write_text(json.dumps(head) + "\n" + json.dumps(bad) + "\n")
    (entry,) = read_log(log).entries
    assert entry.index == 2 and entry.record.status.value == "invalid"
    assert entry.record.cost == float("inf") and entry.record.time_ms is None


from executor_faults import FaultStages  # noqa: E402  (tests/search is on the path)


class DyingStages(FaultStages):
    """Stages whose loading kills the worker process outright (before it says ready)."""

    def __setstate__(self, state):
        os._exit(3)


def test_a_worker_that_dies_before_it_is_ready_is_a_setup_error(tmp_path):
    """Not an endless restart: each new worker would die the same way."""
    import threading

    from iobound.errors import ToolchainError
    from search.executors import ExecutorOptions, make_executor

    out = {}

    def run():
        with make_executor(DyingStages(tmp_path), ExecutorOptions(executor="local"), workers=1) as ex:
            try:
                list(ex.submit([(0, {"n": 0, "fault": "ok"})]))
            except ToolchainError as exc:
                out["error"] = str(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    # the bound only catches an endless restart: starting the worker pool (a forkserver
    # importing search.executors.worker) took 26-30 s of a 30 s bound on a loaded machine
    t.join(timeout=180)
    assert not t.is_alive(), "the executor kept restarting a worker that cannot start"
    assert "failed to start" in out.get("error", "")
