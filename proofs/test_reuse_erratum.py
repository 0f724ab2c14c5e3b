"""Errata on the reuse factor R and on |V| of Lemma 4.7, shown on concrete layers.

1. R = k_h k_w / mu^2 is the *average* number of windows reading an input. The
   proofs (Loomis-Whitney over taps) need the maximum, R_max = ceil(k/mu) per axis:
   AlexNet conv1 has inputs read by 9 windows, not 7.5625.
2. With stride > kernel, R < 1. A 1x1 convolution with stride mu has (over its
   used inputs) the same DAG as a matrix multiply, so a bound for it must hold for
   the matrix multiply too; with R = 1/mu^2 the paper's concrete bound exceeds the
   I/O of an explicit blocked matrix-multiply schedule, so it is false.
3. Lemma 4.7 counts all W_in H_in C_in inputs. Inputs that no window reads never
   need a pebble; counting them inflates |V| and the bound beyond what the same
   schedule achieves. |V| must count used vertices only (and no padding taps).
"""

import math

from iobound.direct_bounds import direct_bound_values, direct_T_expr
from iobound.layer import ConvLayer
from iobound.networks import get_layer
from iobound.symbols import R, S
from iobound.vertex_counts import direct_counts


def _axis_max_reuse(size, k, mu):
    hits = [0] * size
    out = (size - k) // mu + 1
    for o in range(out):
        for i in range(k):
            hits[o * mu + i] += 1
    return max(hits)


def test_alexnet_conv1_reuse_is_nine():
    """227 inputs, k 11, stride 4: an input is read by 3 windows per axis, 9 in all."""
    layer = get_layer("alexnet.conv1")
    assert _axis_max_reuse(227, 11, 4) == 3
    assert direct_counts(layer).max_input_reuse == 9 == layer.reuse_max
    assert layer.reuse_paper == 7.5625


def _blocked_schedule_io(P, cin, cout, t):
    """I/O of the blocked schedule with S = t^2 + 2t + 2 (t x t accumulators, t
    inputs, t weights, a product and a sum): 2 t cin loads per block, t^2 stores."""
    assert P % t == 0 and cout % t == 0
    return (P // t) * (cout // t) * (2 * t * cin + t * t)


def _play_blocked_schedule(P, cin, cout, t):
    """Play the schedule in the red-blue pebble game (chain summation trees) and
    return (loads + stores, most red pebbles); every move is checked."""
    red, blue = set(), {("x", p, c) for p in range(P) for c in range(cin)}
    blue |= {("w", o, c) for o in range(cout) for c in range(cin)}
    io = peak = 0

    def load(v):
        nonlocal io
        assert v in blue
        red.add(v); io += 1

    for p0 in range(0, P, t):
        for o0 in range(0, cout, t):
            acc = {}
            for c in range(cin):
                xs = [("x", p, c) for p in range(p0, p0 + t)]
                ws = [("w", o, c) for o in range(o0, o0 + t)]
                for v in xs + ws:
                    load(v)
                for p in range(p0, p0 + t):
                    for o in range(o0, o0 + t):
                        assert ("x", p, c) in red and ("w", o, c) in red
                        prod = ("m", p, o, c)
                        red.add(prod)
                        if c == 0:
                            acc[p, o] = prod
                        else:
                            s = ("s", p, o, c)          # s_c = s_{c-1} + m_c (chain)
                            assert acc[p, o] in red
                            red.add(s)
                            peak = max(peak, len(red))
                            red.discard(acc[p, o]); red.discard(prod)
                            acc[p, o] = s
                        peak = max(peak, len(red))
                for v in xs + ws:
                    red.discard(v)
            for v in acc.values():
                blue.add(v); io += 1; red.discard(v)
    return io, peak


def test_blocked_schedule_count():
    """The played schedule uses t^2 + 2t + 2 red pebbles and the counted I/O."""
    io, peak = _play_blocked_schedule(P=4, cin=3, cout=4, t=2)
    assert peak <= 2 * 2 + 2 * 2 + 2
    assert io == _blocked_schedule_io(4, 3, 4, 2)


def _paper_concrete(V, r, s):
    T2 = float(direct_T_expr(True).subs({R: r, S: 2 * s}))
    return s * (V / T2 - 1)


def test_reuse_below_one_contradicts_matrix_multiply():
    """1x1, stride 64: with R = 1/4096 the paper's bound exceeds an achievable I/O."""
    t = 10
    s = t * t + 2 * t + 2
    layer = ConvLayer(n=1, c_in=100, h_in=64 * 9 + 1, w_in=64 * 9 + 1, c_out=100,
                      k_h=1, k_w=1, stride=(64, 64))
    c = direct_counts(layer)
    achievable = _blocked_schedule_io(layer.h_out * layer.w_out, 100, 100, t)
    assert layer.reuse_paper < 1 and layer.reuse_max == 1
    assert _paper_concrete(c.vertices, layer.reuse_paper, s) > achievable      # false bound
    assert max(direct_bound_values(layer, s).values()) <= achievable            # ours holds


def test_lemma_4_7_unused_inputs_inflate_the_bound():
    """Same layer: counting all W_in H_in C_in inputs (Lemma 4.7) with R_max = 1 also
    exceeds the achievable I/O; counting used inputs does not."""
    t = 10
    s = t * t + 2 * t + 2
    layer = ConvLayer(n=1, c_in=100, h_in=64 * 9 + 1, w_in=64 * 9 + 1, c_out=100,
                      k_h=1, k_w=1, stride=(64, 64))
    c = direct_counts(layer)
    lemma_4_7 = ((2 * layer.c_in - 1) * layer.h_out * layer.w_out * layer.c_out
                 + layer.input_size + layer.weight_size)
    achievable = _blocked_schedule_io(layer.h_out * layer.w_out, 100, 100, t)
    assert lemma_4_7 > c.vertices
    assert _paper_concrete(lemma_4_7, 1, s) > achievable
    assert _paper_concrete(c.vertices, 1, s) <= achievable


def test_reuse_max_formula():
    """ceil(k/mu) per axis equals the brute-force maximum (no dilation, no padding)."""
    for k in range(1, 8):
        for mu in range(1, 8):
            size = 4 * k + 3 * mu + 1
            assert _axis_max_reuse(size, k, mu) == math.ceil(k / mu)
