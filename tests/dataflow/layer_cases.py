"""Hypothesis strategies shared by the dataflow tests: small direct layers and tilings of them."""

from __future__ import annotations

from hypothesis import strategies as st

from dataflow.direct import DirectTiling
from dataflow.winograd import WinogradTiling
from iobound import ConvLayer


@st.composite
def small_direct_cases(draw, n_max: int = 1, c_max: int = 3):
    """A small direct layer (stride, padding, any kernel up to 3x3) and a tiling of it."""
    while True:
        try:
            layer = ConvLayer(
                n=draw(st.integers(1, n_max)), c_in=draw(st.integers(1, c_max)),
                h_in=draw(st.integers(2, 6)), w_in=draw(st.integers(2, 6)),
                c_out=draw(st.integers(1, c_max)),
                k_h=draw(st.integers(1, 3)), k_w=draw(st.integers(1, 3)),
                stride=(draw(st.integers(1, 2)), draw(st.integers(1, 2))),
                padding=(draw(st.integers(0, 1)), draw(st.integers(0, 1))))
            break
        except ValueError:
            continue
    tiling = DirectTiling(x=draw(st.integers(1, layer.w_out)), y=draw(st.integers(1, layer.h_out)),
                          z=draw(st.integers(1, layer.c_out)), alpha=draw(st.integers(1, layer.c_in)))
    return layer, tiling


@st.composite
def winograd_cases(draw):
    """A small Winograd layer, a tiling, S (at least the largest in-degree + 1) and a seed."""
    r, e = draw(st.integers(2, 3)), draw(st.integers(1, 3))
    layer = ConvLayer(n=1, c_in=draw(st.integers(1, 2)), h_in=draw(st.integers(r, 6)),
                      w_in=draw(st.integers(r, 6)), c_out=draw(st.integers(1, 2)), k_h=r, k_w=r,
                      padding=draw(st.integers(0, 1)))
    # one or two Winograd tiles a side, at most ceil(out / e) (a larger tile does not fit)
    tiling = WinogradTiling(e=e, x=e * draw(st.integers(1, min(2, -(-layer.w_out // e)))),
                            y=e * draw(st.integers(1, min(2, -(-layer.h_out // e)))),
                            z=draw(st.integers(1, layer.c_out)))
    return layer, tiling, draw(st.integers(0, 120)), draw(st.integers(0, 2**32 - 1))


@st.composite
def small_grouped_cases(draw, max_hw: int = 6):
    """A small grouped layer (depthwise included: 1 channel per group) and a per-group tiling."""
    while True:
        g = draw(st.integers(1, 4))
        try:
            layer = ConvLayer(
                n=1, c_in=g * draw(st.integers(1, 2)), h_in=draw(st.integers(2, max_hw)),
                w_in=draw(st.integers(2, max_hw)), c_out=g * draw(st.integers(1, 2)),
                k_h=draw(st.integers(1, 3)), k_w=draw(st.integers(1, 3)),
                stride=(draw(st.integers(1, 2)), draw(st.integers(1, 2))),
                padding=(draw(st.integers(0, 1)), draw(st.integers(0, 1))), groups=g)
            break
        except ValueError:
            continue
    tiling = DirectTiling(x=draw(st.integers(1, layer.w_out)), y=draw(st.integers(1, layer.h_out)),
                          z=draw(st.integers(1, layer.c_out_per_group)),
                          alpha=draw(st.integers(1, layer.c_in_per_group)))
    return layer, tiling


@st.composite
def small_square_layers(draw, winograd: bool = False, hw_max: int = 9, c_out_max: int = 8):
    """A small layer with a square kernel (up to 3x3), batch 1, equal strides (1 for
    Winograd) and paddings, inputs up to ``hw_max`` and ``c_out_max`` output channels."""
    k = draw(st.integers(1, 3))
    s = 1 if winograd else draw(st.integers(1, 2))
    p = draw(st.integers(0, 1))
    h = draw(st.integers(max(k - 2 * p, 1), hw_max))
    w = draw(st.integers(max(k - 2 * p, 1), hw_max))
    return ConvLayer(n=1, c_in=draw(st.integers(1, 4)), h_in=h, w_in=w,
                     c_out=draw(st.integers(1, c_out_max)), k_h=k, k_w=k, stride=(s, s),
                     padding=(p, p))

