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


def _space_configs(n=40, seed=0):
    space = ConvSpace(LAYER, V100, pruned=False)
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
