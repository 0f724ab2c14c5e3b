"""The flops model of the kernels (kernels/kernel_flops.py, the ``flops`` feature) against
what the generated code executes.

References, both independent of the closed forms:
- one transform's cost: the operators of the straight-line CUDA the code generator writes
  (``transform_functions``), counted in its text (binary + and -, and *; index arithmetic
  inside brackets left out);
- the whole kernel: a walk over the Winograd template's loops (blocks, input channels,
  threads, each thread's kernel transforms, input transforms, products and output
  transforms), adding each one's cost.
"""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings, strategies as st

from dataflow.flops import direct_flops, transform_flops
from iobound.devices import get_device
from iobound.layer import ConvLayer
from kernels.analytic import FEATURE_NAMES, analytic_features
from kernels.codegen_winograd import transform_functions
from kernels.config import DirectConfig, WinogradConfig
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
    blocks = (layer.n * -(-layer.w_out // c.x) * -(-layer.h_out // c.y)
              * -(-layer.c_out // c.z))
    per_block = 0
    for _ in range(c.tx * c.ty * c.tz):  # each thread of the block
        for _ in range(layer.c_in):
            per_block += zt * f_ker  # u[q] = kernel_transform(...)
            for _ in range(yw * xw):
                per_block += f_in  # v = input_transform(...)
                per_block += zt * 2 * n * n  # partial = u * v; acc += partial
        per_block += zt * yw * xw * f_out  # output_transform(acc)
    return blocks * per_block


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
    """Threads repeat the transforms (input: tz times, kernel: tx * ty times) and clipped
    blocks compute whole tiles: the model counts them all, as the feature does."""
    layer, c = case
    want = _walk_template(layer, c)
    assert kernel_flops(layer, c) == want
    knobs = np.array([[c.e, c.x, c.y, c.z, c.tx, c.ty, c.tz]])
    feats = analytic_features(layer, get_device("v100"), "winograd", knobs)
    assert feats[0, FEATURE_NAMES.index("flops")] == want


def test_direct_kernel_flops_are_two_per_mac_whatever_the_threads():
    layer = ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=1)
    counts = {kernel_flops(layer, DirectConfig(x=8, y=8, z=8, alpha=4, tx=tx, ty=ty, tz=tz))
              for tx, ty, tz in [(1, 1, 1), (8, 8, 1), (2, 4, 8)]}
    assert counts == {direct_flops(layer)}
