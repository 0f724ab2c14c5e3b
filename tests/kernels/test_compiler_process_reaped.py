"""run_compiler must never signal a pid it has already reaped (the pid may belong to
another process by then).

On an interrupt, ``Popen.communicate`` itself waits up to 0.25 s for the child and reaps it
when it exits (Ctrl-C reaches the whole foreground group, so g++ usually does): its pid is
then free, and stopping/killing "its tree" stops and kills whatever process got that pid
next, with all of that process's descendants.
"""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

import kernels.compiler_process as cp


def test_interrupt_after_the_compiler_exited_signals_no_freed_pid(monkeypatch):
    procs: list[subprocess.Popen] = []
    late: list[tuple[int, int]] = []  # signals sent to the compiler's pid after it was reaped
    real_kill, real_popen = os.kill, subprocess.Popen

    class Recorded(real_popen):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            procs.append(self)

    def kill(pid, sig):
        if procs and pid == procs[0].pid and procs[0].returncode is not None:
            late.append((pid, sig))
            return None  # never deliver it: the pid is no longer the compiler's
        return real_kill(pid, sig)

    monkeypatch.setattr(cp.subprocess, "Popen", Recorded)
    monkeypatch.setattr(cp.os, "kill", kill)
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            # the "compiler" interrupts us (as Ctrl-C would) and exits at once; it waits
            # first for Popen to return (an interrupt inside Popen leaves nothing to kill)
            cp.run_compiler(["sh", "-c", "sleep 0.3; kill -INT $PPID; exit 3"], timeout=30)
    finally:
        signal.signal(signal.SIGINT, old)
    assert procs and procs[0].returncode is not None  # reaped by communicate's own wait
    assert late == []
