"""The ray executor keeps two promises of README "Measuring on many workers" and "Hostile
input" that the local executor keeps:

- SIGTERM stops a run as Ctrl-C does (exit 130, log complete, history and export
  written): ``ray.init`` replaced the SIGTERM handler the CLI installs
  (search.interrupts.signals_interrupt) with its own ``sys.exit``, and a run with
  ``--executor ray`` then died with SIGABRT (exit -6) on SIGTERM, no "interrupted" line;
- SIGTERM while Ray starts or shuts down is the run's like any other. Ray's C++ failure
  signal handlers took SIGTERM late in ``ray.init`` (they print a stack trace, then the
  process aborted: exit -6 in 4 of 30 runs interrupted in their first seconds), and
  removing them early in ``ray.shutdown`` left SIGTERM's action at the default while Ray's
  threads still ran (the process ended there, before the history and export were written);
- a worker killed while idle is replaced before it gets a job: a Ray run actor killed
  between batches (the out-of-memory killer, a user's kill) made the next configuration
  a ``runtime_error`` (with ``--retries 0``) although it never ran. So did one killed
  while its slot built the next configuration (a build is a Ray task; the actor waits).

One loopback Ray for the module (conftest ``ray_session``, 2 CPUs, 127.0.0.1 only),
started here under ``signals_interrupt`` as the CLI starts it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import executor_faults
from executor_faults import FaultStages
from iobound.layer import ConvLayer
from search.executors import ExecutorOptions, make_executor
from search.interrupts import signals_interrupt
from search.measure.model import ModelMeasurer

RAY_BY_VALUE = (executor_faults,)
REPO = Path(__file__).resolve().parents[2]

LAYER = ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=32, k_h=3, k_w=3, padding=1)
CFG = dict(x=8, y=8, z=8, alpha=4, tx=8, ty=8, tz=2)


@pytest.fixture(scope="module")
def handler_after_ray_start(request):
    """The SIGTERM handler right after Ray started inside ``signals_interrupt`` (the CLI's
    order: handlers first, then the executor connects), and the one installed."""
    with signals_interrupt():
        installed = signal.getsignal(signal.SIGTERM)
        request.getfixturevalue("ray_session")  # starts the module's Ray now
        return installed, signal.getsignal(signal.SIGTERM)


def test_starting_ray_keeps_the_runs_sigterm_handler(handler_after_ray_start):
    installed, after = handler_after_ray_start
    assert after is installed, (
        f"ray.init replaced the SIGTERM handler with {getattr(after, '__qualname__', after)}: "
        "SIGTERM no longer stops a --executor ray run cleanly")


def test_an_actor_killed_while_idle_does_not_fail_the_next_configuration(ray_session):
    # timeout_s only bounds a hang: a job's timeout counts from its submission, so it
    # covers starting the new actor (a configuration timed out at 60 s on a loaded machine)
    options = ExecutorOptions(executor="ray", workers=1, timeout_s=300.0, retries=0)
    with make_executor(ModelMeasurer(LAYER, "v100"), options) as ex:
        assert dict(ex.submit([(0, CFG)]))[0].status.value == "ok"
        (slot,) = ex._slots
        pid = ray_session.get(slot.actor.ready.remote())
        os.kill(pid, signal.SIGKILL)  # idle: it holds no job
        time.sleep(1.0)
        second = dict(ex.submit([(1, CFG)]))[1]
    assert second.status.value == "ok", second.error


def test_an_actor_killed_while_its_slot_builds_does_not_fail_that_configuration(ray_session, tmp_path):
    # the build of configuration 1 kills the slot's actor, then takes 1 s: the actor has
    # been idle since configuration 0 ran, so it is pinged (and replaced) before the run
    options = ExecutorOptions(executor="ray", workers=1, timeout_s=300.0, retries=0)
    with make_executor(FaultStages(tmp_path, delay=1.0), options) as ex:
        assert dict(ex.submit([(0, {"n": 1})]))[0].status.value == "ok"
        (slot,) = ex._slots
        (tmp_path / "runner-pid").write_text(str(ray_session.get(slot.actor.ready.remote())))
        second = dict(ex.submit([(1, {"n": 2, "fault": "kill_runner"})]))[1]
    assert not (tmp_path / "runner-pid").exists(), "the build did not kill the actor"
    assert second.status.value == "ok", second.error


# A private Ray started as the CLI starts it, then shut down under a deferred block (as a
# run's executor is closed) while SIGTERM comes every 20 ms until the shutdown returns.
SHUTDOWN_UNDER_SIGTERM = r"""
import os, signal, threading
from search.executors.ray_cluster import shutdown, start_local_ray
from search.interrupts import signals_deferred, signals_interrupt

def keep_sending(done):
    while not done.wait(0.02):
        os.kill(os.getpid(), signal.SIGTERM)

with signals_interrupt():
    start_local_ray(1)
    print("ENV", os.environ.get("RAY_DISABLE_FAILURE_SIGNAL_HANDLER"), flush=True)
    done = threading.Event()
    with signals_deferred() as deferred:
        sender = threading.Thread(target=keep_sending, args=(done,))
        sender.start()
        try:
            shutdown()
        finally:
            done.set()
            sender.join()
    print("NOTED", deferred.signal, flush=True)
"""


def _run_with_private_ray(script: str) -> subprocess.CompletedProcess:
    """``script`` in a Python process of its own (its own private Ray), in an environment
    that names no cluster and leaves Ray's failure handlers to iobound."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("RAY_ADDRESS", "RAY_DISABLE_FAILURE_SIGNAL_HANDLER")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", script], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=180)


def test_sigterm_while_ray_shuts_down_is_noted_not_fatal():
    proc = _run_with_private_ray(SHUTDOWN_UNDER_SIGTERM)
    assert proc.returncode == 0, (f"SIGTERM during ray.shutdown ended the process (rc "
                                  f"{proc.returncode}): {proc.stderr[-800:]}")
    assert "ENV None" in proc.stdout, "starting Ray left RAY_DISABLE_FAILURE_SIGNAL_HANDLER set"
    assert f"NOTED {int(signal.SIGTERM)}" in proc.stdout, proc.stdout


# SIGTERM's handler in the kernel, polled through a private Ray's start and shutdown: it must
# stay Python's (the one SIGINT has too), never Ray's C++ failure signal handler.
HANDLER_THROUGH_START = r"""
import ctypes, signal, threading, time
from search.executors.ray_cluster import shutdown, start_local_ray
from search.interrupts import signals_interrupt

class Sigaction(ctypes.Structure):
    _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * 16),
                ("flags", ctypes.c_int), ("restorer", ctypes.c_void_p)]

libc = ctypes.CDLL(None)

def handler(sig):
    action = Sigaction()
    assert libc.sigaction(sig, None, ctypes.byref(action)) == 0
    return action.handler

pythons, done = set(), threading.Event()

def poll():
    while not done.is_set():
        pythons.add(handler(signal.SIGTERM) == handler(signal.SIGINT))
        time.sleep(0.0005)

with signals_interrupt():
    poller = threading.Thread(target=poll)
    poller.start()
    try:
        start_local_ray(1)
        shutdown()
    finally:
        done.set()
        poller.join()
print("PYTHONS", sorted(pythons), flush=True)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads glibc's struct sigaction")
def test_sigterm_stays_pythons_while_ray_starts_and_stops():
    proc = _run_with_private_ray(HANDLER_THROUGH_START)
    assert proc.returncode == 0, proc.stderr[-800:]
    assert "PYTHONS [True]" in proc.stdout, (
        f"SIGTERM had another handler than Python's while Ray started or stopped: {proc.stdout}")
