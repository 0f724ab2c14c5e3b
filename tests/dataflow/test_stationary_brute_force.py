"""best_direct_dataflow against brute-force enumeration of every tiling and order.

The reference tries every (x, y, z) tile (all sizes, or only divisors) of every order on
small layers (batch up to 3, strides, padding, dilation), scores each with the exact
:func:`stationary_io` and :func:`stationary_footprint`, and keeps the least I/O, then the
least footprint, then the first order. The vectorised search must reach the same key.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings, strategies as st

from dataflow.direct import DirectTiling
from dataflow.stationary import ORDERS, best_direct_dataflow, stationary_footprint, stationary_io
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer


def brute_force(layer: ConvLayer, s: int, divisors: bool):
    """Least (I/O, footprint, order index) over all tilings that fit in s words, or None."""
    def sizes(n):
        return [d for d in range(1, n + 1) if not divisors or n % d == 0]
    best = None
    for x, y, z in itertools.product(sizes(layer.w_out), sizes(layer.h_out), sizes(layer.c_out)):
        t = DirectTiling(x, y, z)
        for rank, order in enumerate(ORDERS):
            foot = stationary_footprint(layer, t, order).total
            if foot <= s:
                key = (stationary_io(layer, t, order).total, foot, rank)
                best = key if best is None or key < best else best
    return best


@st.composite
def layers(draw):
    """Small dense layers with 1..5 outputs per spatial axis."""
    k_h, k_w = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    s_h, s_w = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    d_h, d_w = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    p_h, p_w = draw(st.integers(0, 1)), draw(st.integers(0, 1))
    h_out, w_out = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    h_in = max(1, (h_out - 1) * s_h + (k_h - 1) * d_h + 1 - 2 * p_h)
    w_in = max(1, (w_out - 1) * s_w + (k_w - 1) * d_w + 1 - 2 * p_w)
    layer = ConvLayer(draw(st.integers(1, 3)), draw(st.integers(1, 3)), h_in, w_in,
                      draw(st.integers(1, 4)), k_h, k_w, stride=(s_h, s_w), padding=(p_h, p_w),
                      dilation=(d_h, d_w))
    return layer


@settings(deadline=None, max_examples=60)
@given(layers(), st.integers(4, 160), st.booleans())
def test_best_direct_dataflow_matches_brute_force(layer, s, divisors):
    """Same least I/O, footprint and order as trying every tiling (or none fits for both)."""
    want = brute_force(layer, s, divisors)
    if want is None:
        with pytest.raises(InvalidInputError):
            best_direct_dataflow(layer, s, divisors=divisors)
        return
    got = best_direct_dataflow(layer, s, divisors=divisors)
    assert (got.io.total, got.footprint.total, ORDERS.index(got.order)) == want


def test_batch_scales_the_weight_reloads_of_output_stationary():
    """Batch 3, output-stationary only: every image reloads the weights once per spatial
    tile, so the search must weigh the batch to pick the same tiling as brute force."""
    layer = ConvLayer(3, 4, 4, 4, 4, 1, 1)
    for s in (12, 20, 40):
        best = best_direct_dataflow(layer, s, orders=("output",), divisors=False)
        assert best.io.total == brute_force_order(layer, s, "output")


def brute_force_order(layer, s, order):
    return min(stationary_io(layer, DirectTiling(x, y, z), order).total
               for x in range(1, layer.w_out + 1) for y in range(1, layer.h_out + 1)
               for z in range(1, layer.c_out + 1)
               if stationary_footprint(layer, DirectTiling(x, y, z), order).total <= s)


def test_a_larger_tile_of_the_same_count_can_read_fewer_inputs():
    """Dilation 2, 2 taps, 5 outputs, any tile size: two tiles of 4 + 1 outputs read 6 + 2
    input columns, two of 3 + 2 read 5 + 4, so the search must try sizes that are not the
    least of their tile count."""
    layer = ConvLayer(1, 1, 1, 7, 1, 1, 2, dilation=(1, 2))
    for s in range(6, 40):
        want = brute_force(layer, s, divisors=False)
        assert want is not None
        got = best_direct_dataflow(layer, s, divisors=False)
        assert (got.io.total, got.footprint.total, ORDERS.index(got.order)) == want


def test_ties_in_io_go_to_the_smaller_footprint():
    """4x4 outputs, 1x2 kernel, stride 2, 19 words: output-stationary tiles x=2, y=1 and
    x=1, y=2 (z=3) move the same 1472 words, but the first stages a 1x4 input window
    (footprint 16) and the second a 3x2 one (18); the search keeps the smaller."""
    layer = ConvLayer(2, 4, 7, 8, 6, 1, 2, stride=(2, 2))
    got = best_direct_dataflow(layer, 19)
    assert (got.io.total, got.footprint.total, ORDERS.index(got.order)) == brute_force(layer, 19, True)
    assert got.footprint.total == 16
