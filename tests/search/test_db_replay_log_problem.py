"""A replay run's log names its workload's problem wherever it is imported
(search/db/log_reader.py, search/session/replay.py).

References: the README's idempotent import (the same log imported twice adds nothing) and
the workload's identity (kernel, problem, parameter names). The header records the
replayed cache's problem size; a log written before it did is read with the cache found as
the run named it or beside the log, and refused (one line) where neither is found, never
stored under a workload with no problem.
"""

from __future__ import annotations

import json

from search.cli.main import main
from search.db import TuningDB
from search.records import read_log


def _run_in(folder, monkeypatch):
    folder.mkdir()
    (folder / "k_dev.json").write_text(json.dumps({
        "device_name": "devR", "kernel_name": "k", "problem_size": [64, 64],
        "tune_params_keys": ["x"], "tune_params": {"x": [1, 2, 3, 4]}, "objective": "time",
        "cache": {str(x): {"x": x, "time": float(x), "times": [float(x)]} for x in (1, 2, 3, 4)}}))
    monkeypatch.chdir(folder)  # the README's way: a replay path relative to the run's folder
    assert main(["tune", "--measure", "replay:k_dev.json", "--budget", "2", "--log", "run.jsonl",
                 "--history", "tuning.db"]) == 0
    return folder / "run.jsonl", folder / "tuning.db"


def _strip_problem(log):
    lines = log.read_text().splitlines()
    head = json.loads(lines[0])
    head.pop("problem_size")
    log.write_text("\n".join([json.dumps(head), *lines[1:]]) + "\n")


def test_the_log_imports_to_the_run_workload_from_any_folder(tmp_path, monkeypatch, capsys):
    log, db = _run_in(tmp_path / "run", monkeypatch)
    assert read_log(log).header["problem_size"] == [64, 64]
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert main(["history", "import", str(log), "--db", str(db)]) == 0
    capsys.readouterr()
    with TuningDB(str(db), readonly=True) as t:  # nothing new: the records tune stored
        assert [w.label() for w in t.workloads()] == ["k [64,64]"] and t.count() == 2


def test_an_older_log_finds_its_cache_beside_it_or_is_refused(tmp_path, monkeypatch, capsys):
    log, db = _run_in(tmp_path / "run", monkeypatch)
    _strip_problem(log)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert main(["history", "import", str(log), "--db", str(db)]) == 0
    capsys.readouterr()
    with TuningDB(str(db), readonly=True) as t:
        assert [w.label() for w in t.workloads()] == ["k [64,64]"] and t.count() == 2
    (tmp_path / "run" / "k_dev.json").unlink()
    new = tmp_path / "new.db"
    assert main(["history", "import", str(log), "--db", str(new)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'k_dev.json' cannot be read here or beside the log" in err[0]
    assert not new.exists()
