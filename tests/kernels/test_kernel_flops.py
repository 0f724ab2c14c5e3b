"""The flops model of the kernels (kernels/kernel_flops.py, the ``flops`` feature) against
what the generated code executes.

References, both independent of the closed forms:
- one transform's cost: the operators of the straight-line CUDA the code generator writes
  (``transform_functions``), counted in its text (binary + and -, and *; index arithmetic
  inside brackets left out);
- the whole kernel: a walk over the Winograd template's loops (blocks, input channels,
  the block's shared kernel and tile transforms, each thread's products, each thread's
  output transforms), adding each one's cost; and over the direct template's loops,
  clipped blocks included (below).
"""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings, strategies as st

from dataflow.flops import direct_flops, transform_flops, winograd_flops
from iobound.devices import get_device
from iobound.layer import ConvLayer
from kernels.analytic import FEATURE_NAMES, analytic_features
from kernels.codegen_winograd import transform_functions
from kernels.config import DirectConfig, WinogradConfig, check_config, grid_shape
from kernels.kernel_flops import kernel_flops


def _operators_of(code: str, function: str) -> int:
    body = code.split(f"void {function}(")[1].split("}")[0]
    total = 0
    for line in body.splitlines():
        if "=" not in line or line.strip().startswith("float t["):
            continue
        rhs = re.sub(r"\[[^\]]*\]", "", line.split("=", 1)[1])
        total += rhs.count(" + ") + rhs.count(" - ") + rhs.count(" * ")
    return total


@settings(max_examples=20, deadline=None)
@given(e=st.integers(1, 6), r=st.integers(2, 5))
def test_a_transform_costs_the_operators_of_its_generated_code(e, r):
    code = transform_functions(e, r)
    assert transform_flops(e, r) == tuple(
        _operators_of(code, f) for f in ("input_transform", "kernel_transform", "output_transform"))


def _walk_template(layer: ConvLayer, c: WinogradConfig) -> int:
    """The Winograd template's loops, each operation's cost added (see module doc)."""
    n = c.e + layer.k_h - 1
    f_in, f_ker, f_out = transform_flops(c.e, layer.k_h)
    xw, yw, zt = c.x // c.e // c.tx, c.y // c.e // c.ty, c.z // c.tz
    tiles = (c.x // c.e) * (c.y // c.e)
    blocks = (layer.n * -(-layer.w_out // c.x) * -(-layer.h_out // c.y)
              * -(-layer.c_out // c.z))
    per_block = 0
    for _ in range(layer.c_in):
        for zz in range(c.z):  # for (zz = tid; zz < Z; zz += THREADS): kernel_transform
            per_block += f_ker
        for t in range(tiles):  # for (t = tid; t < TILES; t += THREADS): input_transform
            per_block += f_in
        for _ in range(c.tx * c.ty * c.tz):  # each thread: partial = u * v; acc += partial
            per_block += yw * xw * zt * 2 * n * n
    for _ in range(c.tx * c.ty * c.tz):
        per_block += zt * yw * xw * f_out  # output_transform(acc)
    return blocks * per_block


def _assert_counted(layer: ConvLayer, c, want: int) -> None:
    """kernel_flops and the model's flops feature of config ``c`` both equal ``want``."""
    assert kernel_flops(layer, c) == want
    knobs = np.array([[getattr(c, p) for p in c.params]])
    feats = analytic_features(layer, get_device("v100"), c.algorithm, knobs)
    assert feats[0, FEATURE_NAMES.index("flops")] == want


@st.composite
def winograd_cases(draw):
    e, r = draw(st.integers(2, 4)), draw(st.sampled_from([2, 3]))
    h, w = draw(st.integers(r, 12)), draw(st.integers(r, 12))
    layer = ConvLayer(draw(st.integers(1, 2)), draw(st.integers(1, 3)), h, w,
                      draw(st.integers(1, 6)), r, r, padding=draw(st.integers(0, 1)))
    # tiles the dataflow takes: x, y at most the output rounded up to e, z at most c_out
    a = draw(st.integers(1, -(-layer.w_out // e)))
    b = draw(st.integers(1, -(-layer.h_out // e)))
    z = draw(st.integers(1, layer.c_out))
    tx = draw(st.sampled_from([d for d in range(1, a + 1) if a % d == 0]))
    ty = draw(st.sampled_from([d for d in range(1, b + 1) if b % d == 0]))
    tz = draw(st.sampled_from([d for d in range(1, z + 1) if z % d == 0]))
    return layer, WinogradConfig(e=e, x=a * e, y=b * e, z=z, tx=tx, ty=ty, tz=tz)


@settings(max_examples=40, deadline=None)
@given(winograd_cases())
def test_winograd_flops_are_what_the_template_executes(case):
    """Each transform runs once per block and channel, whatever the threads, and clipped
    blocks compute whole tiles: the model counts them all, as the feature does."""
    layer, c = case
    _assert_counted(layer, c, _walk_template(layer, c))


@st.composite
def dividing_winograd_cases(draw):
    """Layers whose output the tile x * y * z divides (no clipped block)."""
    e, r = draw(st.integers(2, 4)), draw(st.sampled_from([2, 3]))
    a, b, z = (draw(st.integers(1, 3)) for _ in range(3))
    w_out, h_out = e * a * draw(st.integers(1, 2)), e * b * draw(st.integers(1, 2))
    layer = ConvLayer(draw(st.integers(1, 2)), draw(st.integers(1, 3)), h_out + r - 1,
                      w_out + r - 1, z * draw(st.integers(1, 2)), r, r)
    return layer, WinogradConfig(e=e, x=a * e, y=b * e, z=z, tx=1, ty=1, tz=1)


@settings(max_examples=20, deadline=None)
@given(dividing_winograd_cases())
def test_winograd_kernel_flops_are_the_dataflows_when_the_tiles_divide(case):
    """The kernel computes what the dataflow schedules: each transform once per block."""
    layer, c = case
    assert kernel_flops(layer, c) == winograd_flops(layer, c.tiling)


def test_direct_kernel_flops_are_two_per_mac_whatever_the_threads():
    layer = ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=1)
    counts = {kernel_flops(layer, DirectConfig(x=8, y=8, z=8, alpha=4, tx=tx, ty=ty, tz=tz))
              for tx, ty, tz in [(1, 1, 1), (8, 8, 1), (2, 4, 8)]}
    assert counts == {direct_flops(layer)}


# -- direct tiles that do not divide the output ------------------------------------------
# Reference: a walk over the loops of kernels/templates/direct.cu: every block of the grid
# (grid_shape), every thread, every channel chunk (c_lim channels of the last one), KH * KW
# taps and the thread's YT * XT * ZT accumulators, one FMA (2 flops) each. A clipped
# block's accumulators past the layer's edge are computed all the same (only the stores
# are masked).

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
    _assert_counted(layer, c, _walk_direct_template(layer, c))


def test_a_clipped_direct_block_computes_its_whole_tile():
    """Output 5x5x3, tile 4x4x2: 2*2*2 blocks of 32 outputs, 2 channels * 9 taps each."""
    layer = ConvLayer(1, 2, 7, 7, 3, 3, 3)
    c = DirectConfig(x=4, y=4, z=2, alpha=1, tx=2, ty=2, tz=1)
    assert check_config(layer, c, "v100") == []
    assert kernel_flops(layer, c) == 8 * 32 * 2 * 9 * 2  # not 2 * MACs = 2700
