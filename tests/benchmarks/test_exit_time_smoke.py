"""Smoke test of benchmarks/exit_time.py on a short command (no timing asserted here)."""

from __future__ import annotations

import re

import pytest

from benchmarks import exit_time as et

BOUND = ["--", "bound", "--layer", "alexnet.conv1", "--fast-memory", "48KiB"]


def test_both_endings_are_timed_and_printed(capsys):
    assert et.main(["--repeats", "1", *BOUND]) == 0
    out = capsys.readouterr().out
    assert out.startswith("iobound bound --layer alexnet.conv1 --fast-memory 48KiB:")
    for name in ("iobound (no teardown)", "sys.exit (teardown)"):
        assert re.search(re.escape(name) + r"\s+median \d+\.\d{3}  min \d+\.\d{3}  max \d+\.\d{3}",
                         out), out


def test_a_command_that_fails_is_an_error_not_a_time():
    with pytest.raises(SystemExit, match="exited 2"):
        et.main(["--repeats", "1", "--", "bound", "--layer", "nonsense=1"])
