"""The batch ledger and the executor options: exactly one record per index, bounded retries."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iobound.errors import InvalidInputError
from search.cli.executor_args import add_executor_arguments, resolve_executor_options
from search.executors import Artifact, ExecutorOptions, make_executor
from search.executors.ledger import BUILD, RUN, Ledger
from search.executors.local import LocalExecutor
from search.measure.base import MeasureRecord, Measurer

OUTCOMES = ("ok", "final", "died", "timeout")


@given(n=st.integers(1, 6), retries=st.integers(0, 3),
       outcomes=st.lists(st.sampled_from(OUTCOMES), min_size=1, max_size=60))
def test_every_index_gets_one_record_whatever_fails(n, retries, outcomes):
    """Any sequence of successes, failures and early final records: each index exactly once,
    a failure status only after retries + 1 failures, and the status of the last failure."""
    book = Ledger([(i, {"i": i}) for i in range(n)], retries)
    failures: dict[int, list[str]] = {i: [] for i in range(n)}
    records = []
    step = 0
    while not book.done:
        job = book.next_job({BUILD, RUN})
        outcome = outcomes[step % len(outcomes)]
        step += 1
        if outcome == "ok":
            result = (Artifact(job.config) if job.stage == BUILD
                      else MeasureRecord.ok(job.config, time_ms=1.0))
            book.completed(job, result)
        elif outcome == "final":
            book.completed(job, MeasureRecord.failed(job.config, "invalid", "no"))
        else:
            status = "runtime_error" if outcome == "died" else "timeout"
            failures[job.index].append(status)
            book.failed(job, status, outcome)
        records += book.drain()
    assert sorted(i for i, _ in records) == list(range(n))
    for i, record in records:
        tried = failures[i]
        assert len(tried) <= retries + 1
        if len(tried) == retries + 1:
            assert record.status.value == tried[-1] and record.extra["attempts"] == retries + 1
        elif tried:
            assert record.extra["attempts"] == len(tried) + 1
        else:
            assert "attempts" not in record.extra


def test_a_second_record_for_an_index_is_a_bug():
    """Recording one index twice raises instead of duplicating a measurement."""
    book = Ledger([(0, {})], retries=0)
    job = book.next_job({BUILD})
    book.completed(job, MeasureRecord.failed({}, "invalid", "no"))
    with pytest.raises(RuntimeError, match="recorded twice"):
        book.completed(job, MeasureRecord.failed({}, "invalid", "no"))


def test_a_run_must_return_a_record():
    """A run stage that returns an artifact is a broken stage: its configuration's record
    is runtime_error naming what came back, not a crash of the whole batch."""
    book = Ledger([(0, {"a": 1})], retries=3)
    book.completed(book.next_job({BUILD}), Artifact({"a": 1}))
    book.completed(book.next_job({RUN}), Artifact({"a": 1}))
    ((index, record),) = book.drain()
    assert (index, record.status.value, record.extra["failed_stage"]) == (0, "runtime_error", "run")
    assert "the run returned Artifact, not a MeasureRecord" in record.error
    assert book.done and not book.waiting({BUILD, RUN})  # not retried: the same code, the same return


class Loose(Measurer):
    """measure() returns ``self.give`` for each configuration instead of records."""

    name = "loose"

    def __init__(self, give):
        self.give = give

    def measure(self, configs):
        return [self.give for _ in configs]


@pytest.mark.parametrize("give", [{"time_ms": 1.0}, None, 3.5])
def test_a_measurer_returning_no_record_is_recorded(give):
    """A user's measurer whose measure() returns dicts (or anything else) gets each
    configuration a runtime_error record through the executor, not a TypeError."""
    with LocalExecutor(Loose(give), ExecutorOptions(workers=1)) as ex:
        got = dict(ex.submit([(0, {"a": 1}), (1, {"a": 2})]))
    assert sorted(got) == [0, 1]
    for record in got.values():
        assert record.status.value == "runtime_error"
        assert f"the run returned {type(give).__name__}, not a MeasureRecord" in record.error


def test_an_unpicklable_measurer_is_named():
    """A measurer pickle cannot carry to the workers is a clear InvalidInputError at the
    executor's construction, not a PicklingError."""
    import threading

    with pytest.raises(InvalidInputError, match="the measurer 'loose' cannot be sent to the "
                                                "local executor's worker processes"):
        LocalExecutor(Loose(threading.Lock()), ExecutorOptions(workers=1))


@pytest.mark.parametrize("changes, message", [
    ({"executor": "dask"}, "executor must be one of local, ray"),
    ({"workers": 0}, "workers must be an integer >= 1"),
    ({"workers": 1.5}, "workers must be an integer >= 1"),
    ({"ray_address": "h:1"}, "ray_address needs executor 'ray'"),
    ({"executor": "ray", "ray_address": "a b"}, "ray_address must be HOST:PORT"),
    ({"timeout_s": 0}, "timeout must be a finite number of seconds > 0"),
    ({"timeout_s": float("inf")}, "timeout must be a finite number"),
    ({"retries": 11}, "retries must be an integer from 0 to 10"),
    ({"retries": True}, "retries must be an integer"),
])
def test_bad_options_name_the_field(changes, message):
    """Each bad option is an InvalidInputError naming it and its value."""
    with pytest.raises(InvalidInputError, match=message):
        ExecutorOptions(**changes)


def test_make_executor_validates_its_overrides():
    """Overrides given to make_executor are checked like the options."""
    with pytest.raises(InvalidInputError, match="retries"):
        make_executor(None, retries=-1)


@pytest.mark.parametrize("argv, message", [
    (["--executor", "dask"], "--executor must be one of local, ray; got 'dask'"),
    (["--workers", "-2"], "--workers must be an integer >= 1, got -2"),
    (["--timeout", "-1"], "--timeout must be a finite number of seconds > 0 (at most 1e+06), got -1.0"),
    (["--retries", "99"], "--retries must be an integer from 0 to 10, got 99"),
    (["--ray-address", "h:1"], "--ray-address needs executor 'ray'"),
])
def test_cli_errors_name_the_option(argv, message):
    """The CLI's errors name the option the user typed."""
    parser = argparse.ArgumentParser()
    add_executor_arguments(parser)
    with pytest.raises(InvalidInputError) as err:
        resolve_executor_options(parser.parse_args(argv))
    assert str(err.value).startswith(message)


@pytest.mark.parametrize("argv, message", [
    (["--workers", "-5"], "--workers must be an integer >= 1, got -5"),
    (["--timeout", "-1"], "--timeout must be a finite number of seconds > 0"),
    (["--retries", "99"], "--retries must be an integer from 0 to 10, got 99"),
    (["--ray-address", "h:1"], "--ray-address needs --executor ray"),
])
def test_in_process_measurers_still_refuse_bad_executor_options(capsys, argv, message):
    """tune --measure model (in process, no executor) with a bad --workers, --timeout or
    --retries, or a --ray-address nothing would use: one line, exit 2 (they were ignored)."""
    from search.cli.main import main
    code = main(["tune", "--layer", "cin=2,hin=6,cout=2,kh=3", "--measure", "model",
                 "--budget", "2", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and message in err


@pytest.mark.parametrize("executor", [["--executor", "local"], []])
def test_more_local_workers_than_the_machine_can_hold_are_refused_before_anything_prints(
        capsys, executor):
    """--workers past WORKERS_PER_CORE per core started that many processes; now one line,
    exit 2, before the run prints its header. The cap itself is what was asked, not less."""
    import os

    from search.cli.main import main
    from search.executors.local import WORKERS_PER_CORE, check_local_workers
    cap = WORKERS_PER_CORE * (os.cpu_count() or 1)
    check_local_workers(cap)
    code = main(["tune", "--layer", "cin=2,hin=6,cout=2,kh=3", "--measure", "model",
                 "--budget", "2", "--workers", str(cap + 1), *executor])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert f"--workers {cap + 1}: this machine has" in err
