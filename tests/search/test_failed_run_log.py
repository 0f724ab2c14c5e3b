"""A run that fails before it measured anything removes the new log it began (the same
``--log`` works again); a log holding records, or one the run resumed, is kept."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from search import GridSpace, Measurer, MeasureRecord
from search.records import read_log
from search.tuner import tune

SPACE = GridSpace({"x": list(range(12))})


class Failing(Measurer):
    """Times ``x`` as its cost, and raises at its ``fail_at``-th configuration."""

    name = "failing"

    def __init__(self, fail_at: int):
        self.fail_at, self.seen = fail_at, 0

    def measure(self, configs):
        out = []
        for c in configs:
            if self.seen == self.fail_at:
                raise RuntimeError("the cluster went away")
            self.seen += 1
            out.append(MeasureRecord.ok(c, time_ms=1.0 + c["x"]))
        return out


def test_a_run_failing_at_once_leaves_no_log_and_can_be_run_again(tmp_path):
    log = tmp_path / "run.jsonl"
    with pytest.raises(RuntimeError, match="went away"):
        tune(SPACE, Failing(0), "random", budget=4, seed=0, log=log)
    assert not log.exists()
    r = tune(SPACE, Failing(99), "random", budget=4, seed=0, log=log)
    assert r.evaluations == 4 and len(read_log(log).entries) == 4


@settings(max_examples=10, deadline=None)
@given(fail_at=st.integers(1, 7), batch=st.sampled_from([1, 2, 4, 8]))
def test_a_run_failing_later_keeps_every_record_it_logged_or_no_log(tmp_path_factory, fail_at,
                                                                    batch):
    log = tmp_path_factory.mktemp("run") / "run.jsonl"
    with pytest.raises(RuntimeError):
        tune(SPACE, Failing(fail_at), "random", budget=10, seed=0, log=log,
             options={"batch_size": batch})
    finished = fail_at // batch * batch  # the batches measured whole before the failure
    if not finished:  # nothing measured: the log is gone, and the run starts again
        assert not log.exists()
        r = tune(SPACE, Failing(99), "random", budget=10, seed=0, log=log)
    else:
        assert len(read_log(log).entries) == finished
        r = tune(SPACE, Failing(99), "random", budget=10, seed=0, resume=log)
    assert r.evaluations == 10 and len(read_log(log).entries) == 10


class Interrupted(Measurer):
    """Stopped by Ctrl-C at its first configuration."""

    name = "failing"

    def measure(self, configs):
        raise KeyboardInterrupt


def test_an_interrupted_runs_log_with_no_record_is_kept_and_so_when_its_resume_fails(tmp_path):
    """An interrupt keeps the header-only log (the run's settings, to resume); a resume
    that fails keeps it too: this run did not begin it."""
    log = tmp_path / "run.jsonl"
    r = tune(SPACE, Interrupted(), "random", budget=4, seed=0, log=log)
    assert r.stop_reason.value == "interrupted" and read_log(log).entries == ()
    with pytest.raises(RuntimeError):
        tune(SPACE, Failing(0), "random", budget=4, seed=0, resume=log)
    assert log.exists() and read_log(log).entries == ()
    r = tune(SPACE, Failing(99), "random", budget=4, seed=0, resume=log)
    assert r.evaluations == 4 and len(read_log(log).entries) == 4
