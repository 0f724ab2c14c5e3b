"""The dataflows' closed forms that the toolkit reports but proofs/ did not derive yet.

1. Eq. 13 from Eq. 12 (paper Sec. 5.2): the read estimate
   ``HWC / (x y z) * K C_in (z + x y / R)`` at the paper's choices ``x y z = S / N_p`` and
   ``x y = R z`` is ``2 HWC K C_in / sqrt(R S / N_p)``; with the output writes ``HWC`` this
   is ``dataflow.direct.direct_paper_total``.
2. The Winograd total after Eq. 14 (erratum 8): Eq. 14's reads at ``2 n^2 x y z / e^2 =
   S / N_p`` and ``x y = r^2 z`` are ``sqrt(2)`` times the printed read term, which is what
   ``dataflow.winograd.winograd_paper_total`` returns.
3. The dataflow's reuse ``R_df = k_h k_w / (rho_h rho_w)`` of
   ``dataflow.continuous_optimum.dataflow_reuse``: along one axis the inputs a long run of
   ``M`` outputs reads are ``{o mu + j d : o < M, j < k}``; modulo ``mu`` they are the
   residues ``{j d mod mu : j < k}``, which are multiples of ``g = gcd(mu, d)`` and
   distinct for ``j < mu / g`` (``d / g`` is a unit mod ``mu / g``), so there are
   ``rho = min(k, mu / g)`` of them and the run reads ``rho M + O(1)`` inputs
   (a combinatorial step: counted exhaustively on small values).
4. The Winograd model constant ``c = 2 (e + r - 1)^2 / e^2`` of
   ``winograd_continuous_optimum``: the dataflow's registers,
   ``2 (x/e)(y/e) z (e + r - 1)^2`` (``winograd_block_words``), are ``c x y z``.
"""

import math

import pytest
import sympy as sp

from dataflow.continuous_optimum import dataflow_reuse
from dataflow.direct import direct_paper_total
from dataflow.winograd import winograd_block_words, winograd_paper_total
from iobound.layer import ConvLayer

HWC, K, C_in, R, S, Np = sp.symbols("HWC K C_in R S N_p", positive=True)
x, y, z, e, r = sp.symbols("x y z e r", positive=True)


def _eq13():
    m = sp.Symbol("m", positive=True)   # m = x y
    reads = HWC / (m * z) * K * C_in * (z + m / R)
    z_opt = [s for s in sp.solve([m * z - S / Np, m - R * z], [m, z], dict=True)
             if s[z].is_positive][0]
    return sp.simplify(reads.subs(z_opt)), z_opt


def test_eq13_is_eq12_at_the_papers_choices():
    reads, point = _eq13()
    assert sp.simplify(reads - 2 * HWC * K * C_in / sp.sqrt(R * S / Np)) == 0
    assert sp.simplify(point[sp.Symbol("m", positive=True)] - sp.sqrt(R * S / Np)) == 0


@pytest.mark.parametrize("layer, s, p", [
    (ConvLayer(2, 3, 24, 24, 8, 3, 3, stride=(2, 2)), 144, 1),
    (ConvLayer(1, 5, 17, 13, 6, 5, 3, padding=(2, 1)), 1000, 3),
    (ConvLayer(1, 8, 12, 12, 8, 3, 3, groups=4), 4096, 2),
])
def test_direct_paper_total_is_the_derived_eq13(layer, s, p):
    reads, _ = _eq13()
    hwc = layer.n * layer.h_out * layer.w_out * layer.c_out
    want = float(reads.subs({HWC: hwc, K: layer.k_h * layer.k_w, C_in: layer.c_in_per_group,
                             R: sp.Rational(layer.k_h * layer.k_w, layer.stride[0] * layer.stride[1]),
                             S: s, Np: p})) + hwc
    assert direct_paper_total(layer, s, p) == pytest.approx(want, rel=1e-12)


def test_winograd_total_is_eq14_over_sqrt2():
    n = sp.Symbol("n", positive=True)   # n = e + r - 1
    m = sp.Symbol("m", positive=True)
    reads = HWC / (m * z) * (m * C_in + z * r ** 2 * C_in)
    sol = [s for s in sp.solve([2 * n ** 2 * m * z / e ** 2 - S / Np, m - r ** 2 * z], [m, z],
                               dict=True) if s[z].is_positive]
    assert len(sol) == 1
    sol = sol[0]
    derived = sp.simplify(reads.subs(sol))
    printed = 2 * HWC * C_in * r * n / (e * sp.sqrt(S / Np))
    assert sp.simplify(derived / printed - sp.sqrt(2)) == 0
    layer = ConvLayer(2, 5, 16, 16, 8, 3, 3, padding=(1, 1))
    hwc = layer.n * layer.h_out * layer.w_out * layer.c_out
    for ev, s, p in ((2, 1024, 1), (3, 5000, 4), (4, 777, 2)):
        want = float(printed.subs({HWC: hwc, C_in: layer.c_in, r: 3, e: ev, n: ev + 2, S: s,
                                   Np: p})) + hwc
        assert winograd_paper_total(layer, ev, s, p) == pytest.approx(want, rel=1e-12)


def test_residues_of_a_dilated_strided_window():
    """Step 3's count: |{j d mod mu : j < k}| = min(k, mu / gcd(mu, d)), exhaustively."""
    for k in range(1, 9):
        for mu in range(1, 9):
            for d in range(1, 9):
                assert len({j * d % mu for j in range(k)}) == min(k, mu // math.gcd(mu, d))


def test_dataflow_reuse_is_k_over_the_residue_count():
    for kh, kw in ((1, 1), (3, 3), (5, 2), (7, 7)):
        for mu in ((1, 1), (2, 2), (3, 2), (4, 1)):
            for d in ((1, 1), (2, 2), (3, 2)):
                layer = ConvLayer(1, 1, 64, 64, 1, kh, kw, stride=mu, dilation=d)
                rho = [len({j * dd % m for j in range(k)})
                       for k, m, dd in ((kh, mu[0], d[0]), (kw, mu[1], d[1]))]
                assert dataflow_reuse(layer) == pytest.approx(kh * kw / (rho[0] * rho[1]))


def test_winograd_model_constant_is_the_registers_per_output():
    for ev in (2, 3, 4):
        for rv in (2, 3, 5):
            layer = ConvLayer(1, 1, 20, 20, 1, rv, rv)
            for xv, yv, zv in ((ev, ev, 1), (2 * ev, 3 * ev, 4)):
                regs = winograd_block_words(layer, ev, xv, yv, zv).register_words
                c = sp.Rational(2 * (ev + rv - 1) ** 2, ev ** 2)
                assert regs == c * xv * yv * zv
