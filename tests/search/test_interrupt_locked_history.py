"""A run stopped (SIGINT or SIGTERM) while its end waits for another process's lock on the
history database gives the write up at once: the log holds the run, so the signal is not
held for the minutes a lock may be waited for (it was: about 200 s).

References: the log written by the run itself (every measurement in it), the exit code
of an interrupted run (130) and its one line naming the log and the write not done."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from search.db import TuningDB
from search.records import read_log

REPO = Path(__file__).resolve().parents[2]
BUDGET = 6

_LOCKER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(300)
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_ends_the_wait_for_a_locked_history_database(tmp_path, signum):
    db, log = tmp_path / "c.db", tmp_path / "w.jsonl"
    TuningDB(db).close()  # a tuning database (WAL): readers pass a writer's lock
    locker = subprocess.Popen([sys.executable, "-c", _LOCKER, str(db)], stdout=subprocess.PIPE,
                              text=True)
    run = None
    try:
        assert locker.stdout.readline().strip() == "locked"
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        run = subprocess.Popen(
            [sys.executable, "-c", "import sys; from search.cli.main import main; "
             "sys.exit(main(sys.argv[1:]))", "tune", "--layer", "cin=4,hin=8,cout=8,kh=3,pad=1",
             "--measure", "model", "--strategy", "random", "--budget", str(BUDGET), "--no-verify",
             "--out-dir", str(tmp_path / "k"), "--history", str(db), "--log", str(log)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        # the log's lines, not read_log: the file exists a moment before its header does
        while not (log.exists() and len(log.read_bytes().splitlines()) == 1 + BUDGET):
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "the run never logged its budget"
            time.sleep(0.1)
        time.sleep(1.0)  # its end is waiting for the lock now
        assert run.poll() is None, "the run did not wait for the locked database"
        run.send_signal(signum)
        t0 = time.monotonic()
        _, err = run.communicate(timeout=60)
        waited = time.monotonic() - t0
    finally:
        locker.kill()
        locker.wait()
        if run is not None and run.poll() is None:
            run.kill()
    assert run.returncode == 130 and waited < 10, (run.returncode, waited, err)
    line = err.strip().splitlines()[-1]
    assert f"{BUDGET} measurements kept in {log}" in line and f"could not write --history {db}" in line
    assert len(read_log(log).entries) == BUDGET
    with TuningDB(db) as handle:
        assert handle.count() == 0
    # the lock gone, the resume measures nothing and stores the log
    from search.cli.main import main
    assert main(["tune", "--layer", "cin=4,hin=8,cout=8,kh=3,pad=1", "--measure", "model",
                 "--strategy", "random", "--budget", str(BUDGET), "--no-verify", "--out-dir",
                 str(tmp_path / "k"), "--history", str(db), "--resume", str(log)]) == 0
    with TuningDB(db) as handle:
        assert handle.count() == BUDGET
