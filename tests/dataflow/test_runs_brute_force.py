"""Run tiles: when they apply (checked against enumerated window taps) and the best choice
against brute force over every run length, channel chunk and order.

Two outputs share an input when their windows' tap positions ``o*stride + j*dilation - pad``
meet; this is enumerated per axis. The best run dataflow is compared with trying every
``m`` in ``1..h_out*w_out`` and ``z`` in ``1..c_out`` with the exact :func:`run_io` and
:func:`run_footprint` (least I/O, then footprint, then order).
"""

from __future__ import annotations

import itertools

from hypothesis import given, settings, strategies as st

from dataflow.runs import RUN_ORDERS, RunTiling, best_run_dataflow, run_footprint, run_io, runs_apply
from iobound.layer import ConvLayer


def _axis_shares(n_out, stride, dilation, k, pad, n_in) -> bool:
    taps = [{o * stride + j * dilation - pad for j in range(k)} & set(range(n_in))
            for o in range(n_out)]
    return any(a & b for a, b in itertools.combinations(taps, 2))


def windows_share_an_input(layer: ConvLayer) -> bool:
    """Do two distinct outputs of one channel read a common in-bounds input?"""
    rows = _axis_shares(layer.h_out, layer.stride[0], layer.dilation[0], layer.k_h,
                        layer.padding[0], layer.h_in)
    cols = _axis_shares(layer.w_out, layer.stride[1], layer.dilation[1], layer.k_w,
                        layer.padding[1], layer.w_in)
    # every window here has in-bounds taps on both axes, so two outputs in one column (row)
    # share an input exactly when their row (column) windows meet
    return rows or cols


@st.composite
def layers(draw, max_out: int = 4):
    """Small dense layers, kernels up to 3, strides up to 3, dilation up to 2."""
    k_h, k_w = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    s_h, s_w = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    d_h, d_w = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    h_out, w_out = draw(st.integers(1, max_out)), draw(st.integers(1, max_out))
    h_in = (h_out - 1) * s_h + (k_h - 1) * d_h + 1
    w_in = (w_out - 1) * s_w + (k_w - 1) * d_w + 1
    return ConvLayer(draw(st.integers(1, 2)), draw(st.integers(1, 3)), h_in, w_in,
                     draw(st.integers(1, 4)), k_h, k_w, stride=(s_h, s_w), dilation=(d_h, d_w))


@settings(deadline=None, max_examples=150)
@given(layers())
def test_runs_apply_only_when_no_two_outputs_share_an_input(layer):
    """runs_apply is sound (windows disjoint) and, without dilation, exact when every axis
    has at least two outputs."""
    if runs_apply(layer):
        assert not windows_share_an_input(layer)
    if layer.dilation == (1, 1) and layer.h_out > 1 and layer.w_out > 1:
        assert runs_apply(layer) == (not windows_share_an_input(layer))


def test_windows_one_wider_than_the_stride_overlap():
    """k=3, stride 2: neighbouring windows share a column, so runs do not apply."""
    layer = ConvLayer(1, 1, 5, 5, 1, 3, 3, stride=(2, 2))
    assert windows_share_an_input(layer) and not runs_apply(layer)


def brute_force(layer: ConvLayer, s: int):
    best = None
    for m, z in itertools.product(range(1, layer.h_out * layer.w_out + 1), range(1, layer.c_out + 1)):
        for rank, order in enumerate(RUN_ORDERS):
            foot = run_footprint(layer, RunTiling(m, z), order).total
            if foot <= s:
                key = (run_io(layer, RunTiling(m, z), order).total, foot, rank)
                best = key if best is None or key < best else best
    return best


@st.composite
def run_layers(draw):
    """Layers where runs apply: extent <= stride on both axes, up to 4 x 5 outputs."""
    k_h, k_w = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    s_h, s_w = draw(st.integers(k_h, 3)), draw(st.integers(k_w, 3))
    h_out, w_out = draw(st.integers(1, 4)), draw(st.integers(1, 5))
    return ConvLayer(draw(st.integers(1, 2)), draw(st.integers(1, 3)), (h_out - 1) * s_h + k_h,
                     (w_out - 1) * s_w + k_w, draw(st.integers(1, 5)), k_h, k_w, stride=(s_h, s_w))


@settings(deadline=None, max_examples=80)
@given(run_layers(), st.integers(2, 120))
def test_best_run_dataflow_matches_brute_force(layer, s):
    """Same least I/O, footprint and order as trying every run and chunk (or none fits)."""
    want = brute_force(layer, s)
    got = best_run_dataflow(layer, s)
    if want is None:
        assert got is None
    else:
        assert (got.io.total, got.footprint.total, RUN_ORDERS.index(got.order)) == want


def test_equal_io_runs_keep_the_smaller_footprint():
    """1x9 outputs, 2x2 patches, 18 channels, 21 words: output-runs m=5, z=2 and m=2, z=6
    both move 6876 words (fewer input passes against fewer weight passes); the first holds
    19 words, the second 21, and the choice is the smaller, as brute force finds."""
    layer = ConvLayer(2, 7, 2, 18, 18, 2, 2, stride=(2, 2))
    got = best_run_dataflow(layer, 21)
    assert (got.io.total, got.footprint.total, RUN_ORDERS.index(got.order)) == brute_force(layer, 21)
    assert (got.io.total, got.footprint.total) == (6876, 19)
