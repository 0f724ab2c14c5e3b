"""How the iobound process ends (search/cli/process_exit.py): after a Ray driver ran here,
without the interpreter's teardown (where Ray 2.60's threads crashed it), yet with its
exit handlers run and its output flushed; otherwise as usual."""

from __future__ import annotations

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
    from search.executors import ray_cluster
    atexit.register(lambda: open(sys.argv[1], "w").write("ran"))
    threading.Thread(target=time.sleep, args=(60,)).start()
    ray_cluster._driver_started = sys.argv[2] == "ray"
    print("kept", end="")  # buffered: stdout is a pipe
    exit_process(7)
""")


def _run(tmp_path: Path, ray: str, timeout: float) -> tuple[subprocess.CompletedProcess, Path]:
    mark = tmp_path / f"atexit-{ray}"
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(mark), ray], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)
    return done, mark


def test_after_a_ray_driver_the_process_skips_teardown_but_keeps_exit_handlers_and_output(tmp_path):
    done, mark = _run(tmp_path, "ray", timeout=30)  # the teardown would wait 60 s
    assert done.returncode == 7, done.stderr
    assert done.stdout == "kept"
    assert mark.read_text() == "ran"


def test_without_ray_the_process_ends_through_the_teardown(tmp_path):
    with pytest.raises(subprocess.TimeoutExpired):  # it waits for the thread
        _run(tmp_path, "none", timeout=5)


def test_a_ray_init_stopped_midway_counts_as_a_driver_started(monkeypatch):
    """Ctrl-C late in ``ray.init`` leaves Ray's driver threads running: the flag is set
    before the call, not after it returns."""
    pytest.importorskip("ray")
    from search.executors import ray_cluster

    class _Ray:
        def init(self, **kwargs):
            raise KeyboardInterrupt

    monkeypatch.setattr(ray_cluster, "_driver_started", False)
    monkeypatch.setattr(ray_cluster, "shutdown", lambda: None)
    with pytest.raises(KeyboardInterrupt):
        ray_cluster._init(_Ray(), "could not start")
    assert ray_cluster.driver_started()


def test_the_console_script_ends_through_exit_process():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'iobound = "search.cli.main:console_main"' in text
