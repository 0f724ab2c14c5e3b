"""SIGKILL while ``tune --resume old --log new`` copies the old records into the new log.

README ("What is verified"): "a tuning run killed with SIGKILL resumes from its log with
nothing lost or measured twice". A single-layer ``--resume old --log new`` first copies
``old``'s records into ``new`` (search/tuner.py ``_open_log``), appending them one line
at a time to ``new`` itself. Killed during that copy, ``new`` is left a log holding only
some of them: the same command again is refused ("--log exists; pass it as --resume"),
and resuming ``new`` as told measures the configurations not yet copied again (new
timestamps), although ``old`` holds their measurements. (A network's copies go through a
temporary file and a rename, ``search/session/run.py`` ``_into_new_logs``.)

Reference: ``old``'s records, every one of which must be in the log the run ends with,
as it was measured (same record, timestamp included), and no index logged twice.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from search.records import read_log

ROOT = Path(__file__).resolve().parents[2]

KILLER = textwrap.dedent("""
    import os, signal, sys
    from search import log_writer
    from search.cli.main import main
    append, n = log_writer.LogWriter.append, [0]
    def append_then_die(self, *args, **kwargs):
        append(self, *args, **kwargs)
        n[0] += 1
        if n[0] == 3:   # three of the six old records copied: the power goes, kill -9
            os.kill(os.getpid(), signal.SIGKILL)
    log_writer.LogWriter.append = append_then_die
    sys.exit(main(sys.argv[1:]))
""")


def _run(args, tmp_path, code=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-c", code or "import sys; from search.cli.main import main; sys.exit(main())",
           *args]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)


def test_sigkill_while_copying_into_a_new_log_loses_and_remeasures_nothing(tmp_path):
    base = ["tune", "--layer", "resnet50.conv3_1", "--measure", "model", "--strategy", "random",
            "--no-verify", "--out-dir", "k"]
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    assert _run(base + ["--budget", "6", "--log", "old.jsonl"], tmp_path).returncode == 0
    again = base + ["--budget", "10", "--resume", "old.jsonl", "--log", "new.jsonl"]
    killed = _run(again, tmp_path, KILLER)
    assert killed.returncode == -9, killed.stderr

    # what the user does next: the same command, or (if that is refused) what it says
    done = _run(again, tmp_path)
    if done.returncode != 0:
        assert "--resume" in done.stderr, done.stderr
        done = _run(base + ["--budget", "10", "--resume", "new.jsonl"], tmp_path)
    assert done.returncode == 0, done.stderr

    measured = {e.index: e.record.to_dict() for e in read_log(old).entries}
    assert len(measured) == 6
    final = read_log(new).entries
    indices = [e.index for e in final]
    assert len(indices) == len(set(indices)) == 10
    got = {e.index: e.record.to_dict() for e in final}
    remeasured = sorted(i for i in measured if got.get(i) != measured[i])
    assert remeasured == [], f"old records measured again or lost: {remeasured}"
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".copy")]
