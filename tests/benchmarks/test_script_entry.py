"""Every benchmark script answers bad input as ``iobound`` does: one line, exit 2
(search/cli/script_entry.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from iobound.errors import InvalidInputError, IoboundError
from search.cli.script_entry import run_script

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p for p in (ROOT / "benchmarks").glob("*.py") if "__main__" in p.read_text())


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_script_ends_through_run_script(script):
    """A script whose __main__ called main() directly printed a traceback for an unknown
    device and exited 1 for its own argument checks."""
    main_block = script.read_text().split('if __name__ == "__main__":')[-1]
    # exit_process: a script that starts Ray ends as iobound does (search/cli/process_exit.py)
    assert re.search(r"(sys\.exit|exit_process)\(run_script\(main\)\)", main_block), script.name


@pytest.mark.parametrize("argv, needle", [
    (["benchmarks/selection_quality.py", "--device", "nosuch"], "unknown device 'nosuch'"),
    (["-m", "benchmarks.transfer_quality", "--seeds", "0", "--no-plot"], "--seeds"),
])
def test_bad_input_is_one_line_and_exit_2(argv, needle):
    """Run as a user runs them (by path or as a module): no traceback."""
    done = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.startswith("error: ") and needle in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


class _LateWrite(IoboundError):
    exit_code = 1


@pytest.mark.parametrize("raised, code", [
    (InvalidInputError("bad"), 2), (_LateWrite("disk full"), 1), (SystemExit("error: x"), 2),
    (SystemExit("no prefix"), 2), (KeyboardInterrupt(), 130),
])
def test_run_script_maps_what_main_raises(capsys, raised, code):
    def main(argv=None):
        raise raised
    assert run_script(main) == code
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_run_script_keeps_main_s_code_and_argparse_s_exit():
    assert run_script(lambda argv: 3) == 3 and run_script(lambda argv: None) == 0
    def main(argv=None):
        raise SystemExit(2)  # argparse has printed its usage already
    with pytest.raises(SystemExit):
        run_script(main)
