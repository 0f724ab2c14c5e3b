"""Exact dataflow I/O: the per-axis count against a per-element brute force."""

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from dataflow.direct import DirectTiling, direct_io
from dataflow.io_volume import DataflowIO, tile_extents, used_per_tile, used_total
from dataflow.winograd import WinogradTiling, winograd_io
from iobound.layer import ConvLayer


def brute_force_io(layer: ConvLayer, x: int, y: int, z: int) -> DataflowIO:
    """Per-element count: for every block, the set of in-bounds inputs its windows read."""
    (mu_h, mu_w), (d_h, d_w), (p_h, p_w) = layer.stride, layer.dilation, layer.padding
    inputs = weights = outputs = 0
    for _ in range(layer.n):
        for oz0 in range(0, layer.c_out, z):
            z_eff = min(z, layer.c_out - oz0)
            for oy0 in range(0, layer.h_out, y):
                for ox0 in range(0, layer.w_out, x):
                    used = set()
                    n_out = 0
                    for oy in range(oy0, min(oy0 + y, layer.h_out)):
                        for ox in range(ox0, min(ox0 + x, layer.w_out)):
                            n_out += 1
                            for i in range(layer.k_h):
                                for j in range(layer.k_w):
                                    iy, ix = oy * mu_h + i * d_h - p_h, ox * mu_w + j * d_w - p_w
                                    if 0 <= iy < layer.h_in and 0 <= ix < layer.w_in:
                                        used.add((iy, ix))
                    inputs += layer.c_in * len(used)
                    weights += z_eff * layer.c_in * layer.k_h * layer.k_w
                    outputs += n_out * z_eff
    return DataflowIO.of(inputs, weights, outputs)


@st.composite
def small_layers(draw, winograd=False):
    if winograd:
        k_h = k_w = draw(st.integers(1, 4))
        s = d = (1, 1)
    else:
        k_h, k_w = draw(st.integers(1, 4)), draw(st.integers(1, 4))
        s = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
        d = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    p = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    ext_h, ext_w = (k_h - 1) * d[0] + 1, (k_w - 1) * d[1] + 1
    h = draw(st.integers(max(1, ext_h - 2 * p[0]), 13))
    w = draw(st.integers(max(1, ext_w - 2 * p[1]), 13))
    return ConvLayer(n=draw(st.integers(1, 2)), c_in=draw(st.integers(1, 3)), h_in=h, w_in=w,
                     c_out=draw(st.integers(1, 5)), k_h=k_h, k_w=k_w, stride=s, padding=p, dilation=d)


@given(small_layers(), st.data())
def test_direct_io_equals_brute_force(layer, data):
    """direct_io matches the per-element count for any tiling, border tiles included."""
    x = data.draw(st.integers(1, layer.w_out))
    y = data.draw(st.integers(1, layer.h_out))
    z = data.draw(st.integers(1, layer.c_out))
    alpha = data.draw(st.integers(1, layer.c_in))
    assert direct_io(layer, DirectTiling(x, y, z, alpha)) == brute_force_io(layer, x, y, z)


@given(small_layers(winograd=True), st.data())
def test_winograd_io_equals_brute_force(layer, data):
    """winograd_io matches the per-element count (stride 1, raw inputs and r x r weights)."""
    e = data.draw(st.integers(1, 4))
    assume(e < layer.w_out + e and e < layer.h_out + e)
    x = e * data.draw(st.integers(1, -(-layer.w_out // e)))
    y = e * data.draw(st.integers(1, -(-layer.h_out // e)))
    z = data.draw(st.integers(1, layer.c_out))
    expected = brute_force_io(layer, min(x, layer.w_out), min(y, layer.h_out), z)
    assert winograd_io(layer, WinogradTiling(e, x, y, z)) == expected


@given(st.integers(1, 30), st.integers(1, 30))
def test_tile_extents_cover_axis(n_out, tile):
    """Tile extents are positive, at most the tile, and sum to the axis length."""
    ext = tile_extents(n_out, tile)
    assert ext.sum() == n_out and ext.min() >= 1 and ext.max() <= tile


def test_used_per_tile_skips_padding_and_stride_gaps():
    """Padding rows and rows between strided 1-tap windows are not counted."""
    counts = used_per_tile(n_out=3, tile=3, stride=3, dilation=1, k=1, pad=1, n_in=8)
    # windows read rows -1 (padding), 2, 5
    assert counts.tolist() == [2]


def test_used_per_tile_overlapping_windows_counted_once():
    """Rows shared by overlapping windows are counted once per tile."""
    counts = used_per_tile(n_out=4, tile=2, stride=1, dilation=1, k=3, pad=0, n_in=6)
    assert np.array_equal(counts, [4, 4])


def test_tile_extents_rejects_zero_tile():
    """A zero tile is a ValueError naming both values."""
    with pytest.raises(ValueError, match="tile=0"):
        tile_extents(5, 0)


@given(st.integers(1, 5000))
def test_least_size_per_count_is_the_enumeration(n):
    """The O(sqrt n) construction equals mapping every size to the least size of its tile count."""
    from dataflow.io_volume import least_size_per_count

    sizes = np.arange(1, n + 1)
    assert least_size_per_count(n).tolist() == np.unique(-(-n // (-(-n // sizes)))).tolist()


@st.composite
def axes(draw):
    """One axis: outputs, stride, dilation, kernel, padding and an input size (any; the
    counts only read indices in [0, n_in)), dilations past the kernel and strides past the
    window included."""
    n_out, stride = draw(st.integers(1, 60)), draw(st.integers(1, 5))
    dilation, k, pad = draw(st.integers(1, 8)), draw(st.integers(1, 5)), draw(st.integers(0, 8))
    n_in = max(1, (n_out - 1) * stride + (k - 1) * dilation + 1 - 2 * pad + draw(st.integers(-4, 4)))
    return n_out, stride, dilation, k, pad, n_in


@settings(max_examples=300, deadline=None)
@given(axes())
def test_used_totals_is_used_total_of_every_size(axis):
    """The O(n log n) count of every tile size at once (outputs sharing an input g0 apart,
    one per boundary that splits them) equals counting the used set of each size."""
    from dataflow.io_volume import used_totals

    n_out, stride, dilation, k, pad, n_in = axis
    want = [used_total(n_out, s, stride, dilation, k, pad, n_in) for s in range(1, n_out + 1)]
    assert used_totals(n_out, stride, dilation, k, pad, n_in).tolist() == want


def test_used_totals_of_the_dilated_wide_axis():
    """The reviewer's axis (1625 inputs, 2 taps 600 apart, 1025 outputs): 1024 + 1 outputs
    read 1626 inputs, 513 + 512 (the least size of two tiles) read 2050."""
    from dataflow.io_volume import used_totals

    used = used_totals(1025, 1, 600, 2, 0, 1625)
    assert used[1023] == used_total(1025, 1024, 1, 600, 2, 0, 1625) == 1626
    assert used[512] == used_total(1025, 513, 1, 600, 2, 0, 1625) == 2050
