"""README "Hostile input": "A build stopped by --timeout, Ctrl-C or SIGTERM leaves nothing
behind: neither its scratch folder in the cache nor the compiler's temporary files." The
local executor sweeps the scratch folder of the worker it kills
(tests/kernels/test_cache_leftovers.py); the Ray executor cancels a build task past its
timeout (its worker process is killed outright) and left the task's ``.build-*`` folder in
the cache after the run. Reference: the cache folder's entries after the run.

One run in a subprocess with a private local Ray (the fake g++ and the cache must be in
the environment the Ray workers start with). An invalid configuration goes first, so Ray's
worker process is up before the build that hangs is submitted: the timeout need not cover
a worker's start on a loaded machine.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed (pip install 'iobound[distributed]')")

ROOT = Path(__file__).resolve().parents[2]

_SLOW_CXX = textwrap.dedent("""\
    #!/bin/sh
    if [ "$1" = "--version" ]; then echo "g++ (slow fake) 13.0"; exit 0; fi
    case "$*" in *c++-header*) exit 1;; esac
    touch "$(dirname "$0")/started"
    exec sleep 600
    """)

_RUN = textwrap.dedent("""\
    import os
    from iobound.layer import ConvLayer
    from search.executors.options import ExecutorOptions
    from search.executors.ray_executor import RayExecutor
    from search.measure.emulate import EmulateMeasurer

    if __name__ == "__main__":
        layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
        # the timeout counts from the task's submission: an invalid configuration (no g++)
        # starts the worker process the hanging build then runs on
        options = ExecutorOptions(executor="ray", workers=1, timeout_s=8.0, retries=0)
        with RayExecutor(EmulateMeasurer(layer), options) as ex:
            (_, warm), = ex.submit([(0, dict(x=3, y=3, z=2, alpha=1, tx=2, ty=3, tz=1))])
            (_, record), = ex.submit([(1, dict(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1))])
        print(warm.status.value, record.status.value)
    """)


def test_a_ray_build_killed_at_its_timeout_leaves_no_scratch_folder(tmp_path):
    root = tmp_path / "cache"
    slow = tmp_path / "slow" / "g++"
    slow.parent.mkdir()
    slow.write_text(_SLOW_CXX)
    slow.chmod(slow.stat().st_mode | stat.S_IEXEC)
    script = tmp_path / "run.py"
    script.write_text(_RUN)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CXX": str(slow), "IOBOUND_CACHE": str(root)}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         cwd=ROOT, timeout=240, env=env)
    assert out.stdout.split()[-2:] == ["invalid", "timeout"], out.stdout + out.stderr[-2000:]
    assert (slow.parent / "started").exists(), "the build never started: the test proves nothing"
    left = sorted(p.name for p in (root / "emu").iterdir() if p.name.startswith(".build-"))
    assert left == [], f"scratch folders left in the cache after the run: {left}"
