"""Grouped and depthwise convolution in the kernels: reference, emulated kernel, traffic."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from dataflow.grouped import group_sublayer
from dataflow.io_volume import used_total
from iobound.devices import get_device
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from kernels.analytic import FEATURE_NAMES, analytic_features, io_words
from kernels.config import DirectConfig, WinogradConfig, check_config
from kernels.generate import generate
from kernels.grouping import kernel_io
from kernels.perf_model import estimate_configs
from kernels.reference import (conv2d_naive, conv2d_reference, direct_tolerance, random_problem,
                               winograd_tolerance)
from kernels.source import InvalidConfigError
from kernels.verify import emulate_and_check, emulator_check, reduced_layer


def _divisor(draw, n):
    return draw(st.sampled_from([d for d in range(1, n + 1) if n % d == 0]))


@st.composite
def grouped_layers(draw, max_groups=4):
    """Small layers with 1..max_groups groups (depthwise whenever c_in/G is 1)."""
    g = draw(st.integers(1, max_groups))
    cin_g, cout_g = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    k_h, k_w = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dil = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    pad = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    ext_h, ext_w = (k_h - 1) * dil[0] + 1, (k_w - 1) * dil[1] + 1
    return ConvLayer(n=draw(st.integers(1, 2)), c_in=g * cin_g,
                     h_in=draw(st.integers(max(1, ext_h - 2 * pad[0]), 8)),
                     w_in=draw(st.integers(max(1, ext_w - 2 * pad[1]), 8)),
                     c_out=g * cout_g, k_h=k_h, k_w=k_w,
                     stride=(draw(st.integers(1, 3)), draw(st.integers(1, 3))),
                     padding=pad, dilation=dil, groups=g)


@st.composite
def grouped_cases(draw):
    """A grouped layer and a direct config whose z tile lies inside one group."""
    layer = draw(grouped_layers())
    x = draw(st.integers(1, min(4, layer.w_out)))
    y = draw(st.integers(1, min(4, layer.h_out)))
    z = _divisor(draw, layer.c_out_per_group)
    alpha = draw(st.integers(1, layer.c_in_per_group))
    cfg = DirectConfig(x=x, y=y, z=z, alpha=alpha, tx=_divisor(draw, x), ty=_divisor(draw, y),
                       tz=_divisor(draw, z))
    return layer, cfg


def compulsory_io(layer: ConvLayer) -> int:
    """Every used input, every weight and every output once (counted independently of
    the kernels: the used rows and columns of one tile covering the whole output)."""
    (mu_h, mu_w), (d_h, d_w), (p_h, p_w) = layer.stride, layer.dilation, layer.padding
    rows = used_total(layer.h_out, layer.h_out, mu_h, d_h, layer.k_h, p_h, layer.h_in)
    cols = used_total(layer.w_out, layer.w_out, mu_w, d_w, layer.k_w, p_w, layer.w_in)
    return layer.n * layer.c_in * rows * cols + layer.weight_size + layer.output_size


def _dense_weights(w: np.ndarray, layer: ConvLayer) -> np.ndarray:
    """The grouped weights as an ungrouped layer's: zero outside each output channel's group."""
    dense = np.zeros((layer.c_out, layer.c_in, layer.k_h, layer.k_w), w.dtype)
    for k in range(layer.c_out):
        c0 = k // layer.c_out_per_group * layer.c_in_per_group
        dense[k, c0:c0 + layer.c_in_per_group] = w[k]
    return dense


@given(grouped_layers(max_groups=3), st.integers(0, 2**32 - 1))
def test_grouped_reference_equals_naive_loops_and_the_dense_block_diagonal_layer(layer, seed):
    """The grouped einsum equals the loop definition and an ungrouped convolution whose
    weights are zero outside each output channel's group."""
    x, w = random_problem(layer, np.random.default_rng(seed))
    ref = conv2d_reference(x, w, layer)
    np.testing.assert_allclose(ref, conv2d_naive(x, w, layer), rtol=1e-12, atol=1e-12)
    dense = conv2d_reference(x, _dense_weights(w, layer), layer.replace(groups=1))
    np.testing.assert_allclose(ref, dense, rtol=1e-12, atol=1e-12)


def test_grouped_reference_rejects_full_weights():
    """A grouped layer's weights hold c_in / groups input channels per output channel."""
    layer = ConvLayer(1, 4, 5, 5, 4, 3, 3, groups=2)
    with pytest.raises(ValueError, match=r"weight shape must be \(4, 2, 3, 3\)"):
        conv2d_reference(np.zeros((1, 4, 5, 5)), np.zeros((4, 4, 3, 3)), layer)


def test_grouped_tolerance_counts_one_groups_products():
    """The fp32 bound sums (c_in / groups) k_h k_w products; Winograd's refuses groups."""
    layer = ConvLayer(1, 4, 5, 5, 4, 3, 3, groups=4)
    x, w = np.ones((1, 4, 5, 5)), np.ones((4, 1, 3, 3))
    tol = direct_tolerance(x, w, layer)
    assert tol[0, 0, 1, 1] == pytest.approx(2 * 9 * 2.0 ** -24 * 9)
    with pytest.raises(InvalidInputError, match="dense layers only"):
        winograd_tolerance(x, w, layer, 2)


@given(grouped_cases())
def test_grouped_kernel_is_exact_in_values_and_traffic(case):
    """Random grouped layers (depthwise, c_out/G > 1) and configs: numpy-exact output,
    traffic equal to the analytic count, never below the layer's compulsory I/O nor
    below the best reported lower bound at the kernel's on-chip words."""
    layer, cfg = case
    assert check_config(layer, cfg) == []
    chk = emulate_and_check(layer, cfg, with_bound=True)
    assert chk.numerics_ok, (chk.max_abs_err, chk.worst_ratio)
    io = kernel_io(layer, cfg, cfg.tiling)
    assert (chk.global_loads, chk.global_stores) == (io.input_loads + io.weight_loads,
                                                     io.output_stores)
    assert io.total == io_words(layer, "direct", (cfg.x, cfg.y, cfg.z, cfg.alpha))
    assert io.total >= compulsory_io(layer)
    assert chk.global_loads + chk.global_stores >= chk.lower_bound


@pytest.mark.parametrize("layer, cfg", [
    # depthwise, stride 2 (MobileNet-like)
    (ConvLayer(1, 6, 9, 9, 6, 3, 3, stride=2, padding=1, groups=6), DirectConfig(5, 5, 1, 1, 5, 1, 1)),
    # depthwise with a channel multiplier: c_out/G = 4, z = 2 splits a group
    (ConvLayer(2, 3, 7, 7, 12, 3, 3, padding=1, groups=3), DirectConfig(7, 7, 2, 1, 7, 1, 2)),
    # ResNeXt-like: 4 input and 4 output channels per group, alpha < c_in/G
    (ConvLayer(1, 16, 6, 6, 16, 3, 3, padding=1, groups=4), DirectConfig(3, 6, 4, 2, 3, 2, 4)),
])
def test_grouped_kernel_examples(layer, cfg):
    """Named shapes: exact output and traffic, and the traffic is G times one group's."""
    chk = emulate_and_check(layer, cfg, with_bound=False)
    assert chk.numerics_ok and chk.traffic_matches
    one = kernel_io(group_sublayer(layer), cfg, cfg.tiling).total
    assert chk.global_loads + chk.global_stores == layer.groups * one


def test_groups_one_source_has_no_group_text():
    """groups == 1 generates the plain kernel: no group constants, weights over C_IN."""
    layer = ConvLayer(1, 4, 6, 6, 4, 3, 3, padding=1)
    code = generate(layer, DirectConfig(3, 3, 2, 2, 3, 3, 1)).code
    assert "C_IN_G" not in code and "GROUPS" not in code and "c_base" not in code
    assert "(size_t)C_OUT * C_IN * KH * KW" in code
    grouped = generate(layer.replace(c_out=8, groups=2), DirectConfig(3, 3, 2, 1, 3, 3, 1)).code
    assert "constexpr int GROUPS = 2" in grouped and "(size_t)C_OUT * C_IN_G * KH * KW" in grouped


@pytest.mark.parametrize("cfg, reason", [
    (DirectConfig(3, 3, 3, 1, 3, 3, 1), "z=3 must divide c_out/groups=2"),
    (DirectConfig(3, 3, 4, 1, 3, 3, 1), "z=4 must divide c_out/groups=2"),
    (DirectConfig(3, 3, 2, 2, 3, 3, 1), "alpha=2 is larger than c_in/groups=1"),
    (WinogradConfig(2, 4, 4, 2, 2, 2, 1), "dense layers only (groups=1), got groups=4"),
])
def test_configs_that_do_not_fit_the_groups_are_refused(cfg, reason):
    """A tile across groups, a chunk past the group or Winograd: reasons, no source."""
    layer = ConvLayer(1, 4, 6, 6, 8, 3, 3, padding=1, groups=4)
    assert any(reason in r for r in check_config(layer, cfg))
    with pytest.raises(InvalidConfigError, match=reason.split(" (")[0]):
        generate(layer, cfg)


def test_analytic_io_and_loop_steps_of_a_grouped_layer():
    """Features: io_words is G times one group's; the model's loop steps count one group's
    channel chunks (ceil((c_in/G) / alpha) per block)."""
    layer = ConvLayer(1, 32, 14, 14, 64, 3, 3, padding=1, groups=8)
    knobs = np.array([[7, 7, 4, 2, 7, 7, 1]])
    v100 = get_device("v100")
    f = dict(zip(FEATURE_NAMES, analytic_features(layer, v100, "direct", knobs)[0]))
    one = group_sublayer(layer)
    assert f["io_words"] == 8 * kernel_io(one, "direct", DirectConfig(7, 7, 4, 2, 7, 7, 1).tiling).total
    assert f["flops"] == 2 * layer.macs and f["blocks"] == 2 * 2 * 16
    est = estimate_configs(layer, v100, "direct", knobs)
    resident = min(f["blocks_per_sm"], np.ceil(f["blocks"] / v100.sm_count))
    assert est["loop_steps_per_sm"][0] == pytest.approx(64 * 2 / (v100.sm_count * resident))


def test_reduced_layer_keeps_groups_and_checks():
    """The winner check's reduced copy of a grouped layer keeps at most two groups with the
    same channels per group (capped by the tiles) and passes the emulator check."""
    layer = ConvLayer(1, 64, 28, 28, 128, 3, 3, padding=1, groups=32)
    cfg = DirectConfig(14, 7, 2, 1, 7, 7, 2)
    small = reduced_layer(layer, cfg)
    assert (small.groups, small.c_in_per_group, small.c_out_per_group) == (2, 2, 4)
    chk = emulator_check(layer, cfg)
    assert chk.checked and chk.matches_numpy and chk.traffic_matches
