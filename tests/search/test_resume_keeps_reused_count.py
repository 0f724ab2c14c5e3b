"""A resumed run reports the configurations the database answered before the interruption.

``--reuse`` answers a configuration from the tuning database instead of measuring it; the
run logs it with ``"reused": true`` ("so a resume needs no database") and reports how many
(``TuneResult.reused``; ``--json`` ``reused``; the CLI's "N reused from the history
database"). Interrupted and resumed, the run has the same trials as the uninterrupted run,
so it must report the same number reused: the log says which they are.
"""

import numpy as np

from search.measure.base import MeasureRecord, Measurer
from search.records import read_log
from search.grid_space import GridSpace
from search.tuner import tune

SPACE = GridSpace({"a": list(range(12)), "b": list(range(4))})


def _rec(c):
    return MeasureRecord.ok(dict(c), time_ms=1.0 + (c["a"] - 7) ** 2 + c["b"])


class Bowl(Measurer):
    name = "bowl"

    def __init__(self, stop_after=None):
        self.stop_after, self.n = stop_after, 0

    def measure(self, configs):
        out = []
        for c in configs:
            if self.stop_after is not None and self.n >= self.stop_after:
                raise KeyboardInterrupt
            self.n += 1
            out.append(_rec(c))
        return out


# an earlier run's measurements of half the space: what --reuse answers from
REUSABLE = {i: _rec(SPACE.get(i)) for i in range(0, len(SPACE), 2)}


def test_resumed_run_counts_what_the_database_answered_before_the_interruption(tmp_path):
    full = tune(SPACE, Bowl(), "random", budget=16, seed=2, reusable=REUSABLE)
    assert full.reused > 0
    log = tmp_path / "run.jsonl"
    cut = tune(SPACE, Bowl(stop_after=3), "random", budget=16, seed=2, log=log, reusable=REUSABLE)
    assert cut.stop_reason.value == "interrupted"
    logged_reused = sum(e.reused for e in read_log(log).entries)
    assert logged_reused > 0  # the log says which records the database answered
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(log.read_bytes())
    again = tune(SPACE, Bowl(), "random", budget=16, seed=2, resume=log, reusable=REUSABLE)
    assert [t.index for t in again.trials] == [t.index for t in full.trials]
    assert again.reused == full.reused
    assert {t.index for t in again.trials if t.reused} == {t.index for t in full.trials if t.reused}
    # and without the database (a resume needs none), the logged ones still count
    bare = tune(SPACE, Bowl(), "random", budget=16, seed=2, resume=copy)
    assert bare.reused == logged_reused
    assert np.isclose(bare.best.record.time_ms, full.best.record.time_ms)


def test_resumed_into_a_new_log_the_reused_marks_are_copied(tmp_path):
    """``--resume old --log new`` copies the old log into the new one; the copy must keep
    each record's ``reused`` mark, or a later resume from the new log alone reports fewer
    reused and stores the database's own records back as this run's."""
    full = tune(SPACE, Bowl(), "random", budget=16, seed=2, reusable=REUSABLE)
    log, new = tmp_path / "run.jsonl", tmp_path / "new.jsonl"
    tune(SPACE, Bowl(stop_after=3), "random", budget=16, seed=2, log=log, reusable=REUSABLE)
    assert any(e.reused for e in read_log(log).entries)
    tune(SPACE, Bowl(), "random", budget=16, seed=2, resume=log, log=new, reusable=REUSABLE)
    assert [e.reused for e in read_log(new).entries][:len(read_log(log).entries)] == \
        [e.reused for e in read_log(log).entries]
    bare = tune(SPACE, Bowl(), "random", budget=16, seed=2, resume=new)
    assert bare.reused == full.reused
