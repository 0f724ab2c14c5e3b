"""The best kernel's .cu (``--out-dir``) written by a process killed mid-write.

``search.winner.write_kernel`` wrote the file in place (``Path.write_text``: truncate,
then write): a run killed while writing it (here by SIGXFSZ, the kernel's signal for a
file past RLIMIT_FSIZE, a kill at an exact byte) leaves a cut-off .cu in place of the
kernel an earlier run had written there, which then does not compile. Every other file
a run writes whole (the exported cache, the network table, ``iobound kernel --emit``)
goes through ``search.outputs.write_atomic``: old file or new file, never part of one.

Reference: the file after the kill is byte for byte the old kernel or the new one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import resource, signal, sys
    from iobound.networks import get_layer
    from search.winner import write_kernel
    layer = get_layer("alexnet.conv2")
    old = dict(x=3, y=27, z=8, alpha=8, tx=1, ty=27, tz=8)
    new = dict(x=27, y=3, z=8, alpha=4, tx=27, ty=3, tz=2)
    if sys.argv[1] == "both":  # the old kernel in out/, the new one's bytes in new/
        write_kernel(layer, old, "direct", "out")
        write_kernel(layer, new, "direct", "new")
    else:   # killed after 1000 bytes of the new kernel
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1000, resource.RLIM_INFINITY))
        write_kernel(layer, new, "direct", "out")
""")


def _run(tmp_path, what):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", SCRIPT, what], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)


def test_a_kill_while_writing_the_best_kernel_leaves_the_old_file_or_the_new(tmp_path):
    assert _run(tmp_path, "both").returncode == 0
    name = "alexnet.conv2_direct_best.cu"
    old = (tmp_path / "out" / name).read_bytes()
    new = (tmp_path / "new" / name).read_bytes()
    assert old != new and len(old) > 1000 and len(new) > 1000
    killed = _run(tmp_path, "kill")
    assert killed.returncode == -signal.SIGXFSZ, killed.stderr
    after = (tmp_path / "out" / name).read_bytes()
    assert after in (old, new), f"a cut-off kernel of {len(after)} bytes"
