"""Argument checks of the Winograd bound functions must not depend
on what their caches hold, and the chain bound's stated kappa must be the kappa it uses."""

import math
import re

import numpy as np
import pytest

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from iobound.winograd_bounds import winograd_bound_details, winograd_bound_values, winograd_leading_terms
from iobound.winograd_chain import winograd_chain_bound, winograd_chain_details, winograd_layer_caps


@pytest.mark.parametrize("fn", [winograd_bound_values, winograd_leading_terms])
@pytest.mark.parametrize("bad, good", [(True, 1), (2.0, 2), (np.float64(3.0), 3)])
def test_bad_e_rejected_even_after_the_cache_holds_its_equal(fn, bad, good):
    """e=True or 2.0 is refused whether or not e=1 or 2 of the same layer was asked before
    (the cache compares keys by equality: it must not answer them)."""
    layer = ConvLayer(n=1, c_in=3, h_in=9, w_in=9, c_out=5, k_h=3, k_w=3, padding=1)
    with pytest.raises(InvalidInputError):
        fn(layer, bad, 100)                      # cold cache: refused
    fn(layer, good, 100)                         # warm the cache with the equal int
    with pytest.raises(InvalidInputError):
        fn(layer, bad, 100)                      # still refused


@pytest.mark.parametrize("fn", [winograd_bound_values, winograd_leading_terms])
def test_numpy_integer_e_is_an_integer(fn):
    """A numpy integer e is an integer (as bound_report and winograd_vertex_count take it),
    on a cold cache too, and gives the int's values."""
    layer = ConvLayer(n=1, c_in=4, h_in=11, w_in=10, c_out=3, k_h=3, k_w=3, padding=1)
    got = fn(layer, np.int64(2), 64)
    assert got == fn(layer, 2, 64)


def _stated_kappa_sq(text: str) -> float:
    """Evaluate the ``min(a x b, c, ...)`` the assumption text states kappa^2 to be."""
    m = re.search(r"kappa\^2 = min\([^)]*\) = min\(([^)]*)\)", text)
    assert m, text
    terms = [math.prod(float(x) for x in t.split(" x ")) for t in m.group(1).split(", ")]
    return min(terms)


@pytest.mark.parametrize("e, r, size", [(2, 3, 56), (2, 3, 8), (6, 3, 40), (3, 5, 20), (4, 2, 9)])
def test_stated_kappa_is_the_kappa_used(e, r, size):
    """The assumptions the bound report gives state kappa^2 with the numbers filled in; that
    statement must evaluate to the kappa the bound is computed with (cross included)."""
    layer = ConvLayer(n=1, c_in=8, h_in=size, w_in=size, c_out=8, k_h=r, k_w=r, padding=r // 2)
    caps = winograd_layer_caps(layer, e)
    kappa_sq = min(caps.cross, caps.cap_in1 * caps.cap_w, caps.cap_in)   # the module's kappa^2
    assert caps.kappa ** 2 == pytest.approx(kappa_sq)
    for text in (winograd_chain_details(layer, e)[2],
                 winograd_bound_details(layer, e)["x_partition_chain"][3]):
        assert _stated_kappa_sq(text) == pytest.approx(kappa_sq, rel=1e-3)


@pytest.mark.parametrize("s", [float("nan"), float("inf"), 0, -5, True, "12"])
def test_chain_bound_refuses_a_bad_fast_memory(s):
    """S must be a number of words >= 1 as for winograd_bound_values; NaN is not answered
    with 0 nor a negative S with the value at 9."""
    layer = ConvLayer(n=1, c_in=256, h_in=16, w_in=16, c_out=256, k_h=3, k_w=3, padding=1)
    with pytest.raises(InvalidInputError):
        winograd_chain_bound(layer, 2, s)


@pytest.mark.parametrize("fn", [winograd_layer_caps, winograd_chain_details,
                                "winograd_gamma", "winograd_counts"])
@pytest.mark.parametrize("bad", [0, -1, True, 2.5, 33])
def test_every_public_function_of_e_refuses_a_bad_e_by_name(fn, bad):
    """e = 0 divided by zero, e = -1, True or 2.5 gave numbers: each is refused naming e."""
    if isinstance(fn, str):
        import iobound.winograd_vertex_counts as wvc
        fn = getattr(wvc, fn)
    layer = ConvLayer(n=1, c_in=3, h_in=8, w_in=8, c_out=4, k_h=3, k_w=3, padding=1)
    with pytest.raises(InvalidInputError, match="Winograd output tile e"):
        fn(layer, bad)


@pytest.mark.parametrize("layer", [ConvLayer(1, 8, 8, 8, 8, 3, 3, stride=2),
                                   ConvLayer(1, 8, 8, 8, 8, 3, 1)])
def test_gamma_refuses_a_layer_winograd_does_not_apply_to(layer):
    from iobound.winograd_vertex_counts import winograd_gamma
    with pytest.raises(InvalidInputError):
        winograd_gamma(layer, 2)


def test_a_numpy_integer_s_is_a_number_of_words():
    """np.int64(100) was refused as 'not a number of words' where bound_report took it."""
    from iobound.direct_bounds import direct_bound_values
    layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
    assert direct_bound_values(layer, np.int64(100)) == direct_bound_values(layer, 100)
    assert winograd_chain_bound(layer, 2, np.uint32(100)) == winograd_chain_bound(layer, 2, 100)


@pytest.mark.parametrize("s", [1.5, 100.0, np.float32(100), True, "100"])
def test_s_is_a_whole_number_of_words(s):
    """S counts red pebbles: a float S (1.5, or 100.0) gave values where bound_report
    refuses it; every bound function now takes S as bound_report does."""
    from iobound.direct_bounds import direct_bound_values, direct_leading_terms
    from iobound.winograd_bounds import winograd_bound_values, winograd_leading_terms
    layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
    for call in (lambda: direct_bound_values(layer, s), lambda: direct_leading_terms(layer, s),
                 lambda: winograd_bound_values(layer, 2, s),
                 lambda: winograd_leading_terms(layer, 2, s),
                 lambda: winograd_chain_bound(layer, 2, s)):
        with pytest.raises(InvalidInputError, match="fast memory S"):
            call()


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(deadline=None, max_examples=40)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 3), st.integers(0, 2),
       st.integers(4, 12), st.integers(1, 3), st.integers(1, 5000))
def test_the_chain_bound_evaluates_its_symbolic_expression(ci, co, r, pad, h, e, s):
    """winograd_chain_bound types the formula again for speed: it must be
    winograd_chain_expr with this layer's numbers (clamped at 0, S at least CHAIN_MIN_S);
    a changed constant in either (- 2S as - S, say) passed every other test."""
    import sympy as sp
    from hypothesis import assume

    from iobound.symbols import OUTPUTS, S
    from iobound.vertex_counts import direct_counts
    from iobound.winograd_chain import C_IN, CHAIN_MIN_S, KAPPA, N_CHAINS, winograd_chain_expr
    from iobound.winograd_vertex_counts import winograd_chain_count
    layer = ConvLayer(n=1, c_in=ci, h_in=h, w_in=h, c_out=co, k_h=r, k_w=r, padding=pad)
    assume(layer.h_out >= 1)
    value = winograd_chain_expr().subs({
        C_IN: ci, N_CHAINS: winograd_chain_count(layer, e),
        KAPPA: sp.Float(winograd_layer_caps(layer, e).kappa, 30),
        OUTPUTS: direct_counts(layer).outputs, S: sp.Float(max(s, CHAIN_MIN_S), 30)})
    assert winograd_chain_bound(layer, e, s) == pytest.approx(max(0.0, float(value)), rel=1e-9,
                                                              abs=1e-6)
