"""Analytic features against the dataflow and kernel-config functions they summarise."""

from __future__ import annotations

import numpy as np

from dataflow.direct import DirectTiling, direct_io
from dataflow.winograd import WinogradTiling, winograd_io
from iobound.devices import get_device
from iobound.layer import ConvLayer
from kernels.analytic import FEATURE_NAMES, analytic_features
from kernels.config import config_from_dict, grid_shape, onchip_words, shared_memory_bytes
from search.conv_space import ConvSpace

V100 = get_device("v100")
LAYER = ConvLayer(n=2, c_in=8, h_in=14, w_in=14, c_out=16, k_h=3, k_w=3, padding=1)
WINO = ConvLayer(n=1, c_in=4, h_in=13, w_in=13, c_out=8, k_h=3, k_w=3, padding=1)


def _feats(space, n=60, seed=0):
    idx = space.sample(n, np.random.default_rng(seed))
    knobs = np.array([[space.get(i)[p] for p in space.params] for i in idx])
    f = analytic_features(space.layer, space.device, space.algorithm, knobs)
    return knobs, {name: f[:, c] for c, name in enumerate(FEATURE_NAMES)}


def test_io_matches_direct_io():
    """io_words equals dataflow.direct.direct_io of each row's tiling."""
    space = ConvSpace(LAYER, V100)
    knobs, f = _feats(space)
    expected = [direct_io(LAYER, DirectTiling(*map(int, k[:4]))).total for k in knobs]
    assert f["io_words"].tolist() == expected


def test_io_matches_winograd_io():
    """Winograd io_words equals dataflow.winograd.winograd_io (clipped tiles too)."""
    space = ConvSpace(WINO, V100, "winograd")
    knobs, f = _feats(space)
    expected = [winograd_io(WINO, WinogradTiling(*map(int, k[:4]))).total for k in knobs]
    assert f["io_words"].tolist() == expected


def test_sizes_match_kernel_config():
    """Shared bytes, footprint and block count equal the kernel-config functions."""
    space = ConvSpace(LAYER, V100)
    knobs, f = _feats(space)
    cfgs = [config_from_dict(dict(zip(space.params, map(int, k)))) for k in knobs]
    assert f["shared_bytes"].tolist() == [shared_memory_bytes(LAYER, c) for c in cfgs]
    assert f["footprint_words"].tolist() == [onchip_words(LAYER, c) for c in cfgs]
    assert f["blocks"].tolist() == [float(np.prod(grid_shape(LAYER, c))) for c in cfgs]
    assert f["threads"].tolist() == [c.threads for c in cfgs]


def test_blocks_per_sm_is_the_largest_that_fits():
    """blocks_per_sm respects every SM limit and one more block would break one."""
    space = ConvSpace(LAYER, V100, pruned=False)
    _, f = _feats(space, n=200)
    b, warps = f["blocks_per_sm"], np.ceil(f["threads"] / 32)
    shared = np.ceil(np.maximum(f["shared_bytes"], 1) / 256) * 256   # V100: 256 B units
    warp_regs = np.ceil(f["regs_per_thread"] * 32 / 256) * 256        # a warp's, in 256s

    def fits(k):
        return ((k <= V100.max_blocks_per_sm) & (k * shared <= V100.shared_mem_per_sm_bytes)
                & (k * warps * 32 <= V100.max_threads_per_sm)
                & (np.ceil(k * warps / 4) * 4 * warp_regs <= V100.registers_per_sm))

    assert fits(b).all() and not fits(b + 1).any()
    assert ((f["occupancy"] > 0) & (f["occupancy"] <= 1)).all()
    # occupancy is resident warps over the SM's maximum warps (not blocks over max blocks,
    # not threads over max threads: a 33-thread block occupies two warps)
    max_warps = V100.max_threads_per_sm // V100.warp_size
    assert np.allclose(f["occupancy"], b * np.ceil(f["threads"] / V100.warp_size) / max_warps, rtol=1e-12)
    assert (np.ceil(f["threads"] / 32) * 32 != f["threads"]).any()   # the rounding is exercised


def test_waves_and_intensity():
    """waves = blocks / (SMs * blocks_per_sm); intensity = flops / traffic bytes."""
    _, f = _feats(ConvSpace(LAYER, V100))
    assert np.allclose(f["waves"], f["blocks"] / (V100.sm_count * f["blocks_per_sm"]))
    assert np.allclose(f["intensity"], f["flops"] / (4 * f["io_words"]))
    assert (f["flops"] == 2 * LAYER.macs).all()


def test_winograd_executes_fewer_flops_than_direct_whatever_the_threads():
    """F(2x2, 3x3) on a wide layer needs fewer FLOPs than direct convolution: the block's
    threads share each kernel and tile transform (tests/kernels/test_kernel_flops.py
    counts them), so 1 x 1 x 4 and 4 x 4 x 4 threads execute the same count."""
    layer = ConvLayer(n=1, c_in=64, h_in=16, w_in=16, c_out=64, k_h=3, k_w=3, padding=1)
    f = analytic_features(layer, V100, "winograd", np.array([[2, 8, 8, 16, 1, 1, 4],
                                                              [2, 8, 8, 16, 4, 4, 4]]))
    few, many = f[:, FEATURE_NAMES.index("flops")]
    assert few == many < 2 * layer.macs




def test_an_algorithm_object_gives_its_names_features():
    """``analytic_features`` takes an Algorithm as ``kernel_family`` does, not only a name."""
    from iobound.algorithms import get_algorithm
    for name, layer in (("direct", LAYER), ("winograd", WINO)):
        space = ConvSpace(layer, V100, name)
        knobs = np.array([[space.get(i)[p] for p in space.params] for i in range(0, len(space), 97)])
        assert np.array_equal(analytic_features(layer, V100, get_algorithm(name), knobs),
                              analytic_features(layer, V100, name, knobs))


def test_empty_input_gives_empty_matrix():
    """No configs, no rows."""
    assert analytic_features(LAYER, V100, "direct", np.zeros((0, 7))).shape == (0, len(FEATURE_NAMES))


def test_io_over_bound_is_at_least_one():
    """No dataflow beats the best valid lower bound at its own on-chip size."""
    from iobound.report import best_lower_bound
    space = ConvSpace(LAYER, V100, pruned=False)
    knobs, f = _feats(space, n=100)
    assert (f["io_over_bound"] >= 1.0).all()
    cfg = config_from_dict(dict(zip(space.params, map(int, knobs[0]))))
    assert f["io_over_bound"][0] == f["io_words"][0] / best_lower_bound(LAYER, onchip_words(LAYER, cfg))


# -- bad knobs: refused naming the knob, never truncated or fed to the model ---------------

import pytest  # noqa: E402
from hypothesis import given, strategies as st  # noqa: E402

from iobound.errors import InvalidInputError  # noqa: E402
from kernels.perf_model import estimate_configs  # noqa: E402

_SMALL = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3)
_GOOD = [2, 2, 2, 1, 2, 1, 1]


@given(st.integers(0, 6), st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).filter(lambda v: not float(v).is_integer()),
    st.integers(-2**62, 0), st.integers(65537, 2**62)))
def test_a_bad_knob_is_refused_naming_it(col, value):
    """2.5 was truncated to 2 (another config's features), tx=-1 or 0 gave negative or
    infinite features, a huge thread count overflowed int64 to 0 threads: each is an
    InvalidInputError naming the knob, in analytic_features and estimate_configs."""
    row = list(_GOOD)
    row[col] = value
    knobs = np.array([_GOOD, row], dtype=float if isinstance(value, float) else np.int64)
    name = ("x", "y", "z", "alpha", "tx", "ty", "tz")[col]
    for fn in (analytic_features, estimate_configs):
        with pytest.raises(InvalidInputError, match=f"knob {name} of config 1"):
            fn(_SMALL, V100, "direct", knobs)


def test_whole_floats_and_one_flat_row_are_still_knobs():
    """Float arrays of whole numbers and a 1-D row keep working (valid input)."""
    want = analytic_features(_SMALL, V100, "direct", np.array([_GOOD]))
    assert np.array_equal(analytic_features(_SMALL, V100, "direct", np.array(_GOOD, float)), want)
    assert np.array_equal(analytic_features(_SMALL, V100, "direct", _GOOD), want)


@pytest.mark.parametrize("knobs", [np.ones((1, 6)), np.ones((1, 14)), np.ones((1, 1, 7)),
                                   [["a"] * 7], [[1] * 7, [1] * 6], np.ones((1, 7), bool)])
def test_knobs_of_the_wrong_shape_or_type_are_refused(knobs):
    """Not (n, 7) integers: InvalidInputError (was a numpy reshape or int() error, or a
    (1, 14) matrix read silently as two configs)."""
    with pytest.raises(InvalidInputError, match="knobs must be"):
        analytic_features(_SMALL, V100, "direct", knobs)


def test_device_may_be_a_preset_name_and_nothing_else():
    """A preset name is resolved (as check_config does); another type is an input error."""
    want = estimate_configs(_SMALL, V100, "direct", [_GOOD])["time_ms"]
    assert np.array_equal(estimate_configs(_SMALL, "v100", "direct", [_GOOD])["time_ms"], want)
    for bad in (None, 5):
        with pytest.raises(InvalidInputError, match="device"):
            analytic_features(_SMALL, bad, "direct", [_GOOD])
