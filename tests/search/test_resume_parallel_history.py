"""A network run with history resumes on the history its layers read
(search/session/history_use.py: the log's ``history_up_to`` mark).

Reference: the tuner's promise (search/tuner.py: a resumed run follows the interrupted
run's path exactly). Layers tuned at once (``--parallel-layers 2``) both start on the
history as it was; interrupted, both store their partial records; resumed, each read the
other's as history and took another path. The log now records the database's mark its
layer read up to, and a resume reads the history up to it."""
from __future__ import annotations

import _thread
import threading
import time

import pytest

from iobound.networks import network_layers
from search.executors import ExecutorOptions
from search.interrupts import Interrupted
from search.records import read_log
from search.session import Observer, TuneSettings, tune_layers

LAYERS = network_layers("alexnet")[3:5]


class CtrlCWhenBothRan(Observer):
    """Ctrl-C (in the main thread) once two threads have each logged >= n measurements.
    After it, every measurement waits a little: the main thread, which polls for the
    signal, must stop the layers before one of them finishes (under CI's load one did)."""

    def __init__(self, n):
        self.n, self.done, self.fired = n, {}, False

    def progress(self, done, budget, best):
        self.done[threading.get_ident()] = done
        if self.fired:
            time.sleep(0.2)
        elif len(self.done) == 2 and min(self.done.values()) >= self.n:
            self.fired = True
            _thread.interrupt_main()


def _run(tmp_path, settings, observer=None):
    return tune_layers(LAYERS, "v100", settings, out_dir=str(tmp_path / "k"), verify=False,
                       observer=observer)


def test_parallel_resume_with_history_follows_the_uninterrupted_path(tmp_path, python_sigint):
    ex = ExecutorOptions(workers=2, parallel_layers=2)
    kw = dict(strategy="explorer", budget=16, seed=2, options={"batch_size": 2}, executor=ex)
    ref = _run(tmp_path, TuneSettings(history=str(tmp_path / "ref.db"), **kw))
    assert all(r.history_use.records == 0 for r in ref)  # both started on an empty history

    db, log = str(tmp_path / "h.db"), str(tmp_path / "run.jsonl")
    ctrl_c = CtrlCWhenBothRan(3)
    try:
        _run(tmp_path, TuneSettings(history=db, log=log, **kw), ctrl_c)
    except Interrupted:
        pass
    else:  # say what the observer saw, for a run that ever gets here
        pytest.fail(f"not interrupted: fired {ctrl_c.fired}, measurements per thread "
                    f"{sorted(ctrl_c.done.values())}")
    logs = {l.name: read_log(tmp_path / f"run.{l.name}.jsonl") for l in LAYERS}
    assert all(0 < len(g.entries) < 16 for g in logs.values())
    assert all(g.header["history_up_to"] == 0 for g in logs.values())  # an empty database

    res = _run(tmp_path, TuneSettings(history=db, resume=log, **kw))
    for a, b in zip(ref, res):
        assert [t.index for t in b.result.trials] == [t.index for t in a.result.trials], a.layer.name
        assert b.history_use.records == a.history_use.records, a.layer.name
