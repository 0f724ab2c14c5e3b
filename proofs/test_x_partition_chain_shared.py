"""The shared-boundary chain bound: Q >= 2 W / sqrt(S) - O/8 - 17 S/8 (S >= 11).

Same DAG, summation orders and game as proofs/test_x_partition_chain.py (each output one
accumulation chain, its terms in any order; recomputation allowed; W the per-class
weighted products; grouped layers through the same joint Loomis-Whitney inequality,
proofs/test_grouped_bounds.py). Steps 1-3 and 5 (useful events, segments of 2S loads,
products charged to their parent sum's segment, runs, fresh runs summing to O,
Loomis-Whitney) are that proof's. What changes is the accounting at segment boundaries:
the old argument gives every segment S start words AND S end words, so the fast memory at
a boundary is counted twice; here it is counted once.

Per segment j (units of words; L_j <= 2S loads, St_j stores):

a. Start. Let u_j be the non-sources red at the start of j other than j's incoming
   products. Operands (|A| + |B|), incoming products P' and the chain predecessors of the
   n continued runs are distinct vertices, red at the start or loaded; the sources and
   incoming products red at the start are at most S - u_j, and at most u_j predecessors
   are red at the start, so |A| + |B| + P' + max(u_j, n) <= S + L_j.
b. End. Let x_j be the run ends red at the end of j. Every run end is red at the end or
   stored in j: c = n + f <= x_j + St_j. Run ends are sums (or single-product outputs,
   charged to their own segment), so red at the start of j + 1 and no incoming product
   of it: x_j <= u_(j+1); and u_1 = 0 (the game starts with no red pebble).
c. Products. With c >= 4, weighted_j <= sqrt(c)(|A| + |B|)/2 + P' <= sqrt(c)(3S - m)/2,
   m = max(u_j, n) (an incoming product weighs <= 1 <= sqrt(c)/2). With c < 4,
   weighted_j <= |A| + |B| + P' <= 3S <= (15/16) S^(3/2) for S >= 11 (test_small_c).
d. The segment inequality (test_segment_inequality), in units of S:
   (3 - m)/2 sqrt(n + f) <= 1 + (x_j - u_j)/16 + f/2 + t/16 (t = St_j / S),
   i.e. weighted_j <= S^(3/2) + sqrt(S) ((x_j - u_j)/16 + f/2 + St_j/16).
e. Summing, the potential telescopes: sum_j (x_j - u_j) <= x_h <= S (by b), so
   W <= S^(3/2) (h + 1/16) + sqrt(S) (O/2 + St/16); with L >= 2S (h - 1) and
   Q = L + St >= 2W/sqrt(S) - O/8 - 17S/8 + 7 (St - O)/8, and St >= O
   (test_summation).

Best constant of this accounting: with per-segment charges alpha per fresh run and kappa
per store, a segment starting with S operands that starts 16S/9 fresh chains and keeps S
of them, followed by one that finishes those S, satisfies every constraint a-c; it
forces alpha + kappa >= 9/16, so -O/8 is the best output term these constraints give
(test_two_segment_cycle). A stronger output term needs memory inside a segment.
Steps a-d are measured on played games in
proofs/test_x_partition_chain.py::test_segment_claims_on_played_games.
"""

import math

import numpy as np
import sympy as sp

from dataflow.dag_direct import direct_conv_dag
from dataflow.direct import DirectTiling
from dataflow.pebble import play
from dataflow.schedules import tiled_schedule, topological_schedule
from iobound.direct_bounds import (CHAIN_SHARED_MIN_S, chain_bound_expr, chain_shared_bound_expr,
                                   direct_bound_values)
from iobound.layer import ConvLayer
from iobound.reuse_classes import weighted_products
from iobound.symbols import OUTPUTS, S, W_CLASS

s_, f_, u_, m_ = sp.symbols("s f u m", nonnegative=True)


def _phi(m, s, f, u):
    """Left side minus the right side's constant-free part: the inequality is phi <= 1
    (x + t >= c = s^2 replaces (x - u)/16 + t/16 by (s^2 - u)/16)."""
    return (3 - m) * s / 2 - f / 2 + (u - s ** 2) / 16


def test_segment_inequality():
    """phi(max(u, n), s, f, u) <= 1 for u in [0, 1], f in [0, s^2], n = s^2 - f.

    Case n <= u (m = u): phi falls with f, so f = max(0, s^2 - u).
      s^2 <= u: phi rises with s, at s = sqrt(u) 1 - phi = (1 - q)^2 (2 + q)/2, q = sqrt(u).
      s^2 >= u: 1 - phi = 9 s^2/16 - (3 - u) s/2 + 1 - 9u/16, least at s* = 4(3 - u)/9 with
      value h(u) = 1 - 9u/16 - (3 - u)^2/9: concave, h(0) = 0, and where s* = sqrt(u) it is
      the previous case's value; for larger u the least is at s = sqrt(u) (previous case).
    Case n > u: phi rises with u, so u = min(1, n); n <= 1 is the first case; for n > 1,
      d phi / d m = (1 - s)/2 <= 0 (s >= sqrt(n) > 1) and at m = 1
      1 - phi = (9s - 7)(s - 1)/16 >= 0.
    """
    q = sp.Symbol("q", nonnegative=True)
    low = _phi(q ** 2, s_, 0, q ** 2)
    assert sp.simplify(sp.diff(low, s_) - ((3 - q ** 2) / 2 - s_ / 8)) == 0     # > 0 for q <= 1, s <= 1
    assert sp.expand(1 - low.subs(s_, q) - (1 - q) ** 2 * (2 + q) / 2) == 0
    high = _phi(u_, s_, s_ ** 2 - u_, u_)
    s_star = sp.solve(sp.diff(high, s_), s_)[0]
    assert sp.simplify(s_star - 4 * (3 - u_) / 9) == 0
    h = sp.expand(1 - high.subs(s_, s_star))
    assert sp.expand(h - (1 - 9 * u_ / 16 - (3 - u_) ** 2 / 9)) == 0
    assert sp.diff(h, u_, 2) < 0 and h.subs(u_, 0) == 0
    q0 = sp.nsolve(4 * (3 - q ** 2) - 9 * q, q, 0.9)                              # s* = sqrt(u0)
    assert abs(h.subs(u_, q0 ** 2) - (1 - q0) ** 2 * (2 + q0) / 2) < 1e-12
    big = _phi(m_, s_, s_ ** 2 - m_, 1)
    assert sp.expand(sp.diff(big, m_) - (1 - s_) / 2) == 0
    assert sp.factor(1 - big.subs(m_, 1)) == (s_ - 1) * (9 * s_ - 7) / 16
    _sample_segment_inequality(np.random.default_rng(3), 200000)


def _sample_segment_inequality(rng, n):
    """The unreduced inequality in all five variables on random points of its domain."""
    u, x = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    t = rng.exponential(1.5, n) * (rng.random(n) < 0.7)
    c = (x + t) * np.where(rng.random(n) < 0.5, 1.0, rng.random(n))
    k = rng.uniform(0, 1, n) * c
    k = np.where(rng.random(n) < 0.3, np.minimum(u, c), k)
    m = np.maximum(u, k)
    lhs = np.where(m <= 3, (3 - m) / 2 * np.sqrt(c), 0.0)
    assert np.all(lhs <= 1 + (x - u) / 16 + (c - k) / 2 + t / 16 + 1e-12)


def test_small_c():
    """c < 4: 3S <= (15/16) S^(3/2) iff sqrt(S) >= 16/5, so S >= 11 (10.24 is the threshold)."""
    assert sp.solve(sp.Eq(3 * S, sp.Rational(15, 16) * S ** sp.Rational(3, 2)), S) == [sp.Rational(256, 25)]
    assert CHAIN_SHARED_MIN_S == math.ceil(256 / 25)


def test_summation():
    """W <= S^(3/2)(h + 1/16) + sqrt(S)(O/2 + St/16), Q >= 2S(h - 1) + St give the reported
    expression plus 7(St - O)/8 >= 0."""
    st_ = sp.Symbol("St", nonnegative=True)
    h = (W_CLASS - sp.sqrt(S) * (OUTPUTS / 2 + st_ / 16)) / S ** sp.Rational(3, 2) - sp.Rational(1, 16)
    q = 2 * S * (h - 1) + st_
    assert sp.simplify(q - chain_shared_bound_expr() - sp.Rational(7, 8) * (st_ - OUTPUTS)) == 0
    # stronger than the unshared form exactly when O > S/3
    assert sp.simplify(chain_shared_bound_expr() - chain_bound_expr() - (3 * OUTPUTS / 8 - S / 8)) == 0


def test_two_segment_cycle():
    """The best charges of this accounting: segment A starts with S operands (u = 0), loads 2S,
    starts v S fresh chains and keeps S (x = 1, t = v - 1): products 3/2 sqrt(v) S^(3/2); segment B
    continues them (u = n = 1) and stores them: S^(3/2). The pair has v fresh runs and v stores and
    its potential returns to its start, so its charged right sides sum to 2 + (alpha + kappa) v
    (units S^(3/2) and sqrt(S) S): alpha + kappa >= max_v (3/2 sqrt(v) - 1)/v = 9/16 at v = 16/9,
    as 9 s^2/16 - 3s/2 + 1 = (3s/4 - 1)^2."""
    assert sp.expand(sp.Rational(9, 16) * s_ ** 2 - sp.Rational(3, 2) * s_ + 1 - (3 * s_ / 4 - 1) ** 2) == 0
    v = sp.Rational(16, 9)
    a_pair = sp.Rational(3, 2) * sp.sqrt(v) + 1                  # products of the pair, units S^(3/2)
    assert a_pair - 2 == sp.Rational(9, 16) * v                  # equality: no smaller alpha + kappa
    # both segments meet a-c: A has |A|+|B| = 3 (u = 0), c = v <= x + t; B has m = 1, c = 1 <= 0 + 1
    assert _phi(0, sp.sqrt(v), v, 0) == 1 and _phi(1, 1, 0, 1) == 1
    # output term 1 - 2 (alpha + kappa) = -1/8
    assert 1 - 2 * sp.Rational(9, 16) == -sp.Rational(1, 8)


def test_shared_form_binds_and_holds_on_played_games():
    """A long-chain layer where the shared form is the larger chain form (O > S/3) and above
    compulsory I/O: tiled and random games, Belady and LRU, still move more."""
    layer = ConvLayer(n=1, c_in=24, h_in=3, w_in=3, c_out=6, k_h=1, k_w=1)
    s, w, o = 12, weighted_products(layer), 54
    shared = float(chain_shared_bound_expr().subs({S: s, W_CLASS: w, OUTPUTS: o}))
    old = float(chain_bound_expr().subs({S: s, W_CLASS: w, OUTPUTS: o}))
    values = direct_bound_values(layer, s)
    assert shared > old and math.isclose(values["x_partition_chain"], shared)
    assert shared > values["compulsory"]
    dag = direct_conv_dag(layer)
    orders = [tiled_schedule(dag, layer, DirectTiling(x=1, y=1, z=z, alpha=1)).order for z in (1, 3, 6)]
    orders += [topological_schedule(dag, np.random.default_rng(seed)) for seed in range(3)]
    for order in orders:
        for policy in ("belady", "lru"):
            assert play(dag, order, s, policy).total >= shared
