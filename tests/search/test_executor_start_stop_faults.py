"""Faults while an executor starts or stops its workers (README "Measuring on many workers":
a run stopped by a signal keeps what it measured and says how to resume; a worker killed
from outside is replaced). Found by a review of the executors:

- SIGTERM while ``ray.init`` ran exited 15 with no word (Ray's own handler, in force for
  the call), and after ``ray.shutdown`` (the end of every ``--executor ray`` run, before a
  network's table) SIGTERM killed the process outright: Ray resets it to the default
  action in the kernel while Python still names its handler;
- a Ray run actor killed while it started stopped the run ("a Ray worker failed to
  start", exit 2), where the local executor replaces a worker killed while starting;
- with ``--json``, Ray printed a dead worker's message on stdout (from a thread of its
  own), so stdout was no JSON document;
- a worker start that found the forkserver (every local worker is forked from it) gone
  was a traceback;
- a retry's warning named the configuration by its place in the batch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from iobound.layer import ConvLayer
from search.cli.main import main
from search.executors import ExecutorOptions, make_executor
from search.measure.model import ModelMeasurer

ROOT = Path(__file__).resolve().parents[2]
LAYER = ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=32, k_h=3, k_w=3, padding=1)
CFG = dict(x=8, y=8, z=8, alpha=4, tx=8, ty=8, tz=2)
SPEC = "cin=4,hin=8,cout=8,kh=3,pad=1"


INIT_DRIVER = """
import signal, sys
import ray._private.utils as ray_utils
real = ray_utils.set_sigterm_handler
def set_and_signal(handler):  # SIGTERM as soon as ray.init put its own handler in
    real(handler)
    signal.raise_signal(signal.SIGTERM)
ray_utils.set_sigterm_handler = set_and_signal
from search.cli.main import main
sys.exit(main(sys.argv[1:]))
"""

AFTER_SHUTDOWN = """
import os, signal, sys, time
from iobound.layer import ConvLayer
from search.executors import ExecutorOptions, make_executor
from search.interrupts import signals_interrupt
from search.measure.model import ModelMeasurer
layer = ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=32, k_h=3, k_w=3, padding=1)
with signals_interrupt():
    options = ExecutorOptions(executor="ray", workers=1, timeout_s=300.0)
    with make_executor(ModelMeasurer(layer, "v100"), options) as ex:  # starts and stops Ray
        list(ex.submit([(0, dict(x=8, y=8, z=8, alpha=4, tx=8, ty=8, tz=2))]))
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(2.0)
        print("not stopped")
    except KeyboardInterrupt:
        print("stopped cleanly")
"""


def _python(tmp_path, script, *args):
    (tmp_path / "driver.py").write_text(script)
    return subprocess.run([sys.executable, "driver.py", *args], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=300)


def test_sigterm_while_ray_starts_is_a_clean_interrupt(tmp_path):
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'iobound[distributed]')")
    log = tmp_path / "run.jsonl"
    proc = _python(tmp_path, INIT_DRIVER, "tune", "--layer", SPEC, "--measure", "model",
                   "--budget", "4", "--strategy", "random", "--executor", "ray", "--workers",
                   "2", "--no-verify", "--out-dir", str(tmp_path), "--log", str(log))
    assert proc.returncode == 130, (proc.returncode, proc.stderr[-800:])
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("iobound tune: interrupted: ") and f"--resume {log}" in last
    assert len(log.read_text().splitlines()) == 1  # the header: stopped before any batch


def test_sigterm_after_ray_stopped_is_a_clean_interrupt(tmp_path):
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'iobound[distributed]')")
    proc = _python(tmp_path, AFTER_SHUTDOWN)
    assert proc.returncode == 0 and proc.stdout.strip() == "stopped cleanly", (
        proc.returncode, proc.stdout, proc.stderr[-800:])


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


def test_a_restart_that_cannot_start_a_worker_is_one_error(forkserver_gone):
    """A worker's replacement that cannot start is a ToolchainError, and the executor still
    closes (it joined a process never started: an AssertionError traceback)."""
    from iobound.errors import ToolchainError
    from search.executors.local import START_TRIES

    options = ExecutorOptions(executor="local", workers=1, retries=0)
    with make_executor(ModelMeasurer(LAYER, "v100"), options) as ex:
        assert dict(ex.submit([(0, CFG)]))[0].status.value == "ok"
        forkserver_gone[:] = [True] * START_TRIES
        (slot,) = ex._slots
        with pytest.raises(ToolchainError, match="could not start a worker process"):
            slot.kill()
