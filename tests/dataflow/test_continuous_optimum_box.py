"""The continuous optimum within the layer's box (dataflow/continuous_optimum.py).

A tile cannot exceed the layer: ``z <= c_out`` (one group's for a grouped layer) and
``P = x y <= h_out w_out``; it has one channel and one position at least: ``z >= 1``,
``P >= 1``. Reference: the halo-free model itself, f = io(P, z) =
``n h_out w_out c_out C_in (a/z + K/P) + outputs`` on ``g = c P z + alpha (a P + K z) <= S``,
minimised by brute force over a fine grid of the box, and its compulsory traffic
``n (a h_out w_out c_in + K C_in c_out + h_out w_out c_out)`` (every input, weight and
output once, the model's P = h_out w_out, z = c_out). Before the box, resnext50.conv2_1b at
48 KiB reported z = 35.96 with 4 channels per group and an I/O of 490,699 words, under its
compulsory lower bound of 807,424. Before the floors, cin=3,hin=16,cout=8,kh=7 at 99 words
reported z = 0.74 (a Winograd layer at 64 words z = 0.83), an I/O below any real tile's.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from dataflow.continuous_optimum import (A, ALPHA, BOUND_BY, C, K, S, _boxed, continuous_optimum_expressions,
                                         dataflow_reuse, direct_continuous_optimum,
                                         winograd_continuous_optimum)
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer

REL = 1e-9


@st.composite
def direct_layers(draw, big: bool = False):
    """A small direct layer: batch, groups, rectangular kernels, strides, padding, dilation
    (``big``: up to 64 x 64 outputs and 48 channels per group)."""
    hw, cg = (8, 64) if big else (1, 14), 48 if big else 6
    while True:
        g = draw(st.integers(1, 3))
        try:
            layer = ConvLayer(
                n=draw(st.integers(1, 2)), c_in=g * draw(st.integers(1, 4)),
                h_in=draw(st.integers(*hw)), w_in=draw(st.integers(*hw)),
                c_out=g * draw(st.integers(1, cg)),
                k_h=draw(st.integers(1, 3)), k_w=draw(st.integers(1, 3)),
                stride=(draw(st.integers(1, 3)), draw(st.integers(1, 3))),
                padding=(draw(st.integers(0, 1)), draw(st.integers(0, 1))),
                dilation=(draw(st.integers(1, 2)), draw(st.integers(1, 2))), groups=g)
            break
        except ValueError:
            continue
    return layer


@st.composite
def models(draw, big: bool = False):
    """(layer, S, model, optimum function of S): Winograd or direct, model = (a, K, c, alpha)
    (``big``: larger layers, where the interior point more often fits the box)."""
    hw = (8, 64) if big else (0, 14)
    if draw(st.booleans()):
        r, e = draw(st.integers(2, 3)), draw(st.integers(1, 3))
        layer = ConvLayer(n=1, c_in=draw(st.integers(1, 4)), h_in=draw(st.integers(max(r, hw[0]), hw[1])),
                          w_in=draw(st.integers(max(r, hw[0]), hw[1])),
                          c_out=draw(st.integers(1, 64 if big else 8)),
                          k_h=r, k_w=r, padding=draw(st.integers(0, 1)))
        layer.check_winograd()
        model = (1.0, float(r * r), 2.0 * (e + r - 1) ** 2 / e ** 2, 1.0)
        return layer, model, lambda s: winograd_continuous_optimum(layer, e, s)
    layer = draw(direct_layers(big))
    alpha = draw(st.integers(1, layer.c_in_per_group))
    kk = layer.k_h * layer.k_w
    model = (kk / dataflow_reuse(layer), float(kk), 1.0, float(alpha))
    return layer, model, lambda s: direct_continuous_optimum(layer, s, alpha)


@st.composite
def cases(draw, big: bool = False):
    """(layer, S, model, optimum) with S at least the words of one output of one channel
    (``g(1, 1)``; below it no point of the box fits: test_below_one_output_the_smallest_tile_is_reported)."""
    layer, model, optimum = draw(models(big))
    low = max(8, math.ceil(_words(model, 1, 1)))
    s = draw(st.integers(low, 6000) | st.integers(low, 4 * low))   # the floors bind at small S
    return layer, s, model, optimum(s)


def _io(layer, model, p, z):
    """The halo-free model's I/O at (P, z) (numpy-friendly)."""
    a, k, _, _ = model
    hwc = layer.n * layer.h_out * layer.w_out * layer.c_out
    return hwc * layer.c_in_per_group * (a / z + k / p) + hwc


def _words(model, p, z):
    a, k, c, alpha = model
    return c * p * z + alpha * (a * p + k * z)


def _halo_free_compulsory(layer, model):
    a, k, _, _ = model
    hw = layer.h_out * layer.w_out
    return layer.n * (a * hw * layer.c_in + k * layer.c_in_per_group * layer.c_out
                      + hw * layer.c_out)


@given(cases())
@settings(max_examples=150, deadline=None)
def test_continuous_optimum_is_inside_the_box(case):
    """1 <= x <= w_out, 1 <= y <= h_out, 1 <= x y <= h_out w_out, 1 <= z <= (one group's)
    c_out, and the memory holds: g(P, z) <= S, with equality unless the tile is the whole
    layer."""
    layer, s, model, opt = case
    p = opt.x * opt.y
    assert opt.bound_by in BOUND_BY
    assert 1 <= opt.x <= layer.w_out and 1 <= opt.y <= layer.h_out
    assert 1 <= p <= layer.h_out * layer.w_out * (1 + REL)
    assert 1 <= opt.z <= layer.c_out_per_group
    assert _words(model, p, opt.z) <= s * (1 + REL)
    if opt.bound_by != "layer":      # f falls as P or z grows: the memory is full
        assert _words(model, p, opt.z) == pytest.approx(s, rel=1e-9)
    if opt.bound_by in ("c_out", "layer"):
        assert opt.z == layer.c_out_per_group
    if opt.bound_by in ("spatial", "layer"):
        assert p == pytest.approx(layer.h_out * layer.w_out, rel=1e-12)
    if opt.bound_by == "one channel":
        assert opt.z == 1
    if opt.x != opt.y:               # not square: the smaller axis whole
        assert min(opt.x, opt.y) == min(layer.w_out, layer.h_out) == (
            opt.x if layer.w_out <= layer.h_out else opt.y)


@given(cases())
@settings(max_examples=150, deadline=None)
def test_continuous_io_is_at_least_the_models_compulsory_traffic(case):
    """Within the box the model never moves less than every input, weight and output once
    (its own counts: a h_out w_out inputs per channel), and exactly that when the whole
    layer fits one block."""
    layer, s, model, opt = case
    floor = _halo_free_compulsory(layer, model)
    assert opt.io >= floor * (1 - REL)
    assert opt.io == pytest.approx(_io(layer, model, opt.x * opt.y, opt.z), rel=1e-12)
    if opt.bound_by == "layer":
        assert opt.io == pytest.approx(floor, rel=1e-12)


@given(cases())
@settings(max_examples=100, deadline=None)
def test_no_point_of_the_box_does_better(case):
    """Brute force: the reported point is a point of the box with g <= S, no point of a
    fine (geometric, caps and floors included) grid of the box with g <= S has a smaller model I/O,
    and the best of the largest P that fits at each of a finer grid of z comes within
    0.1% of it (the optimum is attained, not merely undercut)."""
    layer, s, model, opt = case
    a, k, c, alpha = model
    p_max, z_max = layer.h_out * layer.w_out, layer.c_out_per_group
    p = opt.x * opt.y
    assert p <= p_max * (1 + REL) and opt.z <= z_max and _words(model, p, opt.z) <= s * (1 + REL)
    best = opt.io * (1 - 1e-9)
    ps = np.unique(np.concatenate([[1.0], np.geomspace(1, p_max, 300), [p_max]]))
    zs = np.unique(np.concatenate([[1.0], np.geomspace(1, z_max, 300), [z_max]]))
    pp, zz = np.meshgrid(ps, zs)
    fits = _words(model, pp, zz) <= s
    if fits.any():
        assert _io(layer, model, pp[fits], zz[fits]).min() >= best
    zs = np.unique(np.concatenate([[1.0], np.geomspace(1, z_max, 40_000), [z_max]]))
    p_at = np.minimum((s - alpha * k * zs) / (c * zs + alpha * a), p_max)   # g = S, capped
    ok = p_at >= 1
    assert ok.any()
    at = _io(layer, model, p_at[ok], zs[ok]).min()
    assert best <= at <= opt.io * (1 + 1e-3)


@given(cases(big=True))
@settings(max_examples=100, deadline=None)
def test_interior_optimum_inside_the_box_is_unchanged(case):
    """When the Lagrange point (P*, z*) lies in the box it is the answer, as before the box:
    x = y = sqrt(P*) (when that fits both axes), z = z*, x y = R_df z, bound_by "memory"."""
    layer, s, model, opt = case
    a, k, c, alpha = model
    p_opt, z_opt = continuous_optimum_expressions()
    vals = {A: a, K: k, C: c, ALPHA: alpha, S: s}
    p, z = float(p_opt.subs(vals)), float(z_opt.subs(vals))
    p_max, z_max = layer.h_out * layer.w_out, layer.c_out_per_group
    assume(1 + 1e-9 < p < p_max * (1 - 1e-9) and 1 + 1e-9 < z < z_max * (1 - 1e-9))
    assert opt.bound_by == "memory"
    assert opt.z == pytest.approx(z, rel=1e-9)
    assert opt.x * opt.y == pytest.approx(opt.reuse * opt.z, rel=1e-9)
    if math.sqrt(p) <= min(layer.h_out, layer.w_out):
        assert opt.x == opt.y == pytest.approx(math.sqrt(p), rel=1e-9)


@pytest.mark.parametrize("name, z_max", [("resnext50.conv2_1b", 4), ("resnet50.conv2_1a", 64)])
def test_readme_layers_report_a_tile_of_the_layer(name, z_max):
    """The two layers whose optimum exceeded c_out at 48 KiB: z capped at (one group's)
    c_out, the reported halo-free I/O not under the report's lower bound (both are
    stride-1 layers whose halo-free counts are the real ones), and the JSON says why."""
    from dataflow.evaluate import evaluate_dataflow
    from iobound.networks import get_layer

    rep = evaluate_dataflow(get_layer(name), 12288)
    d = rep.to_dict()["continuous_optimum"]
    assert d["z"] == z_max and d["bound_by"] == "c_out"
    assert d["x"] * d["y"] <= rep.layer.h_out * rep.layer.w_out
    assert d["io_halo_free"] >= rep.lower_bound


def test_cli_names_the_binding_cap(capsys):
    """The text claims x*y = R*z only where it holds, and says which cap binds."""
    from search.cli.main import main

    assert main(["dataflow", "--layer", "cin=4,hin=8,cout=256,kh=3,pad=1,groups=2",
                 "--fast-memory", "4096"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if "continuous optimum" in l)
    assert "x*y capped at h_out*w_out" in line and "x*y = " not in line
    assert main(["dataflow", "--layer", "cin=4,hin=8,cout=4,kh=3,pad=1,groups=2",
                 "--fast-memory", "4096"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if "continuous optimum" in l)
    assert "x=y=8, z=2 " in line and "the whole layer fits" in line
    assert main(["dataflow", "--layer", "cin=16,hin=64,cout=64,kh=3,pad=1",
                 "--fast-memory", "512"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if "continuous optimum" in l)
    assert "x*y = 9*z" in line and "capped" not in line


def test_the_reviewers_cases_have_a_channel():
    """cin=3,hin=16,cout=8,kh=7 at 99 words reported z = 0.74 (x = y = 6.01) and an I/O of
    7,305 words; with z >= 1 the optimum is z = 1, P = (99 - 49) / 2 = 25. The Winograd layer
    at 64 words (z = 0.83 before) likewise."""
    opt = direct_continuous_optimum(ConvLayer(1, 3, 16, 16, 8, 7, 7), 99)
    assert (opt.x, opt.y, opt.z, opt.io, opt.bound_by) == (5.0, 5.0, 1.0, 7904.0, "one channel")
    opt = winograd_continuous_optimum(ConvLayer(1, 4, 6, 6, 4, 3, 3, padding=3), 2, 64)
    assert opt.z == 1 and opt.x * opt.y >= 1 and opt.bound_by == "one channel"


def test_cli_names_the_channel_floor(capsys):
    from search.cli.main import main

    assert main(["dataflow", "--layer", "cin=3,hin=16,cout=8,kh=7", "--fast-memory", "99"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if "continuous optimum" in l)
    assert "x=y=5, z=1 " in line and "z held at 1 channel" in line


@given(models(), st.integers(1, 80))
@settings(max_examples=100, deadline=None)
def test_below_one_output_the_smallest_tile_is_reported(model_case, s):
    """Below g(1, 1) words (one output position of one channel) no point of the box has
    g <= S: the smallest tile x = y = z = 1 is reported as such, not a tile of z < 1 (a
    dataflow that streams an operand can still fit S: evaluate_dataflow reports it)."""
    layer, model, optimum = model_case
    opt = optimum(s)
    assert opt.z >= 1 and opt.x >= 1 and opt.y >= 1
    assert (opt.bound_by == "smallest tile") == (_words(model, 1, 1) > s)
    if opt.bound_by == "smallest tile":
        assert (opt.x, opt.y, opt.z) == (1, 1, 1)
        assert opt.io == pytest.approx(_io(layer, model, 1, 1), rel=1e-12)


def test_a_run_block_smaller_than_the_models_smallest_tile(capsys):
    """A 2x2 stride-2 kernel: the model's one output of one channel needs 1 + 4 + 4 = 9
    words, an output-runs block of one position 6; at S = 6 the report stands, with the
    smallest tile as its continuous point (the box first raised here)."""
    from search.cli.main import main

    assert main(["dataflow", "--layer", "cin=2,hin=8,cout=2,kh=2,stride=2", "--fast-memory", "6"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if "continuous optimum" in l)
    assert "x=y=1, z=1 " in line and "not even one output of one channel fits S" in line


@given(st.floats(0.1, 50), st.floats(0.1, 50), st.floats(0.1, 50), st.floats(0.1, 8),
       st.integers(1, 200), st.integers(1, 64), st.integers(1, 10_000))
@settings(max_examples=300, deadline=None)
def test_boxed_optimum_of_any_model(a, k, c, alpha, p_max, z_max, s):
    """The case analysis for any positive model constants (a > K too, where the floor P = 1
    can bind: not for the direct and Winograd models, whose a <= K gives P* >= z*): the
    point lies in the box on g <= S (= S unless the layer fits) and no point of g = S in
    the box (a fine grid of z, P from g = S) has a smaller f; (1, 1) when none fits."""
    model = (a, k, c, alpha)
    p, z, by = _boxed(a, k, c, alpha, s, p_max, z_max)
    assert 1 <= p <= p_max and 1 <= z <= z_max and by in BOUND_BY
    if _words(model, 1, 1) > s:
        assert (p, z, by) == (1, 1, "smallest tile")
        return
    assert _words(model, p, z) <= s * (1 + REL)
    if by != "layer":
        assert _words(model, p, z) == pytest.approx(s, rel=1e-9)
    f = (a * p + k * z) / (p * z)
    zs = np.unique(np.concatenate([[1.0], np.geomspace(1, z_max, 20_000), [z_max]]))
    p_at = np.minimum((s - alpha * k * zs) / (c * zs + alpha * a), p_max)
    ok = p_at >= 1
    if ok.any():
        assert ((a * p_at[ok] + k * zs[ok]) / (p_at[ok] * zs[ok])).min() >= f * (1 - 1e-9)


def test_the_floor_of_one_position():
    """a > K: the interior point P* = K z* / a falls below one position (a = 4, K = 1,
    c = alpha = 1, S = 10: z* = 3.48, P* = 0.87); the optimum is P = 1, z = 3 (g = 1*3 + 4 + 3)."""
    assert _boxed(4.0, 1.0, 1.0, 1.0, 10, 100, 100) == (1.0, 3.0, "one position")


@st.composite
def searched(draw):
    """A dense layer, S, and the discrete search's choice (direct or Winograd, dividing
    tiles or any), or None when no tile fits S."""
    from dataflow.optimal_tiles import optimal_direct_tiles, optimal_winograd_tiles

    s, divisors = draw(st.integers(8, 3000)), draw(st.booleans())
    if draw(st.booleans()):
        r, e = draw(st.integers(2, 3)), draw(st.integers(1, 3))
        layer = ConvLayer(n=1, c_in=draw(st.integers(1, 4)), h_in=draw(st.integers(r, 14)),
                          w_in=draw(st.integers(r, 14)), c_out=draw(st.integers(1, 8)),
                          k_h=r, k_w=r, padding=draw(st.integers(0, 2)))
        model = (1.0, float(r * r), 2.0 * (e + r - 1) ** 2 / e ** 2, 1.0)
        search = lambda: optimal_winograd_tiles(layer, s, e, divisors)   # noqa: E731
    else:
        layer = draw(direct_layers())
        assume(layer.groups == 1)
        alpha = draw(st.integers(1, layer.c_in))
        kk = layer.k_h * layer.k_w
        model = (kk / dataflow_reuse(layer), float(kk), 1.0, float(alpha))
        search = lambda: optimal_direct_tiles(layer, s, alpha, divisors)   # noqa: E731
    try:
        choice = search()
    except InvalidInputError as exc:   # no tile fits S
        assert "is too small" in str(exc)
        choice = None
    return layer, s, model, choice


@given(searched())
@settings(max_examples=150, deadline=None)
def test_the_relaxation_is_no_worse_than_the_searched_tile(case):
    """The continuous optimum relaxes the tile search: the searched tile (x, y, z) clipped to
    the output is a point of the model's box with g <= S (a real block stages at least the
    model's words), so the optimum's model I/O is at most the model I/O there. Against the
    exact I/O only where the model never counts more than the exact traffic (direct, stride
    1, no padding: every tile reads at least its own positions' inputs; with padding an
    input can serve outputs the model charges separately)."""
    from dataflow.direct import direct_io

    layer, s, model, choice = case
    assume(choice is not None)
    opt, t = choice.continuous, choice.tiling
    assert opt.z >= 1 and opt.x * opt.y >= 1
    p = min(t.x, layer.w_out) * min(t.y, layer.h_out)
    assert _words(model, p, t.z) <= s
    assert opt.io <= _io(layer, model, p, t.z) * (1 + REL)
    if choice.algorithm == "direct" and layer.stride == (1, 1) and layer.padding == (0, 0):
        assert opt.io <= direct_io(layer, t).total * (1 + REL)
