"""Writes the system refuses mid-run (a file-size limit, a full disk) are no bad input:
exit 1, naming the file, and for a log where the measurements are and how to resume."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from search.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--layer", "cin=4,hin=6,cout=4,kh=3,pad=1", "--measure", "model", "--no-verify"]


def _limit_file_size():
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def test_a_log_cut_by_the_file_size_limit_says_where_to_resume(tmp_path):
    log = tmp_path / "run.jsonl"
    cmd = [sys.executable, "-m", "search.cli.main", "tune", *TINY, "--budget", "8", "--log", str(log)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    got = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path,
                         preexec_fn=_limit_file_size, timeout=300)
    assert got.returncode == 1, got.stderr
    err = got.stderr.strip().splitlines()
    assert len(err) == 1 and f"could not write the log {str(log)!r} (File too large)" in err[0]
    assert f"resume with --resume {log}" in err[0]
    assert main(["tune", *TINY, "--budget", "8", "--resume", str(log)]) == 0
    assert sum('"kind": "record"' in line for line in log.read_text().splitlines()) == 8


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_an_export_to_a_full_disk_is_exit_1(tmp_path, capsys):
    db = tmp_path / "h.db"
    assert main(["tune", *TINY, "--budget", "3", "--history", str(db)]) == 0
    capsys.readouterr()
    assert main(["history", "export", "--db", str(db), "/dev/full"]) == 1
    err = capsys.readouterr().err
    assert "cannot write the cache file '/dev/full': No space left on device" in err


def test_a_report_plot_failing_in_its_temporary_folder_names_the_out_dir(tmp_path, capsys,
                                                                       monkeypatch):
    """The PNG is drawn in a temporary folder; its OSError has no file name (was 'None')."""
    pytest.importorskip("matplotlib")
    import errno

    import search.selection.report as report

    def too_large(*args, **kwargs):
        raise OSError(errno.EFBIG, "File too large")
    monkeypatch.setattr(report, "write_report", too_large)
    out = tmp_path / "rep"
    assert main(["report", "--layer", "cin=4,hin=6,cout=4,kh=3,pad=1", "--out-dir", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"cannot write the report into {str(out)!r}: File too large" in err and "None" not in err
