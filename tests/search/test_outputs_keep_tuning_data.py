"""An output option never replaces a tuning database or a run's log (a CLI audit's faults).

``kernel --emit``, ``tune --network-json``, ``tune --export-cache`` and ``history export``
wrote their file over an existing tuning log (and ``--emit`` / ``--network-json`` over a
database): the measurements in it were lost. Each now refuses in one line, exit 2, the file
as it was. A resumed compressed log is refused before the notice of what was taken from it
(two stderr lines before); an SQLite file that is not ours is not called a tuning database;
a ``--network-json`` named as the run's ``--log`` (which a later ``--resume`` reads first)
is refused.
"""

from __future__ import annotations

import gzip
import json
import sqlite3

import pytest

from search.cli.main import main
from search.records import SCHEMA, SCHEMA_VERSION

TINY = ["--layer", "cin=4,hin=8,cout=8,kh=3,pad=1", "--measure", "model", "--no-verify"]


def _log(path):
    path.write_text(json.dumps({"schema": SCHEMA, "version": SCHEMA_VERSION, "kind": "header"})
                    + "\n")
    return path


def _database(path):
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE t (x)")
    return path


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize("kind", ["log", "database"])
@pytest.mark.parametrize("command", ["emit", "network-json", "export-cache"])
def test_an_output_never_replaces_tuning_data(tmp_path, capsys, monkeypatch, kind, command):
    monkeypatch.chdir(tmp_path)
    target = _log(tmp_path / "t.jsonl") if kind == "log" else _database(tmp_path / "t.db")
    before = target.read_bytes()
    argv = {"emit": ["kernel", "--layer", "cin=4,hin=8,cout=8,kh=3,pad=1",
                     "--config", "x=2,y=2,z=2,alpha=2", "--emit", str(target)],
            "network-json": ["tune", "--network", "squeezenet", "--measure", "model",
                             "--budget", "2", "--no-verify", "--network-json", str(target)],
            "export-cache": ["tune", *TINY, "--budget", "2", "--export-cache", str(target)]}
    assert main(argv[command]) == 2
    what = "a tuning log" if kind == "log" else "an SQLite database"
    assert f"is {what}; writing would replace it" in _one_line(capsys)
    assert target.read_bytes() == before


def test_history_export_never_replaces_a_log(tmp_path, capsys):
    db, log = tmp_path / "h.db", _log(tmp_path / "run.jsonl")
    assert main(["tune", *TINY, "--budget", "2", "--history", str(db), "--out-dir",
                 str(tmp_path / "k")]) == 0
    capsys.readouterr()
    before = log.read_bytes()
    assert main(["history", "export", "--db", str(db), str(log)]) == 2
    assert "is a tuning log; writing would replace it" in _one_line(capsys)
    assert log.read_bytes() == before


def test_a_compressed_log_resumed_alone_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["tune", *TINY, "--budget", "2", "--log", "r.jsonl"]) == 0
    packed = tmp_path / "r.jsonl.gz"
    packed.write_bytes(gzip.compress((tmp_path / "r.jsonl").read_bytes()))
    capsys.readouterr()
    assert main(["tune", "--resume", str(packed)]) == 2
    assert "is compressed (gzip): a run cannot append to it" in _one_line(capsys)
    # read into a new log it resumes: nothing is appended to it
    assert main(["tune", "--resume", str(packed), "--log", "new.jsonl", "--budget", "3"]) == 0


def test_an_sqlite_file_of_another_program_is_not_called_ours(tmp_path, capsys):
    other = _database(tmp_path / "other.db")
    assert main(["tune", "--resume", str(other)]) == 2
    line = _one_line(capsys)
    assert "is an SQLite database, not a run's log" in line and "is a tuning database" not in line


def test_network_json_named_as_the_log_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["tune", "--network", "squeezenet", "--measure", "model", "--budget", "2",
                 "--no-verify", "--log", "nn.jsonl", "--network-json", "nn.jsonl"]) == 2
    assert "is also given as" in _one_line(capsys)
    assert not list(tmp_path.glob("nn*"))
