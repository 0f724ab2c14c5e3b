"""Chains of ``tune --history DB --reuse`` with other commands: a record the run answered
from the database (``--reuse``) is an earlier run's measurement, not this run's.

README ("iobound tune"): with ``--reuse`` "a configuration of this layer the database
holds a measurement of ... is answered from it instead of measured again"; ``--layer``
SPEC stands for "every stored layer of its shape"; ``history remove``: "Importing the
file again brings its measurements back" (and nothing else does). So a run that reuses
must not store the reused records again: not as a second copy under the other spelling
of the layer (a preset name vs its ``key=value`` spec), relabelled as its own run, and
not, when resumed after the user removed them, back into the database.

The reference is an independent sqlite3 count of the database's rows against what the
runs really measured (their ``evaluations`` minus ``reused``).
"""

from __future__ import annotations

import json
import sqlite3

from search.cli.main import main

PRESET = "alexnet.conv2"
SPEC = "cin=96,hin=27,cout=256,kh=5,pad=2"  # the same shape, unnamed
BASE = ["--budget", "8", "--strategy", "random", "--seed", "0", "--no-verify"]


def _tune(capsys, tmp_path, *argv):
    code = main(["tune", *argv, *BASE, "--out-dir", str(tmp_path / "k"), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _rows(db):
    with sqlite3.connect(db) as c:
        return c.execute("SELECT COUNT(*) FROM measurements").fetchone()[0]


def test_reuse_under_the_other_spelling_stores_no_second_copy(tmp_path, capsys):
    db = str(tmp_path / "h.db")
    first = _tune(capsys, tmp_path, "--layer", PRESET, "--history", db)
    assert first["evaluations"] == 8 and _rows(db) == 8
    again = _tune(capsys, tmp_path, "--layer", SPEC, "--history", db, "--reuse")
    assert again["reused"] == 8  # the same path: every configuration found by shape
    measured = again["evaluations"] - again["reused"]
    assert measured == 0
    # nothing new was measured: the database holds the same 8 measurements, once each
    assert _rows(db) == 8 + measured


def test_resume_does_not_bring_back_removed_reused_records(tmp_path, capsys):
    db, log = str(tmp_path / "h.db"), str(tmp_path / "run.jsonl")
    _tune(capsys, tmp_path, "--layer", PRESET, "--history", db)
    second = _tune(capsys, tmp_path, "--layer", PRESET, "--history", db, "--reuse", "--log", log)
    assert second["reused"] == 8
    # the user takes out what the first run stored (all of it: source "tune")
    assert main(["history", "remove", "--db", db, "--source", "tune"]) == 0
    capsys.readouterr()
    assert _rows(db) == 0
    code = main(["tune", "--layer", PRESET, "--history", db, "--reuse", "--resume", log,
                 "--budget", "12", "--strategy", "random", "--seed", "0", "--no-verify",
                 "--out-dir", str(tmp_path / "k"), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    resumed = json.loads(out)
    with open(log) as f:
        lines = [json.loads(s) for s in f if s.strip()]
    logged_reused = sum(1 for d in lines if d.get("reused") is True)
    assert logged_reused == 8
    measured_now = resumed["evaluations"] - logged_reused
    # only what the resumed run measured is new; the 8 removed records stay removed
    assert _rows(db) == measured_now
