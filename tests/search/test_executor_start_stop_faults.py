"""Faults while an executor starts or stops its workers (README "Measuring on many workers":
a run stopped by a signal keeps what it measured and says how to resume; a worker killed
from outside is replaced). Found by a review of the executors:

- SIGTERM while ``ray.init`` ran exited 15 with no word (Ray's own handler), a Ctrl-C there
  could crash Ray's core worker at exit (a segfault), and after ``ray.shutdown`` (the end
  of every ``--executor ray`` run) SIGTERM killed the process outright: Ray resets it to the
  default action in the kernel while Python still names its handler
  (search.interrupts.signals_held);
- a Ray run actor killed while it started stopped the run ("a Ray worker failed to
  start", exit 2), where the local executor replaces a worker killed while starting;
- with ``--json``, Ray printed a dead worker's message on stdout (from a thread of its
  own), so stdout was no JSON document;
- a killed forkserver (every local worker is forked from it) was a traceback at the next
  worker's start;
- a retry's warning named the configuration by its place in the batch.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from iobound.layer import ConvLayer
from search.cli.main import main
from search.executors import ExecutorOptions, make_executor
from search.interrupts import signals_held
from search.measure.model import ModelMeasurer

ROOT = Path(__file__).resolve().parents[2]
LAYER = ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=32, k_h=3, k_w=3, padding=1)
CFG = dict(x=8, y=8, z=8, alpha=4, tx=8, ty=8, tz=2)
SPEC = "cin=4,hin=8,cout=8,kh=3,pad=1"


def _caught_by_the_kernel(signum: int) -> bool:
    """Whether the kernel runs a handler for ``signum`` here (``SigCgt`` of /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    raise AssertionError("no SigCgt line")


@pytest.fixture
def sigterm_noted():
    """SIGTERM appends to the yielded list for the test; the handler of before after it."""
    caught: list[int] = []
    old = signal.signal(signal.SIGTERM, lambda signum, frame: caught.append(signum))
    try:
        yield caught
    finally:
        signal.signal(signal.SIGTERM, old)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads Linux's /proc")
def test_a_handler_a_library_reset_in_the_kernel_is_put_back(sigterm_noted):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.signal.restype = ctypes.c_void_p
    with signals_held():
        libc.signal(signal.SIGTERM, ctypes.c_void_p(0))  # SIG_DFL behind Python's back
        assert not _caught_by_the_kernel(signal.SIGTERM)
    assert _caught_by_the_kernel(signal.SIGTERM)
    signal.raise_signal(signal.SIGTERM)  # handled, not the default action (death)
    assert sigterm_noted == [signal.SIGTERM]


def test_a_signal_another_thread_takes_waits_for_the_blocks_end(sigterm_noted):
    """A thread started before the block does not block the signals: one it takes is
    noted and raised again at the end, not handled within the block."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with signals_held():
            signal.pthread_kill(other.ident, signal.SIGTERM)
            time.sleep(0.05)
            during = list(sigterm_noted)
    finally:
        stop.set()
        other.join()
    assert during == [] and sigterm_noted == [signal.SIGTERM]


DRIVER = """
import os, subprocess, sys
import ray
when, delay = sys.argv[1], float(sys.argv[2])
real = getattr(ray, when)
def wrapped(*args, **kwargs):  # SIGTERM from another process, `delay` s into the call
    subprocess.Popen(["sh", "-c", f"sleep {delay}; kill -TERM {os.getpid()}"])
    return real(*args, **kwargs)
setattr(ray, when, wrapped)
from search.cli.main import main
sys.exit(main(sys.argv[3:]))
"""


@pytest.mark.parametrize("when, delay", [("init", 1.0), ("shutdown", 0.5)])
def test_sigterm_while_ray_starts_or_stops_is_a_clean_interrupt(tmp_path, when, delay):
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'iobound[distributed]')")
    (tmp_path / "driver.py").write_text(DRIVER)
    log = tmp_path / "run.jsonl"
    proc = subprocess.run(
        [sys.executable, "driver.py", when, str(delay), "tune", "--layer", SPEC, "--measure",
         "model", "--budget", "4", "--strategy", "random", "--executor", "ray", "--workers",
         "2", "--no-verify", "--out-dir", str(tmp_path), "--log", str(log)],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
        text=True, timeout=300)
    assert proc.returncode == 130, (proc.returncode, proc.stderr[-800:])
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("iobound tune: interrupted: ") and f"--resume {log}" in last
    kept = 0 if when == "init" else 4  # stopped before the first batch, or after the last
    assert len(log.read_text().splitlines()) == 1 + kept  # the header and each measurement


def test_a_ray_actor_killed_while_starting_is_replaced(ray_session):
    options = ExecutorOptions(executor="ray", workers=1, timeout_s=300.0, retries=0)
    with make_executor(ModelMeasurer(LAYER, "v100"), options) as ex:
        (slot,) = ex._start()  # its actor is starting: its ready call is pending
        ray_session.kill(slot.actor, no_restart=True)
        record = dict(ex.submit([(0, CFG)]))[0]
    assert record.status.value == "ok", record.error


def test_json_stdout_is_the_document_only(tmp_path, capsys, monkeypatch):
    """What prints on stdout while tuning (as Ray's thread does when a worker dies) goes to
    stderr under --json."""
    import search.session

    real = search.session.run_layers

    def noisy(*args, **kwargs):
        print("(raylet) A worker died or was killed while executing a task")
        return real(*args, **kwargs)

    monkeypatch.setattr(search.session, "run_layers", noisy)
    assert main(["tune", "--layer", SPEC, "--measure", "model", "--budget", "4", "--no-verify",
                 "--json", "--out-dir", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["evaluations"] == 4
    assert "(raylet) A worker died" in err


@pytest.fixture
def forkserver_gone(monkeypatch):
    """The first ``failures`` worker starts find the forkserver dead, as a start does that
    comes before multiprocessing saw the forkserver die (EOFError on its socket)."""
    from multiprocessing.context import ForkServerProcess

    real, left = ForkServerProcess._Popen, []

    def popen(process):
        if left and left.pop():
            raise EOFError("unexpected EOF")
        return real(process)

    monkeypatch.setattr(ForkServerProcess, "_Popen", staticmethod(popen))
    return left


def test_a_worker_start_that_finds_the_forkserver_gone_is_tried_again(forkserver_gone):
    options = ExecutorOptions(executor="local", workers=1, retries=0)
    forkserver_gone[:] = [True, True]  # two failed starts, then one that works
    with make_executor(ModelMeasurer(LAYER, "v100"), options) as ex:
        record = dict(ex.submit([(0, CFG)]))[0]
    assert record.status.value == "ok" and forkserver_gone == []


def test_a_forkserver_that_cannot_start_is_one_error_line(forkserver_gone, tmp_path, capsys):
    from search.executors.local import START_TRIES

    forkserver_gone[:] = [True] * START_TRIES
    assert main(["tune", "--layer", SPEC, "--measure", "model", "--budget", "4",
                 "--no-verify", "--executor", "local", "--workers", "1",
                 "--out-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == ("iobound tune: error: could not start a worker process: "
                       "EOFError: unexpected EOF") and "Traceback" not in "".join(err)


def test_a_retry_warning_names_the_configuration(caplog):
    """It named the configuration's place in its batch ("configuration 0"), which no log
    holds."""
    from search.executors.dispatch import _fail
    from search.executors.ledger import BUILD, Ledger
    from search.measure.base import Status

    ledger = Ledger([(0, CFG)], retries=1)
    _fail(ledger, ledger.next_job({BUILD}), Status.TIMEOUT, "the build exceeded the 1 s timeout")
    assert caplog.messages == ["configuration x=8,y=8,z=8,alpha=4,tx=8,ty=8,tz=2, attempt 1: "
                               "the build exceeded the 1 s timeout"]
