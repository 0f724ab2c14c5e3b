"""Stop a run cleanly on SIGINT or SIGTERM, whatever it is doing.

- :func:`signals_interrupt`: within the block, SIGTERM stops the run the way Ctrl-C
  does (a ``KeyboardInterrupt`` in the main thread), so the tuning loop can keep what
  it measured and the session can write the history and the export.
- :func:`signals_deferred`: within the block (the final writes), a signal is noted,
  not raised, so a second Ctrl-C cannot cut the history or the export short; a block
  opened with ``give_up_waits`` lets a signal end a wait for another process's lock
  (:func:`waits_given_up`, asked by the tuning database's writes): what it would write
  is kept elsewhere (the run's log), and a signal must not wait minutes for a lock.
- :func:`signals_raised`: within a deferred block, the part that may be stopped (the
  tuning loop) raises again; a signal noted before it raises as it starts. A run's
  layer is tuned and stored under one deferred block with the loop raised in it, so
  no instant between the loop's end and the stored outcomes can lose them.
- :func:`solve_stoppable`: CP-SAT's ``Solve`` runs in a worker thread with OR-Tools'
  own SIGINT handler off (it would replace ours and stop the search silently, and a
  solve blocks the main thread, where Python runs signal handlers); a signal stops
  the search and is raised in the main thread.
- :class:`Interrupted`: what the session raises after writing what was measured.

Examples
--------
>>> with signals_deferred() as deferred:
...     pass
>>> deferred.signal is None
True
>>> str(Interrupted(3, "run.jsonl"))
'interrupted: 3 measurements kept in run.jsonl; resume with --resume run.jsonl'
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterator

__all__ = ["EXIT_INTERRUPTED", "Interrupted", "signals_interrupt", "signals_deferred", "signals_raised",
           "solve_stoppable", "STOP_SIGNALS", "waits_given_up"]

#: The exit code of a run stopped by a signal (the shell's code for SIGINT).
EXIT_INTERRUPTED = 130

#: The signals that stop a run cleanly.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """A run stopped by SIGINT or SIGTERM after keeping what it measured.

    ``measurements`` is how many records the run holds (resumed ones included) and
    ``log`` where they are (``None`` without a log).

    >>> stop = Interrupted(1, None)
    >>> isinstance(stop, KeyboardInterrupt), str(stop)
    (True, 'interrupted: 1 measurement not logged (give --log FILE to be able to resume)')
    """

    def __init__(self, measurements: int, log: str | None, failed: str | None = None,
                 resume_as: str | None = None):
        super().__init__(measurements, log, failed, resume_as)
        self.measurements, self.log, self.failed = measurements, log, failed
        self.resume_as = resume_as or log  # a network's per-layer logs resume from one name

    def __str__(self) -> str:
        """The one line the CLI prints (``failed``: a final write that failed)."""
        from iobound.wording import counted  # here: the CLI imports this module before
        # it can handle a signal, so it imports nothing heavy (the iobound package: SymPy)
        n = counted(self.measurements, "measurement")
        if self.log is None:
            text = f"interrupted: {n} not logged (give --log FILE to be able to resume)"
        else:
            text = f"interrupted: {n} kept in {self.log}; resume with --resume {self.resume_as}"
        return text + (f"; could not write {self.failed}" if self.failed else "")


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def _handlers(handler) -> Iterator[None]:
    if not _in_main_thread():  # only the main thread may set handlers (and receives them)
        yield
        return
    old = {s: signal.signal(s, handler) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def signals_interrupt():
    """Within the block, SIGINT and SIGTERM raise ``KeyboardInterrupt`` in the main thread.

    >>> try:
    ...     with signals_interrupt():
    ...         signal.raise_signal(signal.SIGTERM)  # as ``kill`` would send it
    ... except KeyboardInterrupt as exc:
    ...     print("stopped by", exc)
    stopped by SIGTERM
    """
    return _handlers(_raise_interrupt)


@dataclass(eq=False)  # each block its own: told apart by identity (the open blocks' list)
class Deferred:
    """The signal noted while deferred (``None`` if none came), and whether it ends a
    wait for a lock (:func:`waits_given_up`).

    >>> Deferred()
    Deferred(signal=None, give_up_waits=False)
    """

    signal: int | None = None
    give_up_waits: bool = False


#: The main thread's deferred blocks now open, innermost last.
_OPEN: list[Deferred] = []


@contextlib.contextmanager
def signals_deferred(give_up_waits: bool = False) -> Iterator[Deferred]:
    """Within the block, SIGINT and SIGTERM are noted in the yielded :class:`Deferred`,
    not raised: the caller finishes the block and then acts on it. With
    ``give_up_waits``, a signal noted also ends a wait for a lock within it
    (:func:`waits_given_up`).

    >>> with signals_deferred() as deferred:
    ...     signal.raise_signal(signal.SIGINT)  # noted, not raised: the block goes on
    ...     finished = True
    >>> finished, deferred.signal == signal.SIGINT
    (True, True)
    """
    deferred = Deferred(give_up_waits=give_up_waits)

    def note(signum: int, frame: Any) -> None:
        deferred.signal = signum

    main = _in_main_thread()
    with _handlers(note):
        if main:
            _OPEN.append(deferred)
        try:
            yield deferred
        finally:
            if main:
                _OPEN.remove(deferred)


def waits_given_up() -> bool:
    """Whether a wait for another process's lock should end now: an open
    :func:`signals_deferred` block with ``give_up_waits`` has noted a signal.

    >>> with signals_deferred(give_up_waits=True) as deferred:
    ...     before = waits_given_up()
    ...     deferred.signal = signal.SIGINT  # as a Ctrl-C would note it
    ...     after = waits_given_up()
    >>> before, after, waits_given_up()
    (False, True, False)
    """
    return any(d.give_up_waits and d.signal is not None for d in _OPEN)


@contextlib.contextmanager
def signals_raised() -> Iterator[None]:
    """Within a :func:`signals_deferred` block, SIGINT and SIGTERM raise
    ``KeyboardInterrupt`` again, and one already noted by an open deferred block raises
    as the block starts (the deferred block still holds it). Outside any deferred block,
    or outside the main thread, the handlers are left as they are.

    >>> with signals_deferred() as deferred:
    ...     signal.raise_signal(signal.SIGTERM)  # noted while the block writes
    ...     try:
    ...         with signals_raised():  # the part that may stop raises it as it starts
    ...             pass
    ...     except KeyboardInterrupt as exc:
    ...         print("raised", exc)
    raised SIGTERM
    """
    if not _in_main_thread() or not _OPEN:
        yield
        return
    with _handlers(_raise_interrupt):
        noted = next((d.signal for d in reversed(_OPEN) if d.signal is not None), None)
        if noted is not None:
            raise KeyboardInterrupt(signal.Signals(noted).name)
        yield


def solve_stoppable(solver, model, callback=None) -> int:
    """``solver.Solve(model, callback)``, stopped by SIGINT or SIGTERM (see module doc).

    The status is returned; an interrupt stops the search, waits for the worker and
    re-raises the ``KeyboardInterrupt``.

    >>> from ortools.sat.python import cp_model
    >>> model = cp_model.CpModel()
    >>> x = model.NewIntVar(0, 5, "x"); model.Maximize(x)
    >>> solver = cp_model.CpSolver(); solver.parameters.num_workers = 1
    >>> solve_stoppable(solver, model) == cp_model.OPTIMAL, solver.Value(x)
    (True, 5)
    """
    solver.parameters.catch_sigint_signal = False
    out: dict[str, Any] = {}

    def work() -> None:
        try:
            out["status"] = solver.Solve(model, callback)
        except BaseException as exc:  # handed to the main thread below
            out["error"] = exc

    worker = threading.Thread(target=work, name="cp-sat", daemon=True)
    worker.start()
    # Poll with sleep: a KeyboardInterrupt raised inside Thread.join can leave the thread
    # marked finished while it still runs (CPython gh-90882), and the process then aborts.
    try:
        while worker.is_alive():
            time.sleep(0.05)  # a signal handler runs here and may raise
    except KeyboardInterrupt:
        solver.StopSearch()
        while True:
            try:
                while "status" not in out and "error" not in out:
                    time.sleep(0.01)
                break
            except KeyboardInterrupt:  # a second signal: the search is stopping already
                continue
        raise
    worker.join()
    if "error" in out:
        raise out["error"]
    return out["status"]
