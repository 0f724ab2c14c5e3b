"""Validity of the direct-convolution T(S) for the DAG of iobound.vertex_counts.

Claim: for a set V_i of an S-partition (dominator D, minimum set M, |D|, |M| <= S)

    |V_i| <= a + b + 2 d + 2 sqrt(R a b |M|) - 1 <= S + S sqrt(R S) - 1

with a, b, d the inputs, weights and tree vertices of D and R = R_max. Steps:

1. Inputs/weights of V_i lie in D. A product outside D needs its input and
   weight in D. Following successors inside V_i from any product or sum reaches a
   vertex of M in the same output tree, so at most |M| trees are touched.
2. Convolution Loomis-Whitney: products with input in A, weight in B, output in
   C number at most sqrt(R_max |A||B||C|) (per tap a matrix multiply,
   Loomis-Whitney; Cauchy-Schwarz over taps; sum over taps of the inputs each
   tap can read is <= R_max |A|). Checked by brute force below.
3. Summation trees: in the forest of generated tree vertices every sum outside D
   has two children, so #sums outside D <= d + p - 1 (p: generated products).
4. Maximise over a + b + d <= S (below). The paper's phi_1 = 2 S sqrt(R k) is
   >= the proven k sqrt(R S)/2 for k <= S, so its T (Lemma 4.8) is a valid,
   4x looser, over-estimate.
"""

import numpy as np
import sympy as sp
from hypothesis import given, strategies as st

from iobound.direct_bounds import direct_composite, direct_T_expr
from iobound.layer import ConvLayer
from iobound.symbols import R, S, k
from iobound.vertex_counts import iter_direct_products

a, b, d = sp.symbols("a b d", nonnegative=True)
uu = sp.Symbol("uu", nonnegative=True)


def test_am_gm_products_step():
    """2 sqrt(R S a b) <= (a + b) sqrt(R S): the tight phi_1 = psi_1 = k sqrt(R S)/2."""
    gap = (a + b) * sp.sqrt(R * S) - 2 * sp.sqrt(R * S * a * b)
    x, y = sp.symbols("x y", nonnegative=True)
    assert sp.factor(gap.subs({a: x ** 2, b: y ** 2})) == sp.sqrt(R * S) * (x - y) ** 2


def test_maximisation_over_the_dominator_split():
    """With u = a + b, f <= u (1 + sqrt(R S)) + 2 (S - u), maximal at u = S."""
    f_u = uu * (1 + sp.sqrt(R * S)) + 2 * (S - uu)
    slope = sp.diff(f_u, uu)
    assert sp.simplify(slope - (sp.sqrt(R * S) - 1)) == 0          # >= 0 for R S >= 1
    assert sp.simplify(f_u.subs(uu, S) - 1 - direct_T_expr(False)) == 0


def test_tight_T_from_composite_api():
    """The API with phi_1 = k sqrt(R S)/2, phi_2 = k - 1 gives S sqrt(R S) + S - 1."""
    assert sp.simplify(direct_T_expr(False) - (S * sp.sqrt(R * S) + S - 1)) == 0
    for r, s in ((1, 3), (9, 20)):
        exact = direct_composite(paper=False).T_exact(s, {"R": r})
        assert abs(exact - float(direct_T_expr(False).subs({R: r, S: s}))) < 1e-9 * exact


def test_paper_phi_over_estimates_the_proven_one():
    """With k = t^2 S: 2 S sqrt(R k) - k sqrt(R S)/2 = sqrt(R) S^(3/2) t (2 - t/2) >= 0."""
    t = sp.Symbol("t", positive=True)
    diff = (2 * S * sp.sqrt(R * k) - k * sp.sqrt(R * S) / 2).subs(k, t ** 2 * S)
    assert sp.simplify(diff - sp.sqrt(R) * t * S ** sp.Rational(3, 2) * (2 - t / 2)) == 0
    # 2 - t/2 > 0 for t <= 1 (k <= S)
    assert (2 - t / 2).subs(t, 1) > 0 and sp.diff(2 - t / 2, t) < 0


def _products(layer):
    """All product index tuples ((b,ci,h,w), (co,ci,i,j), (b,co,oh,ow)) of a tiny layer."""
    return list(iter_direct_products(layer))


layers = st.builds(
    lambda ci, co, h, w, kh, kw, sh, sw, ph, pw, dh: ConvLayer(
        n=1, c_in=ci, c_out=co, h_in=h + (kh - 1) * dh, w_in=w + kw - 1, k_h=kh, k_w=kw,
        stride=(sh, sw), padding=(ph, pw), dilation=(dh, 1)),
    st.integers(1, 2), st.integers(1, 2), st.integers(1, 5), st.integers(1, 5),
    st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),
    st.integers(0, 1), st.integers(0, 1), st.integers(1, 2))


@given(layers)
def test_reuse_never_exceeds_reuse_max(layer):
    """No input is read by more than R_max (window, tap) pairs per output channel."""
    counts = {}
    for x, w, o in _products(layer):
        if w[0] == 0:
            counts[x] = counts.get(x, 0) + 1
    assert max(counts.values(), default=0) <= layer.reuse_max


@given(layers, st.integers(0, 2 ** 31 - 1))
def test_convolution_loomis_whitney(layer, seed):
    """Products with operands in A, B and output in C are <= sqrt(R_max |A||B||C|)."""
    rng = np.random.default_rng(seed)
    prods = _products(layer)
    xs = sorted({p[0] for p in prods}); ws = sorted({p[1] for p in prods})
    os_ = sorted({p[2] for p in prods})
    for _ in range(10):
        A = {x for x in xs if rng.random() < rng.random()}
        B = {w for w in ws if rng.random() < rng.random()}
        C = {o for o in os_ if rng.random() < rng.random()}
        n = sum(1 for x, w, o in prods if x in A and w in B and o in C)
        assert n <= np.sqrt(layer.reuse_max * len(A) * len(B) * len(C)) + 1e-9
