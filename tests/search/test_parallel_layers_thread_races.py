"""Layers tuned at once (``--parallel-layers``): races between the main thread and the
layer threads that share one pool of workers.

A signal is a ``KeyboardInterrupt`` raised in the main thread at whatever bytecode it is
running: in the wait loop of :class:`search.session.parallel._Run`, that need not be the
``time.sleep`` inside its ``try``. The tests deliver a real SIGINT at such an instant
(``signal.raise_signal`` from the main thread while it checks the layer threads), which is
what a Ctrl-C does when it lands while the main thread is awake (it is awake for a few
microseconds every 50 ms, and for milliseconds when the layer threads hold the GIL).
"""

from __future__ import annotations

import signal
import sqlite3
import threading
import time

import pytest

from iobound.layer import ConvLayer
from search.executors import ExecutorOptions
from search.interrupts import Interrupted
from search.records import read_log
from search.session import Observer, TuneSettings, tune_layers

LAYERS = [ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=c, k_h=3, k_w=3, padding=1,
                    name=f"thr.l{c}") for c in (16, 32)]


def _stored(db) -> int:
    """Measurements in the history database (0 while it does not exist), read without
    creating it."""
    if not db.exists():
        return 0
    conn = sqlite3.connect(db.as_uri() + "?mode=ro", uri=True)
    try:
        return conn.execute("SELECT COUNT(*) FROM measurements").fetchone()[0]
    finally:
        conn.close()


class _SlowWindDown(Observer):
    """Arms the signal at the first measurement; each layer's wind-down (the end of its
    loop, before its history is stored) takes a while, as a winner's emulator check or a
    large history write does."""

    def __init__(self, armed: threading.Event):
        self.armed = armed

    def progress(self, done, budget, best) -> None:
        self.armed.set()

    def tuning_done(self) -> None:
        time.sleep(0.6)


def test_sigint_outside_the_sleep_still_waits_for_every_layer_to_store(tmp_path, monkeypatch,
                                                                        python_sigint):
    """A SIGINT landing while the main thread checks whether the layer threads are alive
    (not in its ``time.sleep``) must stop the run as any other Ctrl-C does: every running
    layer stores what it measured before ``tune_layers`` raises ``Interrupted`` (the module
    doc of search.session.parallel: "every running layer stops as a single run does (its
    log complete, history and export written)"). Before the fix the interrupt escaped the
    wait loop: the pool was closed and ``Interrupted`` raised while the layer threads were
    still running, so the history lacked their records (and at exit the daemon threads
    are killed mid-write)."""
    armed, fired = threading.Event(), []
    real_is_alive = threading.Thread.is_alive

    def is_alive(self):
        if (armed.is_set() and not fired and self.name.startswith("layer-")
                and threading.current_thread() is threading.main_thread()):
            fired.append(time.monotonic())
            signal.raise_signal(signal.SIGINT)  # Ctrl-C, now: between two sleeps
        return real_is_alive(self)

    monkeypatch.setattr(threading.Thread, "is_alive", is_alive)
    db = tmp_path / "h.db"
    settings = TuneSettings(strategy="random", budget=400, seed=0, log=str(tmp_path / "run.jsonl"),
                            history=str(db),
                            executor=ExecutorOptions(workers=1, parallel_layers=2))
    with pytest.raises(Interrupted) as info:
        tune_layers(LAYERS, "v100", settings, out_dir=str(tmp_path / "k"), verify=False,
                    observer=_SlowWindDown(armed))
    still_running = [t.name for t in threading.enumerate() if t.name.startswith("layer-")]
    logged = sum(len(read_log(tmp_path / f"run.{l.name}.jsonl").entries) for l in LAYERS
                 if (tmp_path / f"run.{l.name}.jsonl").exists())
    stored = _stored(db)
    assert fired, "the signal was never sent (the run ended first)"
    assert still_running == [], f"layer threads still running after Interrupted: {still_running}"
    assert 0 < logged < 2 * 400
    assert stored == logged
    assert info.value.measurements == logged


def test_cli_resumed_network_interrupted_while_the_pool_starts_says_what_the_logs_keep(
        tmp_path, capsys, monkeypatch):
    """A network run resumed with layers at once, Ctrl-C while the shared pool starts its
    workers (seconds: forkserver, or Ray's init): the logs keep the first run's 20
    measurements, and the one line says so and how to resume, as it does for layers run
    one after another (there it is Interrupted from run_layers). It was a bare
    'iobound tune: interrupted' (run_layers_parallel re-raised the plain
    KeyboardInterrupt when no layer thread had started)."""
    from search.cli.main import main
    from search.executors.shared import SharedExecutor

    args = ["tune", "--network", "alexnet", "--measure", "model", "--strategy", "random",
            "--no-verify", "--out-dir", str(tmp_path / "k")]
    assert main([*args, "--budget", "4", "--log", str(tmp_path / "run.jsonl")]) == 0
    capsys.readouterr()

    def start(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(SharedExecutor, "start", start)
    code = main([*args, "--budget", "8", "--resume", str(tmp_path / "run.jsonl"),
                 "--executor", "local", "--workers", "1", "--parallel-layers", "2"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 130 and err == [
        f"iobound tune: interrupted: 20 measurements kept in {tmp_path / 'run.<layer>.jsonl'}; "
        f"resume with --resume {tmp_path / 'run.jsonl'}"], err
