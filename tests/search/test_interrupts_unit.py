"""search/interrupts.py in process: the handlers, the deferred signal, a stoppable solve.

References: POSIX signals sent to this process (os.kill) and Python's signal table
(signal.getsignal) before and after each block; the shell's exit code for a run
killed by a signal, 128 + the signal's number; a stand-in CP-SAT solver whose Solve
blocks until StopSearch is called, recording what it was asked.
"""

from __future__ import annotations

import os
import pickle
import signal
import threading
import time
import types

import pytest

from search.interrupts import (EXIT_INTERRUPTED, Interrupted, signals_deferred, signals_interrupt,
                               solve_stoppable)

STOPS = [signal.SIGINT, signal.SIGTERM]


def test_exit_code_is_the_shells_for_sigint():
    assert EXIT_INTERRUPTED == 128 + signal.SIGINT


@pytest.mark.parametrize("n, log, failed, resume_as, text", [
    (0, "r.jsonl", None, None, "interrupted: 0 measurements kept in r.jsonl; resume with --resume r.jsonl"),
    (1, "r.jsonl", None, None, "interrupted: 1 measurement kept in r.jsonl; resume with --resume r.jsonl"),
    (2, None, None, None, "interrupted: 2 measurements not logged (give --log FILE to be able to resume)"),
    (1, "a.l1.jsonl", "h.db", "a.jsonl",
     "interrupted: 1 measurement kept in a.l1.jsonl; resume with --resume a.jsonl; could not write h.db"),
])
def test_interrupted_says_what_was_kept(n, log, failed, resume_as, text):
    err = Interrupted(n, log, failed, resume_as)
    assert str(err) == text
    again = pickle.loads(pickle.dumps(err))
    assert (type(again), str(again), again.measurements, again.log, again.failed, again.resume_as) \
        == (Interrupted, text, n, log, failed, resume_as or log)


def _kill_soon(sig, delay=0.05):
    threading.Timer(delay, os.kill, (os.getpid(), sig)).start()


def _wait_for(flag, seconds=5.0):
    end = time.monotonic() + seconds
    while not flag() and time.monotonic() < end:
        time.sleep(0.01)


@pytest.mark.parametrize("sig", STOPS)
def test_signals_interrupt_raises_keyboard_interrupt_and_restores_the_handlers(sig):
    before = [signal.getsignal(s) for s in STOPS]
    with pytest.raises(KeyboardInterrupt, match=signal.Signals(sig).name):
        with signals_interrupt():
            os.kill(os.getpid(), sig)
            time.sleep(1)  # the handler raises here
    assert [signal.getsignal(s) for s in STOPS] == before


@pytest.mark.parametrize("sig", STOPS)
def test_signals_deferred_notes_the_signal_and_restores_the_handlers(sig):
    before = [signal.getsignal(s) for s in STOPS]
    with signals_deferred() as deferred:
        os.kill(os.getpid(), sig)
        _wait_for(lambda: deferred.signal is not None)
    assert deferred.signal == sig
    assert [signal.getsignal(s) for s in STOPS] == before


def test_outside_the_main_thread_the_blocks_leave_signals_alone():
    """Only the main thread may set handlers: in another thread the blocks do nothing."""
    before = [signal.getsignal(s) for s in STOPS]
    seen = []

    def work():
        try:
            with signals_deferred() as deferred, signals_interrupt():
                seen.append(([signal.getsignal(s) for s in STOPS], deferred.signal))
        except BaseException as exc:  # noqa: BLE001 - reported below
            seen.append(exc)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen == [(before, None)]


class _Solver:
    """Solve blocks until StopSearch (or ``seconds``), then returns ``status``."""

    def __init__(self, status=4, seconds=5.0, stop_takes=0.0, error=None):
        self.parameters = types.SimpleNamespace(catch_sigint_signal=True)
        self.status, self.seconds, self.stop_takes, self.error = status, seconds, stop_takes, error
        self.stopped, self.finished, self.asked = threading.Event(), False, None

    def Solve(self, model, callback=None):  # noqa: N802 - OR-Tools' name
        self.asked = (model, callback, self.parameters.catch_sigint_signal)
        if self.error is not None:
            raise self.error
        if self.stopped.wait(self.seconds):
            time.sleep(self.stop_takes)
        self.finished = True
        return self.status

    def StopSearch(self):  # noqa: N802 - OR-Tools' name
        self.stopped.set()


def test_solve_stoppable_returns_the_status_with_ortools_sigint_handler_off():
    solver = _Solver(status=4, seconds=0.05)
    assert solve_stoppable(solver, "model", "cb") == 4
    assert solver.asked == ("model", "cb", False) and solver.finished


def test_solve_stoppable_raises_the_workers_error():
    solver = _Solver(error=RuntimeError("bad model"))
    with pytest.raises(RuntimeError, match="bad model"):
        solve_stoppable(solver, "model")


def test_a_signal_stops_the_search_waits_for_it_and_raises():
    solver = _Solver(seconds=5.0)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with signals_interrupt():
            _kill_soon(signal.SIGINT)  # armed inside the block: never under pytest's handler
            solve_stoppable(solver, "model")
    assert solver.stopped.is_set() and solver.finished
    assert time.monotonic() - start < 3.0


def test_a_second_signal_while_stopping_still_waits_for_the_search():
    solver = _Solver(seconds=5.0, stop_takes=1.5)  # the second signal lands well inside it
    with pytest.raises(KeyboardInterrupt):
        with signals_interrupt():  # armed inside the block: never under pytest's handlers
            _kill_soon(signal.SIGINT, 0.05)
            _kill_soon(signal.SIGTERM, 0.25)
            solve_stoppable(solver, "model")
    assert solver.finished
