"""Boundaries and analytic columns found untested by mutation testing (kernels/)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from iobound.devices import get_device
from iobound.layer import ConvLayer
from kernels.analytic import FEATURE_NAMES, analytic_features
from kernels.config import (DirectConfig, WinogradConfig, accumulators_per_thread, check_config,
                            config_from_dict, grid_shape, onchip_words, shared_memory_bytes)
from kernels.limits import GRID_YZ_LIMIT, MAX_ACCUMULATORS_PER_THREAD, fits_register_file, thread_registers

V100 = get_device("v100")


def _features(layer, algorithm, knobs):
    f = analytic_features(layer, V100, algorithm, np.array(knobs))
    return {name: f[:, c] for c, name in enumerate(FEATURE_NAMES)}


# -- check_config: a valid config at each limit is accepted, one past it refused ----------

def test_accumulator_cap_is_inclusive():
    """Exactly MAX_ACCUMULATORS_PER_THREAD register words per thread is allowed; one more is not."""
    layer = ConvLayer(n=1, c_in=1, h_in=16, w_in=16, c_out=MAX_ACCUMULATORS_PER_THREAD + 1, k_h=1, k_w=1)
    at = DirectConfig(x=1, y=1, z=MAX_ACCUMULATORS_PER_THREAD, alpha=1, tx=1, ty=1, tz=1)
    past = DirectConfig(x=1, y=1, z=MAX_ACCUMULATORS_PER_THREAD + 1, alpha=1, tx=1, ty=1, tz=1)
    assert accumulators_per_thread(layer, at) == MAX_ACCUMULATORS_PER_THREAD
    assert check_config(layer, at) == []
    assert any("register words per thread" in r for r in check_config(layer, past))


def test_shared_memory_limit_is_inclusive():
    """A block using exactly the device's shared memory per block fits; 4 bytes more do not."""
    dev = V100
    limit_words = dev.shared_mem_per_block_bytes // 4
    # direct, 1x1 kernel, x=y=1: shared = alpha * 1 + z * alpha words; z=1 -> 2 * alpha
    alpha = limit_words // 2
    layer = ConvLayer(n=1, c_in=alpha + 1, h_in=2, w_in=2, c_out=1, k_h=1, k_w=1)
    at = DirectConfig(x=1, y=1, z=1, alpha=alpha, tx=1, ty=1, tz=1)
    assert shared_memory_bytes(layer, at) == dev.shared_mem_per_block_bytes
    assert check_config(layer, at, dev) == []
    past = DirectConfig(x=1, y=1, z=1, alpha=alpha + 1, tx=1, ty=1, tz=1)
    assert any("shared memory" in r for r in check_config(layer, past, dev))


def test_register_file_fit_is_inclusive():
    """threads * registers exactly equal to the SM's register file fits."""
    words = 64 - thread_registers(0, "direct")  # 64 registers a thread
    assert int(thread_registers(words, "direct")) == 64
    assert bool(fits_register_file(words, 1024, "direct", 64 * 1024))
    assert not bool(fits_register_file(words + 1, 1024, "direct", 64 * 1024))


def test_grid_past_the_z_limit_is_refused():
    """ceil(c_out / z) blocks along grid z beyond GRID_YZ_LIMIT is a reason, not a crash;
    the images are on grid x, so a batch does not count against it."""
    layer = ConvLayer(n=2, c_in=1, h_in=1, w_in=1, c_out=GRID_YZ_LIMIT + 1, k_h=1, k_w=1)
    cfg = DirectConfig(x=1, y=1, z=1, alpha=1, tx=1, ty=1, tz=1)
    assert any("grid" in r and str(GRID_YZ_LIMIT) in r for r in check_config(layer, cfg))
    assert check_config(layer, DirectConfig(x=1, y=1, z=2, alpha=1, tx=1, ty=1, tz=1)) == []  # 32,768
    assert check_config(layer.replace(n=1 << 16, c_out=GRID_YZ_LIMIT), cfg) == []


def test_grid_x_holds_every_image_and_tile_column():
    """Grid x is n * ceil(w_out / x) (2**31 - 1 allowed): the largest batch and the widest
    output the layer limits allow (8,192 columns padded by 8,192 on each side)."""
    layer = ConvLayer(n=1 << 16, c_in=1, h_in=1, w_in=1 << 13, c_out=1, k_h=1, k_w=1,
                      padding=(0, 1 << 13))
    cfg = DirectConfig(x=1, y=1, z=1, alpha=1, tx=1, ty=1, tz=1)
    assert grid_shape(layer, cfg) == (3 << 29, 1, 1) and check_config(layer, cfg) == []


@given(e=st.sampled_from([2, 3, 4]), x=st.integers(1, 12), y=st.integers(1, 12))
def test_winograd_tiles_must_be_multiples_of_e_on_both_axes(e, x, y):
    """A Winograd tile whose x or y is no multiple of e is refused (threads 1, so only that can fail)."""
    layer = ConvLayer(n=1, c_in=1, h_in=16, w_in=16, c_out=1, k_h=3, k_w=3, padding=1)
    reasons = check_config(layer, WinogradConfig(e=e, x=x, y=y, z=1, tx=1, ty=1, tz=1))
    bad = [axis for axis, v in (("x", x), ("y", y)) if v % e]
    for axis in bad:
        assert any(r.startswith(f"{axis}=") and f"multiple of e={e}" in r for r in reasons), reasons
    if not bad:
        assert not any("multiple of e" in r for r in reasons)


def test_grouped_alpha_may_equal_the_group_s_input_channels():
    """alpha == c_in / groups is a valid chunk (one chunk a group); alpha above it is refused."""
    layer = ConvLayer(n=1, c_in=6, h_in=6, w_in=6, c_out=6, k_h=3, k_w=3, padding=1, groups=3)
    assert check_config(layer, DirectConfig(x=2, y=2, z=2, alpha=2, tx=2, ty=2, tz=1)) == []
    assert check_config(layer, DirectConfig(x=2, y=2, z=2, alpha=3, tx=2, ty=2, tz=1)) != []


# -- analytic features -----------------------------------------------------------------

LAYER = ConvLayer(n=2, c_in=5, h_in=9, w_in=9, c_out=6, k_h=3, k_w=3, padding=1)
WINO = ConvLayer(n=1, c_in=3, h_in=10, w_in=10, c_out=4, k_h=3, k_w=3, padding=1)


@given(x=st.integers(1, 9), y=st.integers(1, 9), z=st.integers(1, 6), alpha=st.integers(1, 5),
       tx=st.integers(1, 8), ty=st.integers(1, 8), tz=st.integers(1, 4))
def test_io_over_compulsory_and_ilp(x, y, z, alpha, tx, ty, tz):
    """io_over_compulsory divides by every input, weight and output once; ilp is the
    register words per thread rounded up (kernels.config.accumulators_per_thread),
    whether or not the threads divide the tile."""
    f = _features(LAYER, "direct", [[x, y, z, alpha, tx, ty, tz]])
    compulsory = LAYER.input_size + LAYER.weight_size + LAYER.output_size
    assert f["io_over_compulsory"][0] == pytest.approx(f["io_words"][0] / compulsory)
    cfg = DirectConfig(x=x, y=y, z=z, alpha=alpha, tx=tx, ty=ty, tz=tz)
    assert f["ilp"][0] == accumulators_per_thread(LAYER, cfg)


@pytest.mark.parametrize("knobs", [[2, 4, 4, 1, 1, 1, 1], [2, 6, 6, 1, 1, 1, 1], [3, 6, 3, 1, 1, 1, 1]])
def test_winograd_io_over_bound_uses_the_config_e(knobs):
    """io_over_bound divides by the best lower bound with the config's own e (knob 0)."""
    from iobound.report import best_lower_bound

    layer = ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=16, k_h=3, k_w=3, padding=1)
    f = _features(layer, "winograd", [knobs])
    cfg = config_from_dict(dict(zip(WinogradConfig.params, knobs)), "winograd")
    s_words = onchip_words(layer, cfg)
    bound = best_lower_bound(layer, s_words, "winograd", cfg.e)
    assert bound != best_lower_bound(layer, s_words, "winograd", cfg.x)  # e matters here
    assert f["io_over_bound"][0] == pytest.approx(f["io_words"][0] / bound)


@pytest.mark.parametrize("knobs", [[3, 3, 2, 1, 1, 1, 1], [9, 1, 6, 5, 3, 1, 2]])
def test_direct_io_over_bound_is_over_the_bound_not_the_compulsory_traffic(knobs):
    """io_over_bound divides by the best lower bound at the block's on-chip words."""
    from iobound.report import best_lower_bound

    layer = ConvLayer(n=1, c_in=16, h_in=12, w_in=12, c_out=16, k_h=3, k_w=3, padding=1)
    f = _features(layer, "direct", [knobs])
    cfg = config_from_dict(dict(zip(DirectConfig.params, knobs)), "direct")
    bound = best_lower_bound(layer, onchip_words(layer, cfg), "direct")
    compulsory = layer.input_size + layer.weight_size + layer.output_size
    assert bound != compulsory
    assert f["io_over_bound"][0] == pytest.approx(f["io_words"][0] / bound)


def test_perf_model_ilp_beyond_the_cap_does_not_help():
    """estimate_ms: more than ILP_CAP accumulators per thread is worth no more than ILP_CAP."""
    from kernels.perf_model import ILP_CAP, estimate_ms

    args = dict(io_bytes=0.0, flops=1e9, active_warps=2, utilisation=1.0, device=V100)
    assert float(estimate_ms(ilp=4 * ILP_CAP, **args)) == float(estimate_ms(ilp=ILP_CAP, **args))
    assert float(estimate_ms(ilp=ILP_CAP, **args)) < float(estimate_ms(ilp=ILP_CAP // 2, **args))


@pytest.mark.parametrize("x,y", [(1, 1), (3, 5)])
def test_default_thread_block_of_a_tile_not_a_multiple_of_e(x, y):
    """Winograd spans are ceil(x / e), ceil(y / e): never an empty span (a crash), and
    the block divides them; the config is then refused by check_config, not here."""
    from kernels.thread_block import default_thread_block

    block = default_thread_block({"e": 2, "x": x, "y": y, "z": 1})
    assert block == {"tx": -(-x // 2), "ty": -(-y // 2), "tz": 1}


def test_waves_stay_finite_when_no_block_fits():
    """A block that fits no SM (blocks_per_sm 0) still gets finite waves (blocks / SMs)."""
    layer = ConvLayer(n=1, c_in=64, h_in=64, w_in=64, c_out=64, k_h=3, k_w=3, padding=1)
    f = _features(layer, "direct", [[64, 64, 1, 8, 32, 32, 1]])  # 1024 threads x 64 acc regs
    assert f["blocks_per_sm"][0] == 0
    assert np.isfinite(f["waves"][0])
    assert f["waves"][0] == pytest.approx(f["blocks"][0] / V100.sm_count)


# -- verify: each of the three checks can fail the run on its own ---------------------

def _tampered(monkeypatch, loads=0, stores=0, scale=1):
    import dataclasses

    import kernels.verify as verify

    real = verify.emulate

    def fake(*args, **kwargs):
        run = real(*args, **kwargs)
        return dataclasses.replace(run, global_loads=run.global_loads * scale + loads,
                                   global_stores=run.global_stores * scale + stores)
    monkeypatch.setattr(verify, "emulate", fake)
    return verify


SMALL = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
SMALL_CFG = DirectConfig(x=2, y=2, z=1, alpha=1, tx=2, ty=2, tz=1)


@pytest.mark.parametrize("loads,stores", [(0, 1), (1, 0), (0, -1)])
def test_traffic_mismatch_in_loads_or_stores_fails_the_check(monkeypatch, loads, stores):
    verify = _tampered(monkeypatch, loads, stores)
    chk = verify.emulate_and_check(SMALL, SMALL_CFG)
    assert chk.numerics_ok and not chk.traffic_matches and not chk.ok


def test_flops_other_than_the_model_s_fail_the_check(monkeypatch):
    """The kernel executes the model's flops; a model off by one operation fails the check."""
    from kernels import verify

    chk = verify.emulate_and_check(SMALL, SMALL_CFG)
    assert chk.ok and chk.flops_matches and chk.flops == chk.expected_flops > 0
    monkeypatch.setattr(verify, "kernel_flops", lambda layer, config: chk.flops + 1)
    off = verify.emulate_and_check(SMALL, SMALL_CFG)
    assert off.numerics_ok and off.traffic_matches and off.above_lower_bound
    assert off.flops == chk.flops and not off.flops_matches and not off.ok


def test_traffic_below_the_lower_bound_fails_the_check(monkeypatch):
    """Below the bound fails even when the counts equal the formula (here a zero formula)."""
    from dataflow.io_volume import DataflowIO

    verify = _tampered(monkeypatch, scale=0)
    chk = verify.emulate_and_check(SMALL, SMALL_CFG)
    assert chk.lower_bound > 0 and not chk.above_lower_bound and not chk.ok
    monkeypatch.setattr(verify, "expected_io", lambda layer, config: DataflowIO.of(0, 0, 0))
    chk = verify.emulate_and_check(SMALL, SMALL_CFG)
    assert chk.numerics_ok and chk.traffic_matches and not chk.above_lower_bound and not chk.ok


def test_a_signal_killed_compiler_is_never_the_kernel_s_fault():
    """Even when the log already names an error at a source line, a compiler killed by a
    signal (negative return code) may pass on a retry: not cached."""
    from kernels.nvcc import kernel_at_fault

    text = 'kernel.cu(12): error: identifier "q" is undefined'
    assert kernel_at_fault(1, text)
    assert not kernel_at_fault(-9, text) and not kernel_at_fault(0, text)


def test_an_nvcc_tool_dying_is_not_the_kernel_s_fault():
    """nvcc's own 'error' about a sub-tool killed (out of memory) names no source line."""
    from kernels.nvcc import kernel_at_fault

    assert not kernel_at_fault(1, "nvcc error   : 'cicc' died due to signal 9 (Kill signal)")
    assert kernel_at_fault(1, "ptxas error   : Entry function 'k' uses too much shared data")


@given(x=st.integers(1, 8), y=st.integers(1, 8), z=st.integers(1, 8),
       tx=st.integers(1, 8), ty=st.integers(1, 8), tz=st.integers(1, 8))
def test_direct_threads_must_divide_their_own_tile_axis(x, y, z, tx, ty, tz):
    """The divisibility reasons are exactly the axes whose thread count does not divide
    that axis' tile (brute force over each axis; a block that divides all is accepted)."""
    layer = ConvLayer(n=1, c_in=1, h_in=8, w_in=8, c_out=8, k_h=1, k_w=1)
    reasons = check_config(layer, DirectConfig(x=x, y=y, z=z, alpha=1, tx=tx, ty=ty, tz=tz))
    expected = [f"{tn}={tv} must divide {n}={v}"
                for tn, tv, n, v in (("tx", tx, "x", x), ("ty", ty, "y", y), ("tz", tz, "z", z)) if v % tv]
    assert [r for r in reasons if "must divide" in r] == expected
    if not expected:  # accepted, unless one thread holds more accumulators than the cap
        acc = (x // tx) * (y // ty) * (z // tz)
        assert reasons == ([] if acc <= MAX_ACCUMULATORS_PER_THREAD else
                           [f"{acc} register words per thread exceed the cap of "
                            f"{MAX_ACCUMULATORS_PER_THREAD}"])


@given(e=st.sampled_from([2, 3]), xt=st.integers(1, 3), yt=st.integers(1, 3), z=st.integers(1, 4),
       tx=st.integers(1, 3), ty=st.integers(1, 3), tz=st.integers(1, 4))
def test_winograd_threads_must_divide_their_own_span(e, xt, yt, z, tx, ty, tz):
    layer = ConvLayer(n=1, c_in=1, h_in=12, w_in=12, c_out=4, k_h=3, k_w=3, padding=1)
    reasons = check_config(layer, WinogradConfig(e=e, x=xt * e, y=yt * e, z=z, tx=tx, ty=ty, tz=tz))
    expected = [f"{tn}={tv} must divide {n}={v}"
                for tn, tv, n, v in (("tx", tx, "x/e", xt), ("ty", ty, "y/e", yt), ("tz", tz, "z", z)) if v % tv]
    assert [r for r in reasons if "must divide" in r] == expected


@pytest.mark.parametrize("layer, cfg", [
    # alpha=2 does not divide c_in/G=3: the last chunk of group 0 must not read group 1's channel
    (ConvLayer(n=1, c_in=6, h_in=5, w_in=5, c_out=4, k_h=3, k_w=3, padding=1, groups=2),
     DirectConfig(x=5, y=5, z=2, alpha=2, tx=5, ty=1, tz=1)),
    (ConvLayer(n=1, c_in=9, h_in=4, w_in=4, c_out=3, k_h=1, k_w=1, groups=3),
     DirectConfig(x=4, y=4, z=1, alpha=2, tx=2, ty=2, tz=1)),
])
def test_grouped_chunks_stay_inside_their_group(layer, cfg):
    _assert_emulates_exactly(layer, cfg)


def _assert_emulates_exactly(layer, cfg) -> None:
    """``cfg`` is valid for ``layer``, its emulated kernel matches numpy and moves exactly
    the traffic of its formula."""
    from kernels.verify import emulate_and_check

    assert check_config(layer, cfg) == []
    chk = emulate_and_check(layer, cfg, with_bound=False)
    assert chk.numerics_ok, (chk.max_abs_err, chk.worst_ratio)
    assert (chk.global_loads, chk.global_stores) == (chk.expected_loads, chk.expected_stores)


@pytest.mark.nvcc
def test_a_moved_cache_serves_no_stale_cubin_path(tmp_path):
    """A cached OK record is used only when it names the cubin beside it: after the cache
    folder moves, the result's cubin_path is the new (existing) file, never the old one."""
    import os
    import shutil

    from kernels import nvcc as nv

    code = 'extern "C" __global__ void k(float* p) { p[threadIdx.x] = 1.0f; }'
    first = nv.compile_cubin(code, "sm_80", cache_root=tmp_path / "a")
    assert first.ok
    shutil.move(tmp_path / "a", tmp_path / "b")
    second = nv.compile_cubin(code, "sm_80", cache_root=tmp_path / "b")
    assert second.ok and second.cubin_path.startswith(str(tmp_path / "b"))
    assert os.path.exists(second.cubin_path)


def test_emulator_launch_limits_are_inclusive():
    """The emulator takes exactly CUDA_MAX_THREADS_PER_BLOCK threads a block and exactly
    MAX_TOTAL_THREADS in all; one block or one thread more is refused (the header's limits
    are Python's)."""
    import dataclasses

    from iobound.errors import InvalidInputError
    from iobound.device_spec import CUDA_MAX_THREADS_PER_BLOCK
    from kernels.emulator import MAX_TOTAL_THREADS, check_launch
    from kernels.generate import generate

    layer = ConvLayer(n=1, c_in=1, h_in=32, w_in=32, c_out=1, k_h=1, k_w=1)
    src = generate(layer, DirectConfig(x=32, y=32, z=1, alpha=1, tx=32, ty=32, tz=1))
    assert src.threads == CUDA_MAX_THREADS_PER_BLOCK
    check_launch(src)
    with pytest.raises(InvalidInputError):
        check_launch(dataclasses.replace(src, block=(32, 32, 2)))
    blocks = MAX_TOTAL_THREADS // CUDA_MAX_THREADS_PER_BLOCK
    check_launch(dataclasses.replace(src, grid=(blocks, 1, 1)))
    with pytest.raises(InvalidInputError):
        check_launch(dataclasses.replace(src, grid=(blocks + 1, 1, 1)))


def test_emulator_header_limits_are_pythons():
    """cuda_emu.h refuses launches by its own constants; they are the ones Python checks
    (iobound.device_spec's CUDA block limit, kernels.limits' per-axis limit, the emulator's
    total), so a launch Python lets through is one the header runs."""
    import re

    from iobound.device_spec import CUDA_MAX_THREADS_PER_BLOCK
    from kernels.emulator import HEADER, MAX_TOTAL_THREADS
    from kernels.limits import MAX_BLOCK_DIM

    text = HEADER.read_text()
    per_block = re.search(r"kMaxThreadsPerBlock = (\d+);", text)
    per_axis = re.search(r"kMaxBlockDim\[3\] = \{(\d+), (\d+), (\d+)\};", text)
    total = re.search(r"kMaxTotalThreads = 1ull << (\d+);", text)
    assert per_block and per_axis and total, "cuda_emu.h no longer spells its limits as read here"
    assert int(per_block.group(1)) == CUDA_MAX_THREADS_PER_BLOCK
    assert tuple(map(int, per_axis.groups())) == MAX_BLOCK_DIM
    assert 1 << int(total.group(1)) == MAX_TOTAL_THREADS


@pytest.mark.parametrize("layer, cfg", [
    # asymmetric padding: rows and columns padded differently
    (ConvLayer(n=1, c_in=2, h_in=6, w_in=7, c_out=2, k_h=3, k_w=3, padding=(1, 0)),
     WinogradConfig(e=2, x=4, y=4, z=2, tx=2, ty=2, tz=1)),
    (ConvLayer(n=1, c_in=2, h_in=7, w_in=6, c_out=2, k_h=3, k_w=3, padding=(0, 2)),
     WinogradConfig(e=2, x=4, y=4, z=1, tx=1, ty=2, tz=1)),
    # several Winograd tiles per thread along both axes and several threads (XW, YW, TX, TY > 1)
    (ConvLayer(n=1, c_in=2, h_in=10, w_in=10, c_out=1, k_h=3, k_w=3, padding=1),
     WinogradConfig(e=2, x=8, y=8, z=1, tx=2, ty=2, tz=1)),
])
def test_winograd_kernel_on_asymmetric_padding_and_several_tiles_per_thread(layer, cfg):
    _assert_emulates_exactly(layer, cfg)
