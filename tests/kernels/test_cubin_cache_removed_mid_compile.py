"""The cubin cache removed by another process while nvcc compiles in it (its scratch
folder goes with it): the kernel compiles, yet compile_cubin answered ``compile_error``
("could not run the compiler ...: No such file or directory"), which the cuda measurer
records, and ``tune --reuse`` answers from the database ever after. The removal is forced
when the compiler is started (a hook on the compiler call)."""

from __future__ import annotations

import shutil

import pytest

from iobound.layer import ConvLayer
from kernels import nvcc
from kernels.config import DirectConfig
from kernels.generate import generate

pytestmark = pytest.mark.nvcc


def test_a_compile_whose_cache_is_removed_under_it_is_not_the_kernels_error(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
    source = generate(layer, DirectConfig(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1))
    real, removed = nvcc.run_compiler, []

    def compiler(cmd, **kwargs):
        if "--version" not in cmd and not removed:  # the first compile: the cache goes now
            shutil.rmtree(root)
            removed.append(True)
        return real(cmd, **kwargs)

    monkeypatch.setattr(nvcc, "run_compiler", compiler)
    result = nvcc.compile_cubin(source, "sm_80", cache_root=root)
    assert removed
    assert result.ok, result.log[-300:]
