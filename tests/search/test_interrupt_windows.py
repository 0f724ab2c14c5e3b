"""A signal at any instant of a run keeps the README's promise: exit 130, the log complete,
``--history`` and ``--export-cache`` written for every logged measurement, and one line
``interrupted: N measurements kept in LOG; resume with --resume LOG`` whose N is what the
logs hold (summed over a network's per-layer logs).

The signal is sent from a wrapped function at a chosen call (the technique of
test_interrupt_between_log_and_count.py); the invariants are checked against the files.
"""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path

import pytest

from search.cli.main import main
from search.records import read_log
from search.log_writer import LogWriter
from tests.search.stored_rows import stored_measurements

LAYER = ["tune", "--layer", "cin=8,hin=8,cout=16,kh=3,pad=1", "--measure", "model",
         "--strategy", "random", "--budget", "8", "--no-verify"]


def _signal_at(monkeypatch, owner, name, at=1, after=False):
    """``owner.name`` sends SIGINT to this process at its ``at``-th call: before the call
    runs, or (``after``) once it has returned its value. Wrapped wherever the session's
    modules imported it by name."""
    import sys
    real = getattr(owner, name)
    calls = []

    def wrapped(*args, **kwargs):
        calls.append(1)
        hit = len(calls) == at
        if hit and not after:
            os.kill(os.getpid(), signal.SIGINT)
        out = real(*args, **kwargs)
        if hit and after:
            os.kill(os.getpid(), signal.SIGINT)
        return out

    monkeypatch.setattr(owner, name, wrapped)
    for mod in [m for n, m in sys.modules.items() if n.startswith("search.")]:
        for attr, value in list(vars(mod).items()):
            if value is real:
                monkeypatch.setattr(mod, attr, wrapped)
    return calls


def _kept(err: str) -> int | None:
    m = re.search(r"interrupted: (\d+) measurements? kept in ", err)
    return int(m.group(1)) if m else None


def _logged(tmp_path: Path, pattern: str) -> int:
    return sum(len(read_log(p).entries) for p in sorted(tmp_path.glob(pattern)))


def _where(name):
    import search.session.loop as loop
    import search.tuner as tuner
    return {"tune() builds its result": (tuner, "TuneResult", True),
            "the tuning loop's wind-down starts": (loop, "_wind_down", False),
            "the layer's outcomes start to be stored": (loop, "store_outcomes", False)}[name]


@pytest.mark.usefixtures("python_sigint")
@pytest.mark.parametrize("when", ["tune() builds its result", "the tuning loop's wind-down starts",
                                  "the layer's outcomes start to be stored"])
@pytest.mark.parametrize("first", [None, 3])
def test_a_signal_after_the_loop_still_writes_history_and_export(tmp_path, capsys, monkeypatch,
                                                                when, first):
    """After the last measurement (``first=None``), or as a second Ctrl-C after a first one
    stopped the loop at the 3rd record (``first=3``), the signal lands between the loop and
    the final writes: every logged record must still be stored, exported and counted."""
    if first is not None:
        _signal_at(monkeypatch, LogWriter, "append", at=first, after=True)
    owner, name, after = _where(when)
    calls = _signal_at(monkeypatch, owner, name, after=after)
    log, db, export = tmp_path / "run.jsonl", tmp_path / "h.db", tmp_path / "e.json"
    code = main([*LAYER, "--out-dir", str(tmp_path / "k"), "--log", str(log), "--history", str(db),
                 "--export-cache", str(export)])
    err = capsys.readouterr().err
    assert calls, "the signal was never sent"
    logged = len(read_log(log).entries)
    assert code == 130 and logged == (first or 8)
    assert _kept(err) == logged, err
    assert stored_measurements(db) == logged
    assert export.exists() and len(json.loads(export.read_text())["cache"]) == logged


NET = ["tune", "--network", "alexnet", "--measure", "model", "--strategy", "random",
       "--budget", "4", "--no-verify"]


@pytest.mark.usefixtures("python_sigint")
@pytest.mark.parametrize("where", ["history", "winner"])
def test_a_resumed_network_interrupted_early_counts_every_layers_log(tmp_path, capsys,
                                                                    monkeypatch, where):
    """A network run stopped in its 2nd layer (conv1: 4 records, conv2: 2), resumed, and
    stopped again while the resume is still at conv1 (reading its history, or writing its
    winner kernel): the logs hold 6 measurements and the line must say so."""
    args = [*NET, "--out-dir", str(tmp_path / "k"), "--history", str(tmp_path / "h.db")]
    with monkeypatch.context() as m:
        _signal_at(m, LogWriter, "append", at=6, after=True)
        assert main([*args, "--log", str(tmp_path / "run.jsonl")]) == 130
    capsys.readouterr()
    assert _logged(tmp_path, "run.*.jsonl") == 6
    import search.session.history_use as history_use
    import search.winner as winner
    owner, name = ((history_use, "history_options") if where == "history"
                   else (winner, "report_winner"))
    calls = _signal_at(monkeypatch, owner, name)
    code = main([*args, "--resume", str(tmp_path / "run.jsonl")])
    err = capsys.readouterr().err
    assert calls and code == 130
    assert _logged(tmp_path, "run.*.jsonl") == 6
    assert _kept(err) == 6, err
    assert f"resume with --resume {tmp_path / 'run.jsonl'}" in err


@pytest.mark.usefixtures("python_sigint")
def test_a_replayed_run_signalled_as_tune_returns_still_writes_history_and_export(
        tmp_path, capsys, monkeypatch, synth_cache_path):
    """The recorded-space session (``--measure replay:FILE``) has the same window."""
    import search.tuner as tuner
    calls = _signal_at(monkeypatch, tuner, "TuneResult", after=True)
    log, db, export = tmp_path / "run.jsonl", tmp_path / "h.db", tmp_path / "e.json"
    code = main(["tune", "--measure", f"replay:{synth_cache_path}", "--strategy", "random",
                 "--budget", "8", "--log", str(log), "--history", str(db),
                 "--export-cache", str(export)])
    err = capsys.readouterr().err
    assert calls and code == 130 and len(read_log(log).entries) == 8
    assert _kept(err) == 8, err
    assert stored_measurements(db) == 8
    assert export.exists() and len(json.loads(export.read_text())["cache"]) == 8
