"""The Winograd fp32 check must still see gross errors at realistic channel counts.

The real fp32 error of F(e x e, r x r) (n = e + r - 1 <= 8, the tiles the register cap
lets a kernel use) is about 1e-6..1e-5 of the output's magnitude (measured against a float64
direct convolution, with uniform, normal and ReLU-like data, and by the CPU emulator). A
tolerance built from worst-case bounds on both the channel accumulation (gamma_{c_in}) and
the channel sum of magnitudes grows like c_in**2 while that error grows like c_in at most;
at VGG/ResNet widths it then accepted a result that ignores a whole input channel, and
at c_in = 1024, r = 5 an all-zero output.
"""

import numpy as np
import pytest

from iobound.layer import ConvLayer
from iobound.winograd_transforms import winograd_transforms
from kernels.reference import compare, conv2d_reference, random_problem, winograd_tolerance


def _layer(c_in, r):
    return ConvLayer(n=1, c_in=c_in, h_in=8, w_in=8, c_out=2, k_h=r, k_w=r, padding=r // 2)


@pytest.mark.parametrize("c_in, r, e", [(512, 5, 4), (1024, 3, 4), (1024, 5, 4)])
def test_a_result_missing_one_input_channel_fails_the_winograd_check(c_in, r, e):
    """Dropping one of the c_in channels changes outputs by ~|y|/sqrt(c_in), some 1e3 times
    the fp32 Winograd error: the check must reject it (e = 4 is in the tuner's default set)."""
    layer = _layer(c_in, r)
    x, w = random_problem(layer, np.random.default_rng(0))
    ref = conv2d_reference(x, w, layer)
    w_bad = w.copy()
    w_bad[:, -1] = 0.0  # a kernel that forgets its last input channel
    bad = conv2d_reference(x, w_bad, layer)
    assert not compare(bad, ref, winograd_tolerance(x, w, layer, e)).ok


def test_an_all_zero_output_fails_the_winograd_check():
    """At c_in = 1024, F(4x4, 5x5) the old tolerance exceeded every output: zeros passed."""
    layer = _layer(1024, 5)
    x, w = random_problem(layer, np.random.default_rng(0))
    ref = conv2d_reference(x, w, layer)
    assert not compare(np.zeros_like(ref), ref, winograd_tolerance(x, w, layer, 4)).ok


def _winograd_fp32(x, w, layer, e):
    """The kernel's algorithm in float32: per-tile transforms, channel sum in order, output transform."""
    r = layer.k_h
    AT, G, BT = (a.astype(np.float32) for a in winograd_transforms(e, r).as_numpy())
    n = e + r - 1
    th, tw = -(-layer.h_out // e), -(-layer.w_out // e)
    p = layer.padding[0]
    xp = np.zeros((layer.n, layer.c_in, th * e + r - 1, tw * e + r - 1), np.float32)
    hh, ww = min(layer.h_in, xp.shape[2] - p), min(layer.w_in, xp.shape[3] - p)
    xp[:, :, p:p + hh, p:p + ww] = x[:, :, :hh, :ww]
    d = np.lib.stride_tricks.sliding_window_view(xp, (n, n), axis=(2, 3))[:, :, ::e, ::e][:, :, :th, :tw]
    V = BT @ d @ BT.T
    U = G @ w @ G.T
    M = np.zeros((layer.n, layer.c_out, th, tw, n, n), np.float32)
    for c in range(layer.c_in):
        M += U[None, :, c, None, None] * V[:, None, c]
    Y = (AT @ M @ AT.T).transpose(0, 1, 2, 4, 3, 5).reshape(layer.n, layer.c_out, th * e, tw * e)
    return Y[:, :, :layer.h_out, :layer.w_out]


@pytest.mark.parametrize("c_in", [1, 7, 512])
@pytest.mark.parametrize("r, e", [(1, 2), (2, 7), (3, 2), (3, 4), (3, 6), (5, 4), (7, 2)])
@pytest.mark.parametrize("data", ["uniform", "normal", "relu"])
def test_correct_fp32_winograd_results_pass_with_margin(c_in, r, e, data):
    """The tightened check never flags a correct fp32 Winograd result (n <= 8)."""
    layer = _layer(c_in, r)
    rng = np.random.default_rng(c_in * 100 + r * 10 + e)
    shape_x, shape_w = (1, c_in, 8, 8), (2, c_in, r, r)
    if data == "uniform":
        x, w = random_problem(layer, rng)
    elif data == "normal":
        x, w = rng.standard_normal(shape_x), rng.standard_normal(shape_w)
    else:  # ReLU-like activations: nonnegative, half of them zero
        x, w = np.maximum(rng.standard_normal(shape_x), 0), rng.uniform(-1, 1, shape_w)
    x, w = x.astype(np.float32), w.astype(np.float32)
    cmp = compare(_winograd_fp32(x, w, layer, e), conv2d_reference(x, w, layer),
                  winograd_tolerance(x, w, layer, e))
    assert cmp.ok and cmp.worst_ratio < 0.25, cmp


def test_the_emulated_kernel_passes_the_check_at_vgg_width():
    """The generated F(4x4, 3x3) kernel, run by the CPU emulator at c_in = 512, passes."""
    from kernels.config import WinogradConfig
    from kernels.verify import emulate_and_check
    layer = ConvLayer(n=1, c_in=512, h_in=8, w_in=8, c_out=2, k_h=3, k_w=3, padding=1)
    chk = emulate_and_check(layer, WinogradConfig(e=4, x=8, y=8, z=1, tx=2, ty=2, tz=1),
                            with_bound=False)
    assert chk.numerics_ok and chk.worst_ratio < 0.25, chk


def test_each_image_gets_its_own_tolerance():
    """Image 1 of the batch is all zeros, so its outputs are exactly zero in fp32 too: its
    tolerance must not borrow image 0's magnitudes (a wrong output there is flagged)."""
    layer = ConvLayer(n=2, c_in=3, h_in=6, w_in=10, c_out=2, k_h=3, k_w=3, padding=1)
    x, w = random_problem(layer, np.random.default_rng(4))
    x[1] = 0.0
    ref = conv2d_reference(x, w, layer)
    tol = winograd_tolerance(x, w, layer, 2)
    assert compare(_winograd_fp32(x, w, layer, 2), ref, tol).ok
    bad = ref.copy()
    bad[1, 1, 2, 3] = 1e-3
    assert not compare(bad, ref, tol).ok
