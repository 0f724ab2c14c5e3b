"""The build cache removed by another process (``rm -rf $IOBOUND_CACHE``, a cleanup job)
while a build runs in it: the build's scratch folder goes with it and the compiler cannot
read or write its files. Nothing is wrong with the kernel, yet the emulate measurer
recorded ``compile_error`` and compile_cubin answered one ("could not run the compiler
...: No such file or directory", which the cuda measurer records); ``tune --reuse``
answers a stored compile error from the database ever after ("a configuration that failed
to build will fail again"): the configuration was lost for good. The removal is forced at
the moment the compiler starts (a hook on the compiler call)."""

from __future__ import annotations

import shutil

import pytest

from iobound.layer import ConvLayer
from kernels import emulator_build, nvcc
from kernels.config import DirectConfig
from kernels.generate import generate
from search.measure.emulate import EmulateMeasurer

LAYER = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
CONFIG = dict(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1)


def _remove_at_first_compile(module, root, monkeypatch) -> list:
    """``module.run_compiler`` removes ``root`` as the first compile starts; the list
    returned is non-empty once it has."""
    real, removed = module.run_compiler, []

    def compiler(cmd, **kwargs):
        if "--version" not in cmd and not removed:
            shutil.rmtree(root)
            removed.append(True)
        return real(cmd, **kwargs)

    monkeypatch.setattr(module, "run_compiler", compiler)
    return removed


def test_a_build_whose_cache_is_removed_under_it_is_not_the_kernels_compile_error(
        tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("IOBOUND_CACHE", str(root))
    monkeypatch.setattr(emulator_build, "_pch_dir", lambda *a, **k: None)  # one g++ run per build
    removed = _remove_at_first_compile(emulator_build, root, monkeypatch)
    (record,) = EmulateMeasurer(LAYER).measure([CONFIG])
    assert removed
    assert record.status.value == "ok", record.error[:300]


@pytest.mark.nvcc
def test_a_compile_whose_cache_is_removed_under_it_is_not_the_kernels_error(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    source = generate(LAYER, DirectConfig(**CONFIG))
    removed = _remove_at_first_compile(nvcc, root, monkeypatch)
    result = nvcc.compile_cubin(source, "sm_80", cache_root=root)
    assert removed
    assert result.ok, result.log[-300:]
