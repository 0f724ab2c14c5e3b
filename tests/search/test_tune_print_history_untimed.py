"""``tune --history`` with a measurer that records no time (the emulator) says so,
instead of printing "best ever for this key None ms"."""

import subprocess
import sys


def test_emulated_run_with_history_prints_no_none_time(tmp_path):
    db = tmp_path / "h.db"
    proc = subprocess.run(
        [sys.executable, "-m", "search.cli.main", "tune", "--layer", "cin=4,hin=6,cout=4,kh=3",
         "--measure", "emulate", "--budget", "2", "--history", str(db),
         "--out-dir", str(tmp_path / "k")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("history:"))
    assert "None" not in line and "no timed measurement" in line, line
