"""The direct fp32 check must still see gross errors at realistic channel counts, and never
flag a correct fp32 result.

``2 m u conv(|x|, |w|)`` (the worst case of m = c_in k_h k_w products) grows like m times a
magnitude that grows like m, while the error of a sum of m products in fp32 grows like sqrt(m)
times that magnitude for random data (independent rounding errors): at VGG/ResNet widths it
accepted a kernel that forgets a whole input channel.
"""

import numpy as np
import pytest

from iobound.layer import ConvLayer
from kernels.reference import compare, conv2d_reference, direct_tolerance, random_problem


def _layer(c_in, k):
    return ConvLayer(n=1, c_in=c_in, h_in=6, w_in=6, c_out=2, k_h=k, k_w=k, padding=k // 2)


@pytest.mark.parametrize("c_in, k", [(256, 5), (512, 3), (1024, 3), (1024, 5)])
def test_a_result_missing_one_input_channel_fails_the_direct_check(c_in, k):
    layer = _layer(c_in, k)
    x, w = random_problem(layer, np.random.default_rng(1))
    ref = conv2d_reference(x, w, layer)
    w_bad = w.copy()
    w_bad[:, c_in // 2] = 0.0
    assert not compare(conv2d_reference(x, w_bad, layer), ref, direct_tolerance(x, w, layer)).ok


def _direct_fp32(x, w, layer):
    """Each output summed in fp32 one product at a time, channels outer and taps inner (the
    order of a thread's accumulator over channel chunks)."""
    p, k = layer.padding[0], layer.k_h
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p))).astype(np.float32)
    win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(2, 3))  # n c h w k k
    acc = np.zeros((layer.n, layer.c_out, layer.h_out, layer.w_out), np.float32)
    for c in range(layer.c_in):
        for i in range(k):
            for j in range(k):
                acc += (win[:, None, c, :, :, i, j] * w[None, :, c, i, j, None, None]).astype(np.float32)
    return acc


@pytest.mark.parametrize("data", ["uniform", "normal", "relu"])
@pytest.mark.parametrize("c_in, k", [(4, 3), (256, 3), (1024, 3)])
def test_a_correct_fp32_result_stays_well_inside_the_direct_tolerance(data, c_in, k):
    layer = _layer(c_in, k)
    rng = np.random.default_rng(2)
    x, w = random_problem(layer, rng)
    if data == "normal":
        x = rng.standard_normal(x.shape).astype(np.float32)
    elif data == "relu":
        x = np.maximum(x, 0)
    got = compare(_direct_fp32(x, w, layer), conv2d_reference(x, w, layer),
                  direct_tolerance(x, w, layer))
    assert got.ok and got.worst_ratio < 0.25, got
