"""The analytic model measurer: labelled estimates, invalid configs, monotone sanity."""

from __future__ import annotations

import numpy as np
from hypothesis import given, strategies as st

from iobound.devices import get_device
from iobound.layer import ConvLayer
from kernels.config import check_config, config_from_dict
from search.conv_space import ConvSpace
from search.measure import make_measurer
from kernels.perf_model import estimate_ms
from search.measure.model import ModelMeasurer
from kernels.status import Status

V100 = get_device("v100")
LAYER = ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=32, k_h=3, k_w=3, padding=1)
pos = st.floats(1.0, 1e9, allow_nan=False)
frac = st.floats(0.01, 1.0)


def _space_configs(n=40, seed=0, layer=LAYER):
    space = ConvSpace(layer, V100, pruned=False)
    return [space.get(i) for i in space.sample(n, np.random.default_rng(seed))]


def test_records_are_labelled_estimates():
    """Every ok record is an estimate, labelled so, with a positive time."""
    recs = ModelMeasurer(LAYER, V100).measure(_space_configs())
    assert recs and all(r.status is Status.OK and r.estimate and r.time_ms > 0 for r in recs)
    assert all(r.extra["label"] == "analytic estimate" for r in recs)


def test_toolchain_and_describe_say_estimate():
    """describe() and toolchain() name the output an estimate."""
    m = ModelMeasurer(LAYER, "v100")
    assert "estimate" in m.toolchain() and m.describe()["estimate"] is True


def test_invalid_configs_carry_check_config_reasons():
    """A config failing check_config is 'invalid' with exactly those reasons."""
    cfg = dict(x=16, y=16, z=32, alpha=16, tx=16, ty=16, tz=8)
    reasons = check_config(LAYER, config_from_dict(cfg), V100)
    (rec,) = ModelMeasurer(LAYER, V100).measure([cfg])
    assert reasons and rec.status is Status.INVALID and rec.error == "; ".join(reasons)
    assert rec.time_ms is None


def test_malformed_config_is_invalid():
    """A config missing a knob is reported invalid, not raised."""
    (rec,) = ModelMeasurer(LAYER, V100).measure([{"x": 4}])
    assert rec.status is Status.INVALID and "missing" in rec.error


def test_deterministic():
    """The same configs give the same estimates."""
    cfgs = _space_configs(20, seed=5)
    a = [r.time_ms for r in ModelMeasurer(LAYER, V100).measure(cfgs)]
    b = [r.time_ms for r in ModelMeasurer(LAYER, V100).measure(list(reversed(cfgs)))]
    assert a == list(reversed(b))


def test_registry_builds_it():
    """make_measurer('model', ...) returns a ModelMeasurer."""
    assert isinstance(make_measurer("model", LAYER, "v100"), ModelMeasurer)


@given(io=pos, extra=pos, fl=pos, warps=st.floats(1, 64), ilp=st.floats(1, 128), u=frac)
def test_more_traffic_never_faster(io, extra, fl, warps, ilp, u):
    """Adding traffic does not lower the estimate."""
    assert estimate_ms(io + extra, fl, warps, ilp, u, V100) >= estimate_ms(io, fl, warps, ilp, u, V100)


@given(io=pos, fl=pos, extra=pos, warps=st.floats(1, 64), ilp=st.floats(1, 128), u=frac)
def test_more_flops_never_faster(io, fl, extra, warps, ilp, u):
    """Adding FLOPs does not lower the estimate."""
    assert estimate_ms(io, fl + extra, warps, ilp, u, V100) >= estimate_ms(io, fl, warps, ilp, u, V100)


@given(io=pos, fl=pos, warps=st.floats(1, 64), more=st.floats(0, 64), ilp=st.floats(1, 128),
       u=frac)
def test_more_occupancy_never_slower(io, fl, warps, more, ilp, u):
    """More active warps per SM does not raise the estimate."""
    assert estimate_ms(io, fl, warps + more, ilp, u, V100) <= estimate_ms(io, fl, warps, ilp, u, V100)


@given(io=pos, fl=pos, warps=st.floats(1, 64), ilp=st.floats(1, 128), more=st.floats(0, 64),
       u=frac, du=st.floats(0, 1))
def test_more_ilp_or_utilisation_never_slower(io, fl, warps, ilp, more, u, du):
    """More ILP or better SM utilisation does not raise the estimate."""
    base = estimate_ms(io, fl, warps, ilp, u, V100)
    assert estimate_ms(io, fl, warps, ilp + more, u, V100) <= base
    assert estimate_ms(io, fl, warps, ilp, min(1.0, u + du), V100) <= base


def test_memory_bound_limit_is_bandwidth():
    """With full efficiency and no FLOPs the estimate is traffic / bandwidth + launch."""
    t = estimate_ms(4.5e8, 0.0, 64, 8, 1.0, V100)
    assert abs(float(t) - (4.5e8 / 900e9 * 1e3 + 0.005)) < 1e-12


@given(io=pos, fl=pos, warps=st.floats(1, 64), ilp=st.floats(1, 128), u=frac,
       steps=st.floats(0, 1e6), more=st.floats(0, 1e6))
def test_more_loop_steps_never_faster(io, fl, warps, ilp, u, steps, more):
    """More channel-chunk iterations per SM do not lower the estimate."""
    assert (estimate_ms(io, fl, warps, ilp, u, V100, steps + more)
            >= estimate_ms(io, fl, warps, ilp, u, V100, steps))


def test_larger_alpha_is_not_slower_when_occupancy_is_unchanged():
    """With the same tiles and threads, a larger channel chunk means fewer loop steps."""
    small, large = ModelMeasurer(LAYER, V100).measure(
        [dict(x=8, y=8, z=8, alpha=1, tx=8, ty=8, tz=2), dict(x=8, y=8, z=8, alpha=4, tx=8, ty=8, tz=2)])
    assert small.extra["occupancy"] == large.extra["occupancy"]
    assert large.time_ms < small.time_ms


def _documented_model(layer, device, cfg):
    """kernels/perf_model.py's model, recomputed from its docstring and from numbers that do
    not come from the model: the dataflow's exact traffic, the kernel's executed flops, the
    grid of the tile, and the resident blocks brute-forced from the SM limits."""
    import math

    from dataflow.direct import DirectTiling, direct_io
    from kernels.config import accumulators_per_thread, shared_memory_bytes
    from kernels.kernel_flops import kernel_flops
    from kernels.limits import COMPILED_REGISTERS
    from kernels.perf_model import FMA_PARALLELISM, ILP_CAP, ITERATION_CYCLES, LAUNCH_OVERHEAD_MS, MEMORY_WARPS

    kc = config_from_dict(cfg)
    blocks = layer.n * -(-layer.w_out // kc.x) * -(-layer.h_out // kc.y) * -(-layer.c_out // kc.z)
    threads = kc.tx * kc.ty * kc.tz
    warps = -(-threads // device.warp_size)
    ilp = accumulators_per_thread(layer, kc)
    shared = -(-max(shared_memory_bytes(layer, kc), 1) // 256) * 256  # V100: 256 B units

    def blocks_fit(k, regs):  # a warp's registers in 256s, the file's warps in fours
        return (k <= device.max_blocks_per_sm and k * shared <= device.shared_mem_per_sm_bytes
                and k * warps * device.warp_size <= device.max_threads_per_sm
                and -(-k * warps // 4) * 4 * -(-regs * device.warp_size // 256) * 256
                <= device.registers_per_sm)
    # a depthwise layer's channel loop runs once: ptxas' count follows a leaner line
    a, b, _ = COMPILED_REGISTERS["depthwise" if layer.c_in_per_group == 1 else "direct"]
    # ptxas' estimated count, within what __launch_bounds__ leaves one block
    regs = min(math.ceil(a + b * ilp), max(r for r in range(1, 256) if blocks_fit(1, r)))
    b_sm = max(k for k in range(device.max_blocks_per_sm + 1) if blocks_fit(k, regs))
    resident = min(b_sm, -(-blocks // device.sm_count))        # b
    w_active = resident * warps                                   # W
    v = blocks / (device.sm_count * resident)
    util = v / math.ceil(v)                                       # wave quantisation
    t_mem = 4 * direct_io(layer, DirectTiling(kc.x, kc.y, kc.z, kc.alpha)).total / (device.dram_bandwidth_gbs * 1e9) * 1e3
    t_fp = kernel_flops(layer, kc) / (device.fp32_peak_gflops * 1e9) * 1e3
    fp_eff = min(1.0, w_active * min(ilp, ILP_CAP) / FMA_PARALLELISM)
    mem_eff = min(1.0, w_active / MEMORY_WARPS)
    steps = blocks * -(-layer.c_in_per_group // kc.alpha) / (device.sm_count * resident)
    t_loop = steps * ITERATION_CYCLES / (device.clock_mhz * 1e3)
    occupancy = b_sm * warps / (device.max_threads_per_sm / device.warp_size)
    return dict(time_ms=max(t_mem / mem_eff, t_fp / fp_eff) / util + t_loop + LAUNCH_OVERHEAD_MS,
                sm_utilisation=util, occupancy=occupancy, loop_steps_per_sm=steps)


def test_estimates_follow_the_documented_model():
    """Time, SM utilisation (wave quantisation), occupancy (resident warps over the SM's
    maximum) and loop steps of every record are the model of kernels/perf_model.py's
    docstring, including grids smaller than the GPU (1 and 2 blocks on 80 SMs: b is capped
    by ceil(blocks / sm_count), utilisation is blocks / sm_count) and one block more than a
    wave. Before, only monotonicity was tested: dropping the wave quantisation, the cap of
    b or the warps of the occupancy went unnoticed."""
    import pytest

    small = [dict(x=16, y=16, z=32, alpha=16, tx=16, ty=16, tz=1),   # 1 block
             dict(x=16, y=16, z=16, alpha=4, tx=8, ty=8, tz=2),      # 2 blocks
             dict(x=2, y=2, z=1, alpha=1, tx=1, ty=1, tz=1)]         # 2048 blocks, 1 warp each
    cfgs = small + _space_configs(40, seed=3)
    recs = ModelMeasurer(LAYER, V100).measure(cfgs)
    checked = 0
    for cfg, rec in zip(cfgs, recs):
        if rec.status is not Status.OK:
            continue
        want = _documented_model(LAYER, V100, cfg)
        assert rec.time_ms == pytest.approx(want["time_ms"], rel=1e-9), cfg
        for key in ("sm_utilisation", "occupancy", "loop_steps_per_sm"):
            assert rec.extra[key] == pytest.approx(want[key], rel=1e-9), (key, cfg)
        checked += 1
    assert checked >= 30 and all(r.status is Status.OK for r in recs[:3])
    assert recs[0].extra["sm_utilisation"] == pytest.approx(1 / V100.sm_count)


def test_depthwise_estimates_follow_the_documented_model():
    """A layer of one input channel a group is estimated with the ``depthwise`` register
    row (kernels.limits.register_kind) and otherwise by the same documented model."""
    import pytest

    layer = ConvLayer(n=1, c_in=32, h_in=16, w_in=16, c_out=32, k_h=3, k_w=3, padding=1,
                      groups=32)
    cfgs = _space_configs(40, seed=4, layer=layer)
    recs = ModelMeasurer(layer, V100).measure(cfgs)
    ok = [(c, r) for c, r in zip(cfgs, recs) if r.status is Status.OK]
    assert len(ok) >= 30
    for cfg, rec in ok:
        want = _documented_model(layer, V100, cfg)
        assert rec.time_ms == pytest.approx(want["time_ms"], rel=1e-9), cfg
        assert rec.extra["occupancy"] == pytest.approx(want["occupancy"], rel=1e-9), cfg
