"""optimal_pebbling called from a thread other than the main one (a user's worker thread,
a thread pool) must not take Ctrl-C away from the process.

CP-SAT's ``catch_sigint_signal`` (on by default) installs a C-level SIGINT handler for
the solve and leaves SIGINT at the C default (SIG_DFL) when it ends. In the main thread
optimal_pebbling puts Python's handler back; a signal handler can only be set in the
main thread, so from any other thread it cannot, and the process is left with SIG_DFL: a
later Ctrl-C kills it outright (no KeyboardInterrupt, no ``finally``, a tuning session in
the main thread stores nothing). Meanwhile the main thread's Ctrl-C only stopped the
thread's solve.
"""

from __future__ import annotations

import subprocess
import sys

_CODE = """
import os, signal, threading, time
signal.signal(signal.SIGINT, signal.default_int_handler)
import networkx as nx
from dataflow.optimal_pebbling import optimal_pebbling
out = {}
t = threading.Thread(target=lambda: out.setdefault(
    "io", optimal_pebbling(nx.DiGraph([(0, 2), (1, 2)]), 3, time_limit=5, workers=1).io))
t.start()
t.join()
try:
    signal.raise_signal(signal.SIGINT)
    time.sleep(2)
    print("ignored", out)
except KeyboardInterrupt:
    print("interrupted", out)
"""


def test_ctrl_c_after_a_solve_in_another_thread_is_a_keyboard_interrupt():
    """A solve of the 3-vertex join in a worker thread (io 3: two loads, one store), then
    SIGINT: the main thread gets KeyboardInterrupt, the process is not killed by it."""
    out = subprocess.run([sys.executable, "-c", _CODE], capture_output=True, text=True,
                         timeout=60)
    assert (out.returncode, out.stdout.strip()) == (0, "interrupted {'io': 3}"), \
        (out.returncode, out.stdout, out.stderr[-500:])
