"""A local worker whose driver went away (killed with SIGKILL, say) ends quietly: it was
answering a job into a pipe nobody reads, and printed a BrokenPipeError traceback into
the user's terminal after the run had ended (a review found it).

Reference: the worker's exit code and its stderr, from a real worker process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_DRIVER = """
import multiprocessing as mp
from search.executors.worker import process_main
if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    worker = ctx.Process(target=process_main, args=(child, None, {}))
    worker.start()
    child.close()
    assert parent.recv() == ("ready", None)
    parent.send(("build", None, b""))  # answered with an error event: into a closed pipe
    parent.close()
    worker.join(60)
    print("exitcode", worker.exitcode)
"""


def test_a_worker_whose_driver_is_gone_exits_without_a_traceback(tmp_path):
    script = tmp_path / "driver.py"
    script.write_text(_DRIVER)
    got = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert got.stdout.strip() == "exitcode 0", (got.stdout, got.stderr)
    assert "Traceback" not in got.stderr and "BrokenPipeError" not in got.stderr, got.stderr
