"""Ctrl-C or SIGTERM while ``iobound`` starts (importing SymPy and the subcommands, most
of a second) is the README's clean exit 130 with one line, never a traceback or a silent
143: the console script imports ``search.cli.main`` before ``main`` can set the signal
handlers, so that import must not reach the heavy modules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# what the console script does, with a signal sent as SymPy starts to import
CHILD = r"""
import os, signal, sys
from search.cli.main import main
heavy = [m for m in ("sympy", "numpy", "iobound") if m in sys.modules]
if heavy:
    sys.exit(f"imported before main: {heavy}")

class SignalAtSympy:
    def find_spec(self, name, path=None, target=None):
        if name == "sympy":
            os.kill(os.getpid(), signal.%s)
        return None

sys.meta_path.insert(0, SignalAtSympy())
sys.exit(main(["tune", "--layer", "resnet18.conv4_1b", "--no-verify", "--measure", "model",
               "--budget", "64"]))
"""


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_while_sympy_imports_is_one_line_and_130(sig):
    r = subprocess.run([sys.executable, "-c", CHILD % sig], capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert r.returncode == 130, (r.returncode, r.stderr[-2000:])
    assert r.stderr == "iobound: interrupted\n"
