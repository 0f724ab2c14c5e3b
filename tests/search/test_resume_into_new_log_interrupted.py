"""A signal while ``--resume old --log new`` copies the resumed records into the new log.

README: Ctrl-C or SIGTERM "at any point" stops the run cleanly, "the log is complete" and
one line says where the measurements are and how to resume. ``tune`` copies the resumed
log's records into a new ``--log`` first (search/tuner.py ``_open_log``), so that the new
log alone holds the run. A signal during that copy left the new log with only the records
copied so far, and the CLI said only "interrupted". The same command again is refused
("--log exists; pass it as --resume"), and resuming the new log, as that says, measures
the rest of the old run again: measurements lost. Reference: the old log's records,
all of which the new log must hold once the run stops.
"""

from __future__ import annotations

import json
import os
import signal

from search import log_writer
from search.cli.main import main


def _indices(path) -> list[int]:
    with open(path) as fh:
        return [o["index"] for o in map(json.loads, fh) if o.get("kind") == "record"]


def test_a_signal_while_the_resumed_records_are_copied_loses_none(tmp_path, monkeypatch, capsys):
    base = ["tune", "--layer", "resnet50.conv3_1", "--measure", "model", "--strategy", "random",
            "--no-verify", "--out-dir", str(tmp_path / "k")]
    old, new = str(tmp_path / "old.jsonl"), str(tmp_path / "new.jsonl")
    assert main(base + ["--budget", "6", "--log", old]) == 0
    assert len(_indices(old)) == 6
    capsys.readouterr()

    append, calls = log_writer.LogWriter.append, []

    def append_then_signal(self, *args, **kwargs):
        append(self, *args, **kwargs)
        calls.append(1)
        if len(calls) == 2:  # Ctrl-C lands while the third resumed record is still to copy
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(log_writer.LogWriter, "append", append_then_signal)
    rc = main(base + ["--budget", "12", "--resume", old, "--log", new])
    monkeypatch.setattr(log_writer.LogWriter, "append", append)
    err = capsys.readouterr().err.strip().splitlines()

    assert rc == 130
    kept = set(_indices(new))
    assert set(_indices(old)) <= kept, f"the new log keeps {len(kept)} of the 6 resumed records"
    assert err and f"resume with --resume {new}" in err[-1], err[-1:]
