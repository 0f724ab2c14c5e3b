"""The cuda measurer on a machine without nvcc (or without a GPU).

Its toolchain label names the compiler its kernels are built with.

``compile_cubin`` builds for GPU 0's arch with :func:`kernels.nvcc.find_toolchain`: an nvcc
supporting that arch, else NVRTC + ptxas of the CUDA 12 wheels (the ``volta`` extra). The
label (``CudaMeasurer.toolchain()``, the key ``--reuse`` and the history match "this
toolchain" on) said ``nvcc missing`` on a GPU machine without nvcc, where every kernel was
compiled by the wheels' NVRTC, and the first nvcc's release where that nvcc cannot target the
GPU (CUDA 13 on a V100). A stand-in driver and toolchain lookups simulate the machine.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import kernels.nvcc
import kernels.toolchains
from kernels import nvrtc
from kernels.toolchains import Toolchain
from search.measure.cuda import CudaMeasurer

NVRTC = nvrtc.NvrtcToolchain(nvrtc="/wheels/libnvrtc.so.12", ptxas="/wheels/ptxas", version_text="",
                             release="12.9", archs=("sm_70", "sm_80"))
CUDA13 = Toolchain(path="/opt/cuda-13/bin/nvcc", version_text="", release="13.0", archs=("sm_80", "sm_90"))


def _fake_driver(cc):
    dev = SimpleNamespace(name=lambda: "Fake GPU", compute_capability=lambda: cc)
    return SimpleNamespace(init=lambda: None, Device=lambda i: dev)


@pytest.mark.parametrize("nvccs, cc", [([], (8, 0)), ([CUDA13], (7, 0))],
                         ids=["no-nvcc", "nvcc-without-the-arch"])
def test_label_is_the_toolchain_that_compiles(monkeypatch, nvccs, cc):
    by_path = {t.path: t for t in nvccs}
    monkeypatch.setattr("kernels.gpu.import_pycuda", lambda: _fake_driver(cc))
    monkeypatch.setattr(kernels.toolchains, "nvcc_candidates", lambda: list(by_path))
    for module in (kernels.toolchains, kernels.nvcc):
        monkeypatch.setattr(module, "toolchain", lambda p: by_path[p])
    monkeypatch.setattr(nvrtc, "find_nvrtc_toolchain",
                        lambda arch=None: NVRTC if arch is None or NVRTC.supports(arch) else None)
    arch = f"sm_{cc[0]}{cc[1]}"
    used = kernels.nvcc.find_toolchain(arch)
    assert used is NVRTC  # what compile_cubin builds this GPU's kernels with
    label = CudaMeasurer(layer=None).toolchain()
    assert "missing" not in label and "13.0" not in label, label
    assert NVRTC.release in label, label


def test_tune_measure_cuda_without_a_gpu_names_no_gpu_none(monkeypatch):
    """``iobound tune --measure cuda`` on a machine without a GPU printed
    "device V100-SXM2 (no preset for None; default limits)" before failing: there is no GPU
    named None, there is no GPU here to read."""
    import argparse

    from search.cli.measure_args import device_for
    monkeypatch.setattr("search.measure.cuda.gpu_name", lambda: None)
    device, note = device_for(argparse.Namespace(device=None), "cuda")
    assert "None" not in note, note
