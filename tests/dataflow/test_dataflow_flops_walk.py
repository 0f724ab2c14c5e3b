"""The Winograd dataflow's flops (dataflow/flops.py) against a walk over its blocks.

Reference: every block of the dataflow, clipped at the output's edge, counting each
input transform (once per tile and z block), kernel transform (once per channel and
spatial block), product and output transform, each at the cost of its generated code
(:func:`dataflow.flops.transform_flops`, checked against the CUDA text in
tests/kernels/test_kernel_flops.py) -- not the dense matrix products counted before.
"""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from dataflow.flops import transform_flops, winograd_flops
from dataflow.winograd import WinogradTiling
from iobound.layer import ConvLayer


def _executed_winograd_flops(layer: ConvLayer, t: WinogradTiling) -> int:
    """Walk the dataflow's blocks and count every transform and product it performs."""
    n = t.e + layer.k_h - 1
    f_in, f_ker, f_out = transform_flops(t.e, layer.k_h)
    total = 0
    for _ in range(layer.n):
        for oz0 in range(0, layer.c_out, t.z):
            zc = min(t.z, layer.c_out - oz0)
            for oy0 in range(0, layer.h_out, t.y):
                for ox0 in range(0, layer.w_out, t.x):
                    tiles = (-(-(min(oy0 + t.y, layer.h_out) - oy0) // t.e)
                             * -(-(min(ox0 + t.x, layer.w_out) - ox0) // t.e))
                    for _c in range(layer.c_in):
                        total += tiles * f_in + zc * f_ker + tiles * zc * n * n * 2  # u*v, acc +=
                    total += tiles * zc * f_out
    return total


@given(st.integers(1, 4), st.integers(1, 3), st.integers(0, 1), st.integers(3, 9), st.integers(3, 9),
       st.integers(1, 2), st.integers(1, 3), st.data())
@settings(max_examples=30, deadline=None)
def test_winograd_flops_are_the_executed_operations(e, r, pad, h, w, c_in, c_out, data):
    """Batch 1 or 2: every image repeats every transform (a count without the batch in one
    of its terms passed while the batch was always 1)."""
    layer = ConvLayer(data.draw(st.integers(1, 2)), c_in, h, w, c_out, r, r, padding=pad)
    x = e * data.draw(st.integers(1, -(-layer.w_out // e)))
    y = e * data.draw(st.integers(1, -(-layer.h_out // e)))
    t = WinogradTiling(e, x, y, data.draw(st.integers(1, c_out)))
    assert winograd_flops(layer, t) == _executed_winograd_flops(layer, t)


def test_winograd_f2x3_input_transform_is_additions_only():
    """F(2x2, 3x3): B^T has two +-1 entries a row, so B^T d B is 32 additions (not 256)."""
    layer = ConvLayer(1, 1, 4, 4, 1, 3, 3)                      # one Winograd tile, one channel
    t = WinogradTiling(2, 2, 2, 1)
    f_in, f_ker, f_out = transform_flops(2, 3)
    assert f_in == 32
    assert winograd_flops(layer, t) == 32 + f_ker + 2 * 16 + f_out
