"""Run Python without root's override of file permissions, for tests of permission refusals.

Root writes any file, so a refusal by a file's or a folder's mode is only seen without
CAP_DAC_OVERRIDE: :func:`run_python` runs a snippet under ``setpriv`` dropping it (as
root), or plainly (as anyone else), and skips the test where that cannot be arranged.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=1)
def _prefix() -> tuple[str, ...] | str:
    """The command prefix, or the reason none works here."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return "setpriv (util-linux) is not installed: cannot drop root's permission override"
    prefix = (setpriv, "--bounding-set=-dac_override,-dac_read_search")
    with tempfile.TemporaryDirectory() as d:  # does dropping it take effect here?
        probe = Path(d) / "ro"
        probe.write_text("")
        probe.chmod(0o444)
        got = subprocess.run([*prefix, sys.executable, "-c",
                              f"import os; print(os.access({str(probe)!r}, os.W_OK))"],
                             capture_output=True, text=True)
    if got.returncode != 0 or got.stdout.strip() != "False":
        return "cannot drop root's permission override here (setpriv refused or had no effect)"
    return prefix


def run_python(code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``code`` run by this Python, without the permission override, the project importable."""
    prefix = _prefix()
    if isinstance(prefix, str):
        pytest.skip(prefix)
    return subprocess.run([*prefix, sys.executable, "-c", code, *args], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT,
                          timeout=timeout)
