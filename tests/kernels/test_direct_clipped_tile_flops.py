"""The direct kernel's flops (kernels/kernel_flops.py, the ``flops`` feature) when the tile
does not divide the output.

Reference: a walk over the loops of ``kernels/templates/direct.cu``: every block of the
grid (``grid_shape``), every thread of the block, every channel chunk (``c_lim`` channels
of the last one), ``KH * KW`` taps, and the thread's ``YT * XT * ZT`` accumulators, one
FMA (2 flops) each. The accumulators of outputs past the layer's edge (a clipped block)
are computed all the same: only the stores are masked.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from iobound.devices import get_device
from iobound.layer import ConvLayer
from kernels.analytic import FEATURE_NAMES, analytic_features
from kernels.config import DirectConfig, check_config, grid_shape
from kernels.kernel_flops import kernel_flops


def _walk_direct_template(layer: ConvLayer, c: DirectConfig) -> int:
    gx, gy, gz = grid_shape(layer, c)
    cin = layer.c_in_per_group
    xt, yt, zt = c.x // c.tx, c.y // c.ty, c.z // c.tz
    per_block = 0
    for _ in range(c.tx * c.ty * c.tz):
        for c0 in range(0, cin, c.alpha):
            c_lim = min(cin - c0, c.alpha)
            per_block += c_lim * layer.k_h * layer.k_w * yt * xt * zt * 2  # acc += iv * wv
    return gx * gy * gz * per_block


def _divisor(draw, n):
    return draw(st.sampled_from([d for d in range(1, n + 1) if n % d == 0]))


@st.composite
def clipped_cases(draw):
    g = draw(st.sampled_from([1, 2]))
    layer = ConvLayer(draw(st.integers(1, 2)), g * draw(st.integers(1, 3)), draw(st.integers(3, 9)),
                      draw(st.integers(3, 9)), g * draw(st.integers(1, 3)), 3, 3,
                      padding=draw(st.integers(0, 1)), stride=draw(st.integers(1, 2)), groups=g)
    x, y = draw(st.integers(1, layer.w_out)), draw(st.integers(1, layer.h_out))
    z = _divisor(draw, layer.c_out_per_group) if g > 1 else draw(st.integers(1, layer.c_out))
    alpha = draw(st.integers(1, layer.c_in_per_group))
    c = DirectConfig(x=x, y=y, z=z, alpha=alpha, tx=_divisor(draw, x), ty=_divisor(draw, y),
                     tz=_divisor(draw, z))
    return layer, c


@settings(max_examples=40, deadline=None)
@given(clipped_cases())
def test_direct_flops_are_what_the_template_executes(case):
    layer, c = case
    assert check_config(layer, c) == []
    want = _walk_direct_template(layer, c)
    assert kernel_flops(layer, c) == want
    knobs = np.array([[c.x, c.y, c.z, c.alpha, c.tx, c.ty, c.tz]])
    feats = analytic_features(layer, get_device("v100"), "direct", knobs)
    assert feats[0, FEATURE_NAMES.index("flops")] == want


def test_a_clipped_direct_block_computes_its_whole_tile():
    """Output 5x5x3, tile 4x4x2: 2*2*2 blocks of 32 outputs, 2 channels * 9 taps each."""
    layer = ConvLayer(1, 2, 7, 7, 3, 3, 3)
    c = DirectConfig(x=4, y=4, z=2, alpha=1, tx=2, ty=2, tz=1)
    assert check_config(layer, c, "v100") == []
    assert kernel_flops(layer, c) == 8 * 32 * 2 * 9 * 2  # not 2 * MACs = 2700
