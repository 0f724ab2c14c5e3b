"""SIGINT and SIGTERM stop ``iobound tune`` cleanly, whatever phase they land in.

Real processes: ``iobound tune`` runs in a subprocess with one phase slowed down
(a measurement, the cost-model fit, the CP-SAT enumeration of a layer's domain, the
final export) and a file touched when the phase starts; the test sends the signal
then and checks exit 130, the one line on stderr, a complete log with every record
once, the history and the export, and that ``--resume`` finishes the run without
measuring anything twice.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from search.records import read_log

REPO = Path(__file__).resolve().parents[2]

# Each phase: code run in the child before the CLI, slowing the phase down and
# touching $MARK when it starts.
SLOW = {
    "measure": """
from search.measure.replay import ReplayMeasurer
measured = []
def measure_iter(self, configs):
    for c in configs:
        time.sleep(0.15)
        yield from self.measure([c])
        measured.append(c)
        if len(measured) == 3:  # the next 0.15 s are "during a measurement"
            touch()
ReplayMeasurer.measure_iter = measure_iter
""",
    "fit": "from search.cost_model import XGBCostModel\nslow(XGBCostModel, 'fit', 30)",
    "solve": "from search import table1\nslow(table1._Collector, 'on_solution_callback', 0.01)",
    "export": "from search.session import storage\nslow(storage, 'export_cache', 1.0)",
}

CHILD = """
import os, sys, time
def touch():
    open(os.environ["MARK"], "a").close()
def slow(owner, name, seconds):
    real = getattr(owner, name)
    def wrapper(*args):
        touch(); time.sleep(seconds)
        return real(*args)
    setattr(owner, name, wrapper)
{slow}
from search.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def _start(phase: str, argv: list[str], mark: Path) -> subprocess.Popen:
    code = CHILD.format(slow=SLOW[phase])
    env = {**os.environ, "MARK": str(mark), "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", code, *argv], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _interrupt(proc: subprocess.Popen, mark: Path, sig: int,
               sent: list | None = None) -> tuple[int, str, str]:
    """Wait for the phase to start, send ``sig``, return (code, stdout, stderr); the
    time it was sent (time.monotonic) is appended to ``sent``. The wait bounds only a
    hang: on a loaded machine the child's imports alone take tens of seconds."""
    deadline = time.monotonic() + 240
    while not mark.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the phase never started"
        time.sleep(0.05)
    proc.send_signal(sig)
    if sent is not None:
        sent.append(time.monotonic())
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


def _indices(log: Path) -> list[int]:
    return [e.index for e in read_log(log).entries]


def _replay_args(cache, tmp_path, strategy="random", budget=12):
    return ["tune", "--measure", f"replay:{cache}", "--strategy", strategy, "--budget", str(budget),
            "--seed", "1", "--log", str(tmp_path / "run.jsonl"),
            "--history", str(tmp_path / "h.db"), "--export-cache", str(tmp_path / "out.json")]


def _check_interrupted(code: int, err: str, tmp_path: Path) -> list[int]:
    """Exit 130, one line naming the log, the log's records unique, export = log."""
    log = tmp_path / "run.jsonl"
    lines = err.strip().splitlines()
    assert code == 130, err
    assert len(lines) == 1 and "Traceback" not in err, err
    n = len(_indices(log))
    assert lines[0] == (f"iobound tune: interrupted: {n} measurement{'s' if n != 1 else ''} "
                        f"kept in {log}; resume with --resume {log}")
    idx = _indices(log)
    assert len(idx) == len(set(idx))
    export = json.loads((tmp_path / "out.json").read_text())
    assert len(export["cache"]) == len(idx)
    return idx


def _resume_finishes(cache, tmp_path: Path, first: list[int], strategy="random", budget=12) -> None:
    """--resume completes the budget; nothing in the log is measured twice."""
    args = _replay_args(cache, tmp_path, strategy, budget)
    args[args.index("--log"):args.index("--log") + 2] = ["--resume", str(tmp_path / "run.jsonl")]
    args[args.index("--export-cache") + 1] = str(tmp_path / "again.json")
    done = subprocess.run([sys.executable, "-m", "search.cli.main", *args, "--json"], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    idx = _indices(tmp_path / "run.jsonl")
    assert len(idx) == len(set(idx)) == budget and idx[:len(first)] == first
    assert out["resumed"] == len(first) and out["evaluations"] == budget


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_a_measurement(tmp_path, synth_cache_path, sig):
    """Mid-round: every measured record is logged once, exported and stored; resume ends it."""
    proc = _start("measure", _replay_args(synth_cache_path, tmp_path), tmp_path / "mark")
    code, _, err = _interrupt(proc, tmp_path / "mark", sig)
    idx = _check_interrupted(code, err, tmp_path)
    assert 3 <= len(idx) < 12
    from search.history import History
    with History(str(tmp_path / "h.db")) as h:
        assert sum(len(h.records(k)) for k in h.keys()) == len(idx)
    _resume_finishes(synth_cache_path, tmp_path, idx)


def test_sigterm_during_the_model_fit(tmp_path, synth_cache_path):
    """In the explorer's xgboost fit (between rounds): the first round is kept."""
    args = _replay_args(synth_cache_path, tmp_path, "explorer", 16)
    proc = _start("fit", args, tmp_path / "mark")
    code, _, err = _interrupt(proc, tmp_path / "mark", signal.SIGTERM)
    idx = _check_interrupted(code, err, tmp_path)
    assert len(idx) >= 1
    _resume_finishes(synth_cache_path, tmp_path, idx, "explorer", 16)


def test_sigint_during_the_final_export_still_writes_it(tmp_path, synth_cache_path):
    """A signal while the export is written waits for it: the export is complete."""
    proc = _start("export", _replay_args(synth_cache_path, tmp_path), tmp_path / "mark")
    code, _, err = _interrupt(proc, tmp_path / "mark", signal.SIGINT)
    assert _check_interrupted(code, err, tmp_path) and len(_indices(tmp_path / "run.jsonl")) == 12


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_the_cp_sat_domain_build(tmp_path, sig):
    """During CP-SAT's enumeration: the search stops at once, exit 130, nothing logged.

    (OR-Tools' own SIGINT handler used to stop the enumeration silently and leave
    SIG_DFL behind, so a later Ctrl-C killed the run without writing anything.)
    """
    log = tmp_path / "run.jsonl"
    args = ["tune", "--layer", "cin=64,hin=28,cout=128,kh=3,pad=1", "--measure", "model",
            "--budget", "4", "--log", str(log), "--out-dir", str(tmp_path)]
    proc = _start("solve", args, tmp_path / "mark")
    sent = []  # "at once": timed from the signal, not from the child's start-up
    code, _, err = _interrupt(proc, tmp_path / "mark", sig, sent)
    assert code == 130 and err.strip() == "iobound tune: interrupted", err
    assert time.monotonic() - sent[0] < 20
    assert not log.exists() or not _indices(log)


def test_tune_keeps_what_was_measured_when_interrupted(tmp_path, synth_space, synth_measurer):
    """In process: a KeyboardInterrupt mid-batch ends tune() with stop_reason interrupted,
    every record measured before it a trial and in the log, once."""
    from search.tuner import StopReason, tune
    real = synth_measurer.measure
    calls = []

    def measure(configs):
        calls.extend(configs)
        if len(calls) > 5:
            raise KeyboardInterrupt
        return real(configs)

    synth_measurer.measure = measure
    synth_measurer.measure_iter = lambda configs: (r for c in configs for r in measure([c]))
    res = tune(synth_space, synth_measurer, "random", budget=12, seed=0, log=tmp_path / "l.jsonl",
               options={"batch_size": 4})
    assert res.stop_reason is StopReason.INTERRUPTED and res.evaluations == 5
    assert [t.index for t in res.trials] == _indices(tmp_path / "l.jsonl")
    assert res.best is not None and res.best.record.cost == min(t.record.cost for t in res.trials)


def test_an_error_caused_by_the_interrupt_is_the_interrupt(capsys, monkeypatch):
    """Ctrl-C while a C extension initialises surfaces as ImportError("initialization
    failed") caused by the KeyboardInterrupt (seen importing OR-Tools): exit 130 and the
    one line, not a traceback."""
    from search.cli import tune_cmd
    from search.cli.main import main

    def run(args):
        try:
            raise KeyboardInterrupt("SIGINT")
        except KeyboardInterrupt as exc:
            raise ImportError("initialization failed") from exc

    monkeypatch.setattr(tune_cmd, "run", run)
    assert main(["tune", "--measure", "model"]) == 130
    assert capsys.readouterr().err == "iobound tune: interrupted\n"
