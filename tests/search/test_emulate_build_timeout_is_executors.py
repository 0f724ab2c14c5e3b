"""An executor's build of an ``emulate`` configuration is limited by the executor's
``--timeout`` (which kills the worker and its compiler), not by ``build_emulator``'s own
120-s default: with ``--timeout 400`` a 125-s g++ run was recorded as ``compile_error``
("g++ timed out after 120.0 s") after two such builds (242 s). Scaled down here: the
builder's default limit is made 1 s and the compiler takes ~2 s; the build stage must
still deliver the library."""

import shutil
import stat
import textwrap

import pytest

import kernels.emulator as emulator
from iobound.layer import ConvLayer
from search.executors.emulate_stages import EmulateStages
from search.measure.emulate import EmulateMeasurer


@pytest.mark.skipif(not shutil.which("g++"), reason="needs g++")
def test_emulate_build_stage_not_cut_by_builder_default(tmp_path, monkeypatch):
    slow = tmp_path / "slowgxx"
    slow.write_text(textwrap.dedent("""\
        #!/bin/bash
        for a in "$@"; do case "$a" in *kernel.cu) sleep 2;; esac; done
        exec g++ "$@"
        """))
    slow.chmod(slow.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("CXX", str(slow))
    monkeypatch.setenv("IOBOUND_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(emulator.build_emulator, "__defaults__", (None, 1.0))  # the cap, scaled
    layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
    stages = EmulateStages.of(EmulateMeasurer(layer))
    art = stages.build(dict(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1))
    assert art.payload is not None, "the build stage's compile was cut by build_emulator's default"
