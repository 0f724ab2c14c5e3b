"""Hypothesis strategies shared by the dataflow tests: small direct layers and tilings of them."""

from __future__ import annotations

from hypothesis import strategies as st

from dataflow.direct import DirectTiling
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
