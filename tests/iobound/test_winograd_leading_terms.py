"""Winograd leading terms against the closed forms the module docstrings state.

The paper's Thm 4.12 leading term ``W_out H_out C_out C_in (e + r - 1) r / (e sqrt(S))`` is
reported for reference; for F(2x2, 3x3) on full tiles (kappa = 1, every tile full) the
chain bound's leading term ``2 MACs / sqrt(S)`` is 4/3 of it (winograd_bounds docstring),
and the X-partition leading term is ``sqrt(2) MACs / (n sqrt(gamma) sqrt(S))``.
"""

import math

import pytest
from hypothesis import given, settings, strategies as st

from iobound.layer import ConvLayer
from iobound.winograd_bounds import winograd_leading_terms
from iobound.winograd_vertex_counts import winograd_gamma, winograd_products_lower


@settings(deadline=None, max_examples=12)
@given(st.integers(1, 2), st.integers(1, 16), st.integers(1, 16), st.integers(1, 3),
       st.integers(1, 3), st.integers(0, 1), st.integers(1, 4096))
def test_paper_thm_4_12_term_is_the_printed_formula(nb, ci, co, r, e, pad, s):
    """paper_thm_4_12 = n H_out W_out C_out C_in (e + r - 1) r / (e sqrt(S))."""
    layer = ConvLayer(n=nb, c_in=ci, h_in=9, w_in=7, c_out=co, k_h=r, k_w=r, padding=(pad, pad))
    want = (nb * layer.h_out * layer.w_out * co * ci * (e + r - 1) * r / (e * math.sqrt(s)))
    assert winograd_leading_terms(layer, e, s)["paper_thm_4_12"] == pytest.approx(want, rel=1e-12)


@settings(deadline=None, max_examples=12)
@given(st.integers(1, 8), st.integers(1, 8), st.integers(2, 4), st.integers(9, 4096))
def test_chain_leading_term_is_four_thirds_of_the_paper_at_f2x3(ci, co, half, s):
    """F(2x2, 3x3) with every tile full: chain leading term / paper term = 4/3, and the
    X-partition leading term is sqrt(2) MACs / (n sqrt(gamma) sqrt(S)) with n = 4."""
    h_out = 2 * half
    layer = ConvLayer(n=1, c_in=ci, h_in=h_out + 2, w_in=h_out + 2, c_out=co, k_h=3, k_w=3)
    lead = winograd_leading_terms(layer, 2, s)
    assert lead["x_partition_chain"] / lead["paper_thm_4_12"] == pytest.approx(4 / 3, rel=1e-6)  # kappa = 1 numerically
    macs = winograd_products_lower(layer, 2)
    assert macs == 16 * ci * co * half * half
    want = math.sqrt(2) * macs / (4 * math.sqrt(winograd_gamma(layer, 2)) * math.sqrt(s))
    assert lead["x_partition"] == pytest.approx(want, rel=1e-12)


@settings(deadline=None, max_examples=20)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(1, 3), st.integers(1, 6),
       st.integers(9, 4096))
def test_chain_leading_term_is_2n_over_e_r_kappa_of_the_papers(e, r, tiles, ci, s):
    """Every tile full: the chain leading term over Thm 4.12's is ``2n / (e r kappa)``,
    n = e + r - 1 (the winograd_bounds docstring; 4/3 only at F(2x2, 3x3))."""
    from iobound.winograd_chain import winograd_layer_caps
    h_out = e * tiles
    layer = ConvLayer(n=1, c_in=ci, h_in=h_out + r - 1, w_in=h_out + r - 1, c_out=2, k_h=r, k_w=r)
    lead = winograd_leading_terms(layer, e, s)
    kappa = winograd_layer_caps(layer, e).kappa
    want = 2 * (e + r - 1) / (e * r * kappa)
    assert lead["x_partition_chain"] / lead["paper_thm_4_12"] == pytest.approx(want, rel=1e-9)
