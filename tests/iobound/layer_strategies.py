"""Hypothesis strategies shared by the iobound tests: small convolution layers of any
stride, padding and dilation, built so that every output size is at least 1."""

from __future__ import annotations

from hypothesis import strategies as st

from iobound.layer import ConvLayer


def conv_layers(c_max: int, out_max: int, pad_h_max: int, pad_w_max: int, dilation_max: int):
    """Layers of batch 1-2, 1..``c_max`` channels in and out, outputs (before padding)
    1..``out_max`` per axis, kernels up to 4x4, strides up to 3, paddings up to
    ``pad_h_max`` / ``pad_w_max`` and dilations up to ``dilation_max``."""
    return st.builds(
        lambda nb, ci, co, ho, wo, kh, kw, sh, sw, ph, pw, dh, dw: ConvLayer(
            n=nb, c_in=ci, c_out=co, h_in=ho + (kh - 1) * dh, w_in=wo + (kw - 1) * dw,
            k_h=kh, k_w=kw, stride=(sh, sw), padding=(ph, pw), dilation=(dh, dw)),
        st.integers(1, 2), st.integers(1, c_max), st.integers(1, c_max), st.integers(1, out_max),
        st.integers(1, out_max), st.integers(1, 4), st.integers(1, 4), st.integers(1, 3),
        st.integers(1, 3), st.integers(0, pad_h_max), st.integers(0, pad_w_max),
        st.integers(1, dilation_max), st.integers(1, dilation_max))
