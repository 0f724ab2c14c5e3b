"""Smoke test of benchmarks/early_stop.py: one run of a tiny layer, stopped, counted."""

from __future__ import annotations

import json

import pytest

from benchmarks import early_stop as es

TINY = ["--layer", "cin=4,hin=6,cout=4,kh=3", "--budget", "8", "--executor", "local",
        "--workers", "1"]


def test_a_stopped_run_is_counted_with_its_exit_line_and_log(tmp_path, capsys):
    out = tmp_path / "early.json"
    assert es.main(["--runs", "1", "--stop-after", "2", "2", "--out", str(out), *TINY]) == 0
    got = json.loads(out.read_text())
    (run,) = got["runs"]
    assert run["stop"] in ("SIGINT", "SIGTERM") and run["delay_s"] == 2
    # stopped: 130, its line, a log --resume reads (or none yet); or done before the stop
    assert (run["exit"], run["line"]) in {(130, True), (0, False)}, run
    assert run["log"] in ("none", "readable")
    assert got["summary"] == [{"exit": run["exit"], "interrupted_line": run["line"],
                               "log": run["log"], "runs": 1}]
    assert f"| {run['exit']} | {run['line']} | {run['log']} | 1 |" in capsys.readouterr().out


def test_a_file_that_is_no_log_is_reported_as_what_resume_refuses(tmp_path):
    log = tmp_path / "run.jsonl"
    log.write_text("not a log\n")
    assert es._log_state(log).startswith("unreadable: ")
    assert es._log_state(tmp_path / "none.jsonl") == "none"


@pytest.mark.parametrize("argv", [["--runs", "0"], ["--stop-after", "3", "1"],
                                  ["--iobound", "python -c 'x"], ["--iobound", " "]])
def test_bad_arguments_are_refused(argv):
    with pytest.raises(SystemExit, match="error: "):
        es.main(argv)
