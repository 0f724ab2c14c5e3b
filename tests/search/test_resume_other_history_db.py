"""A run resumed with another ``--history`` database than the one it was started with.

README ("iobound tune"): ``--history tuning.db`` "tunes with every timed record it already
holds of this parameter space ... never the records of the log --resume continues"; a
resumed layer reads the history "as it was when the layer first started: its log records
the database's mark" (search/session/history_use.py ``_resumed``). The mark is a row id
of the database the run was started with. Resumed with another database, that id was
applied to it: its records past the id were silently left out (none at all for a run
started with a new, empty database). Reference: the records the other database held of
this parameter space before the interrupted run even started (all of them are history of
the resumed run: none is of its log).
"""

from __future__ import annotations

import json

from search.cli.main import main


def _run(tmp_path, capsys, *argv) -> dict:
    base = ["tune", "--measure", "model", "--strategy", "explorer", "--no-verify",
            "--out-dir", str(tmp_path / "k"), "--json"]
    assert main(base + list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_a_resume_with_another_database_reads_all_of_its_history(tmp_path, capsys):
    other, first, log = tmp_path / "other.db", tmp_path / "first.db", tmp_path / "run.jsonl"
    # the other database: 6 timed records of the conv template's space (another layer)
    _run(tmp_path, capsys, "--layer", "alexnet.conv3", "--budget", "6", "--history", str(other))
    # the run: started with a new, empty database (its mark: nothing stored), then resumed
    _run(tmp_path, capsys, "--layer", "alexnet.conv4", "--budget", "4", "--history", str(first),
         "--log", str(log))
    got = _run(tmp_path, capsys, "--layer", "alexnet.conv4", "--budget", "8", "--history",
               str(other), "--resume", str(log))
    assert got["resumed"] == 4
    assert got["history"]["records"] == 6, got["history"]
