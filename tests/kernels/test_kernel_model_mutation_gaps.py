"""Tests found missing by a mutation pass over kernels/ (limits, analytic features, the
time model, nvcc result handling, GPU measurement): each pins one behaviour that a
plausible one-line bug could break while every other test still passed. None compiles:
nvcc is a shell script, the GPU a fake driver (tests/kernels/test_gpu.py's)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from iobound.devices import get_device
from iobound.layer import ConvLayer
from kernels import gpu
from kernels import nvcc as nv
from kernels.config import DirectConfig, WinogradConfig, grid_shape
from kernels.generate import generate
from kernels.status import Status
from tests.kernels.test_gpu import LAYER as GPU_LAYER
from tests.kernels.test_gpu import fake_gpu  # noqa: F401  (the fixture)
from tests.kernels.test_nvcc import _FAKE_COMPILE, _fake_nvcc

# -- CUDA's block limits are inclusive ---------------------------------------------

#: CUDA's documented most threads of a block along x, y, z (every compute capability).
CUDA_BLOCK_DIM = (1024, 1024, 64)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_a_block_exactly_at_cuda_s_axis_limit_fits(axis):
    """A block of 1024 threads along x or y, or 64 along z, is launchable (``<=``, not
    ``<``); one more is not."""
    from kernels.limits import block_fits
    at = [1, 1, 1]
    at[axis] = CUDA_BLOCK_DIM[axis]
    assert bool(block_fits(tuple(at)))
    at[axis] += 1
    assert not bool(block_fits(tuple(at)))


def test_a_config_with_64_threads_along_z_passes_check_config():
    """check_config names no block limit for tz = 64 (CUDA's z limit itself)."""
    from kernels.config import check_config
    layer = ConvLayer(n=1, c_in=1, h_in=3, w_in=3, c_out=64, k_h=3, k_w=3)
    reasons = check_config(layer, DirectConfig(x=1, y=1, z=64, alpha=1, tx=1, ty=1, tz=64), "v100")
    assert not any("block" in r for r in reasons), reasons


# -- the analytic "blocks" feature is the grid's, x on columns, y on rows ----------

def _blocks_brute_force(layer: ConvLayer, x: int, y: int, z: int) -> int:
    """Blocks a grid of x-wide, y-high, z-deep tiles needs: one per tile origin."""
    return (layer.n * len(range(0, layer.w_out, x)) * len(range(0, layer.h_out, y))
            * len(range(0, layer.c_out, z)))


@given(h=st.integers(3, 14), w=st.integers(3, 14), x=st.integers(1, 12), y=st.integers(1, 12),
       n=st.integers(1, 2), algorithm=st.sampled_from(["direct", "winograd"]))
def test_blocks_feature_counts_tiles_along_the_right_axes(h, w, x, y, n, algorithm):
    """analytic_features' ``blocks`` equals the tile origins of a brute-force count and the
    grid of grid_shape, on layers whose width and height differ (x tiles the width)."""
    from kernels.analytic import FEATURE_NAMES, analytic_features

    layer = ConvLayer(n=n, c_in=2, h_in=h, w_in=w, c_out=4, k_h=3, k_w=3)
    if algorithm == "winograd":  # e = 2: tiles are multiples of e within the padded output
        x, y = 2 * min(-(-x // 2), -(-layer.w_out // 2)), 2 * min(-(-y // 2), -(-layer.h_out // 2))
        cfg = WinogradConfig(e=2, x=x, y=y, z=2, tx=1, ty=1, tz=1)
    else:
        x, y = min(x, layer.w_out), min(y, layer.h_out)
        cfg = DirectConfig(x=x, y=y, z=2, alpha=1, tx=1, ty=1, tz=1)
    knobs = np.array([[getattr(cfg, p) for p in cfg.params]])
    blocks = analytic_features(layer, get_device("v100"), algorithm, knobs)[0, FEATURE_NAMES.index("blocks")]
    assert int(blocks) == _blocks_brute_force(layer, x, y, 2) == math.prod(grid_shape(layer, cfg))


# -- the time model's constants are those of MODEL_VERSION -------------------------

def _documented_estimate_ms(io_bytes, flops, warps, ilp, util, dev, steps):
    """kernels/perf_model.py's module doc with its numbers written out (version 6):
    FMA_PARALLELISM 64, ILP_CAP 8, MEMORY_WARPS 16, ITERATION_CYCLES 400, launch 0.005 ms."""
    t_mem = io_bytes / (dev.dram_bandwidth_gbs * 1e9) * 1e3
    t_fp = flops / (dev.fp32_peak_gflops * 1e9) * 1e3
    fp_eff = min(1.0, warps * min(ilp, 8) / 64)
    mem_eff = min(1.0, warps / 16)
    return max(t_mem / mem_eff, t_fp / fp_eff) / util + steps * 400 / (dev.clock_mhz * 1e3) + 0.005


@given(io=st.floats(0, 1e9), flops=st.floats(0, 1e11), warps=st.integers(1, 64),
       ilp=st.integers(1, 64), util=st.floats(0.05, 1.0), steps=st.floats(0, 1e4),
       device=st.sampled_from(["v100", "a100"]))
def test_estimate_ms_is_the_documented_model_of_its_version(io, flops, warps, ilp, util, steps, device):
    """A model constant changed without a new MODEL_VERSION would mix stored estimates of
    two models under one name (search.measure.model.stale_model_toolchain keys on it): the
    estimate of version 6 is the documented formula with the documented numbers (an ILP
    past 8 no longer helps)."""
    from kernels.perf_model import MODEL_VERSION, estimate_ms

    assert MODEL_VERSION == "6", "a new model version: write its numbers out here"
    dev = get_device(device)
    got = float(estimate_ms(io, flops, warps, ilp, util, dev, steps))
    assert got == pytest.approx(_documented_estimate_ms(io, flops, warps, ilp, util, dev, steps),
                                rel=1e-12)


# -- nvcc results --------------------------------------------------------------------

def test_a_compile_that_timed_out_is_not_cached(tmp_path):
    """A compiler timeout says nothing about the kernel: compiled again (with more time or
    a faster machine) it must be compiled, not served the old timeout from the cache."""
    folder = tmp_path / "bin"
    folder.mkdir()
    fake = _fake_nvcc(folder, archs=("80",), body=f'if [ -f "$(dirname "$0")/fast" ]; then '
                      f'{_FAKE_COMPILE}; else sleep 5; fi')
    cache = tmp_path / "cache"
    slow = nv.compile_cubin("int k;", "sm_80", nvcc=str(fake), cache_root=cache, timeout=0.3)
    assert slow.status is Status.TIMEOUT
    (folder / "fast").write_text("")
    again = nv.compile_cubin("int k;", "sm_80", nvcc=str(fake), cache_root=cache, timeout=30)
    assert again.ok and not again.cached, again


def test_a_compiler_that_exits_0_without_a_cubin_is_one_compile_error_with_its_log(tmp_path):
    """nvcc exiting 0 but writing no cubin: a compile_error result carrying the compiler's
    own output, after one run (not a missing-file error retried as a vanished cache)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    fake = _fake_nvcc(folder, archs=("80",),
                      body='echo run >> "$(dirname "$0")/runs"; echo "nvcc: wrote nothing today" >&2')
    res = nv.compile_cubin("int k;", "sm_80", nvcc=str(fake), cache_root=tmp_path / "cache")
    assert res.status is Status.COMPILE_ERROR and "wrote nothing today" in res.log, res.log
    assert (folder / "runs").read_text().count("run") == 1


def test_registers_are_those_of_the_source_s_own_entry(tmp_path):
    """ptxas reports every entry function it compiled; a KernelSource's result takes the
    numbers of its own entry (by name), not of whichever ptxas printed first."""
    src = generate(ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3),
                   DirectConfig(x=4, y=4, z=2, alpha=1, tx=2, ty=2, tz=1))
    folder = tmp_path / "bin"
    folder.mkdir()
    body = ('for a; do out=$a; done; '
            "echo \"ptxas info    : Compiling entry function 'helper' for 'sm_80'\" >&2; "
            'echo "ptxas info    : Used 99 registers, 4096 bytes smem, 0 bytes cmem[0]" >&2; '
            f"echo \"ptxas info    : Compiling entry function '{src.name}' for 'sm_80'\" >&2; "
            'echo "ptxas info    : Used 10 registers, 64 bytes smem, 0 bytes cmem[0]" >&2; '
            'echo cubin > "$out"')
    fake = _fake_nvcc(folder, archs=("80",), body=body)
    res = nv.compile_cubin(src, "sm_80", nvcc=str(fake), cache_root=tmp_path / "cache")
    assert res.ok and (res.registers, res.shared_bytes) == (10, 64), res


# -- GPU measurement (fake driver) -----------------------------------------------------

GOOD = DirectConfig(8, 8, 4, 2, 8, 4, 2)


def test_a_compile_timeout_stays_a_timeout_record(fake_gpu, monkeypatch):  # noqa: F811
    """measure_configs passes the compile's own status on: a compiler that timed out is
    ``timeout`` (retried later), not a ``compile_error`` (the kernel's fault)."""
    fake_gpu("ok")
    monkeypatch.setattr(nv, "compile_many", lambda sources, arch, **kw: [
        nv.CompileResult(status=Status.TIMEOUT, arch=arch, log="compiler timed out", seconds=9.0)
        for _ in sources])
    res = gpu.measure_config(GPU_LAYER, GOOD)
    assert res.status is Status.TIMEOUT and res.compile_seconds == 9.0


def test_a_kernel_timeout_drops_its_context(fake_gpu, monkeypatch):  # noqa: F811
    """A kernel still running when the watchdog gave up (``timeout``, CONTEXT_FATAL) must
    not share its context with the next config: a fresh one is made, as after a
    runtime_error."""
    drv = fake_gpu("ok")
    real, calls = gpu._measure_in_context, []

    def first_times_out(*args):
        calls.append(1)
        return gpu.MeasureResult(status=Status.TIMEOUT, error="watchdog") if len(calls) == 1 \
            else real(*args)

    monkeypatch.setattr(gpu, "_measure_in_context", first_times_out)
    res = gpu.measure_configs(GPU_LAYER, [GOOD, GOOD], gpu.GpuOptions(repeats=2, warmup=0))
    assert [r.status for r in res] == [Status.TIMEOUT, Status.OK]
    assert drv.made_contexts == 2 and drv.contexts == 0
