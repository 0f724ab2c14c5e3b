"""Compiling on a machine without nvcc (the lookup monkeypatched to find none).

With only the CUDA 12 wheels' NVRTC + ptxas, an arch they cannot target is a compile_error
that (as ``compile_cubin`` promises) says which arches exist: it said only
"no nvcc found supports sm_35." With no CUDA compiler at all it is the one clean
ToolchainError, for any arch.
"""

from __future__ import annotations

import pytest

import kernels.nvcc as nv
import kernels.toolchains
from iobound.errors import ToolchainError
from kernels import nvrtc
from kernels.status import Status

NVRTC = nvrtc.NvrtcToolchain(nvrtc="/wheels/libnvrtc.so.12", ptxas="/wheels/ptxas", version_text="",
                             release="12.9", archs=("sm_70", "sm_80"))


def _no_nvcc(monkeypatch, nvrtc_toolchain):
    for module in (kernels.toolchains, nv):
        monkeypatch.setattr(module, "nvcc_candidates", lambda: [])
    monkeypatch.setattr(nvrtc, "find_nvrtc_toolchain",
                        lambda arch=None: None if nvrtc_toolchain is None or (
                            arch is not None and not nvrtc_toolchain.supports(arch)) else nvrtc_toolchain)
    assert nv.find_nvcc() is None


def test_an_arch_nvrtc_cannot_target_lists_the_arches_it_can(monkeypatch, tmp_path):
    _no_nvcc(monkeypatch, NVRTC)
    res = nv.compile_cubin("int k;", "sm_35", cache_root=tmp_path)
    assert res.status is Status.COMPILE_ERROR
    assert "sm_70" in res.log and "sm_80" in res.log, res.log


@pytest.mark.parametrize("arch", ["sm_35", "sm_70", "sm_80"])
def test_no_cuda_compiler_at_all_is_a_toolchain_error(monkeypatch, tmp_path, arch):
    _no_nvcc(monkeypatch, None)
    with pytest.raises(ToolchainError, match="nvcc not found"):
        nv.compile_cubin("int k;", arch, cache_root=tmp_path)
