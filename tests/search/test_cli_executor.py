"""`iobound tune` measures through an executor: worker processes by default for emulate."""

from __future__ import annotations

import json

from search.cli.main import main
from search.records import read_log

LAYER = "cin=2,hin=6,cout=4,kh=3,pad=1"


def test_tune_emulate_through_local_workers(capsys, tmp_path):
    """Two local workers: every configuration logged once, ok, and the run reports them."""
    log = tmp_path / "run.jsonl"
    code = main(["tune", "--layer", LAYER, "--measure", "emulate", "--budget", "6", "--workers",
                 "2", "--log", str(log), "--out-dir", str(tmp_path / "k"), "--json"])
    out = json.loads(capsys.readouterr().out)
    entries = read_log(log).entries
    assert code == 0 and out["evaluations"] == 6 == len(entries)
    assert len({e.index for e in entries}) == 6 and all(e.record.is_ok for e in entries)


def test_bad_executor_options_are_one_line(capsys, tmp_path):
    """An unknown executor or a negative worker count: one line, exit 2, before any work."""
    for extra in (["--executor", "mpi"], ["--workers", "0"], ["--retries", "-1"]):
        code = main(["tune", "--layer", LAYER, "--measure", "emulate", "--budget", "2",
                     "--out-dir", str(tmp_path), *extra])
        captured = capsys.readouterr()
        assert code == 2 and captured.out == "" and len(captured.err.strip().splitlines()) == 1
