"""How the iobound process ends (search/cli/process_exit.py): without the interpreter's
teardown (a window where SIGTERM killed a finished run, and where Ray 2.60's threads
crashed it), yet with its exit handlers run and its output flushed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# a non-daemon thread outlives the script by 60 s: the interpreter's teardown waits for
# it, os._exit does not
_SCRIPT = textwrap.dedent("""
    import atexit, sys, threading, time
    from search.cli.process_exit import exit_process
    atexit.register(lambda: open(sys.argv[1], "w").write("ran"))
    threading.Thread(target=time.sleep, args=(60,)).start()
    print("kept", end="")  # buffered (no PYTHONUNBUFFERED): written at the exit
    exit_process(int(sys.argv[2]))
""")


def _run(tmp_path: Path, code: int, stdout=subprocess.PIPE):
    mark = tmp_path / "atexit"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(mark), str(code)], cwd=ROOT,
                          stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=30, env=env)
    return done, mark


def test_the_process_skips_teardown_but_keeps_exit_handlers_and_output(tmp_path):
    done, mark = _run(tmp_path, 7)  # the teardown would wait 60 s: past the timeout
    assert done.returncode == 7, done.stderr
    assert done.stdout == "kept"
    assert mark.read_text() == "ran"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_output_the_system_refuses_at_the_end_is_no_success(tmp_path):
    with open("/dev/full", "w") as full:
        done, _ = _run(tmp_path, 0, stdout=full)
    assert done.returncode == 1, done.stderr
    with open("/dev/full", "w") as full:  # a failure keeps its own code
        assert _run(tmp_path, 2, stdout=full)[0].returncode == 2


def test_the_console_script_ends_through_exit_process():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'iobound = "search.cli.main:console_main"' in text
