"""The algorithm types' contract (iobound.algorithms) beyond the names.

References: the documented registry behaviour (registration order, bad input for any
unknown key), the Winograd e limit of :mod:`iobound.limits` (1..32), the layer's own
Winograd rule for ``check``, the bound modules each family wraps, and the paper's
Thm 4.12 leading term ``W_out H_out C_out C_in (e+r-1) r / (e sqrt(S))`` (DESIGN.md).
"""

import math

import pytest

from iobound import direct_bounds, winograd_bounds
from iobound.algorithms import DIRECT, WINOGRAD, Registry, algorithm_name
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer

LAYER = ConvLayer(1, 4, 10, 10, 8, 3, 3, padding=1)


def test_registry_keeps_registration_order_and_refuses_any_unknown_key():
    r = Registry("widget")
    r.register("winograd", 2)
    r.register("direct", 1)
    assert r.names() == ("winograd", "direct") and list(r) == [2, 1]
    for bad in (["direct"], {"a": 1}, "fft"):
        with pytest.raises(InvalidInputError, match="unknown widget"):
            r.get(bad)


def test_algorithm_name_refuses_unknown_names():
    with pytest.raises(InvalidInputError, match="unknown algorithm 'fft'"):
        algorithm_name("fft")


def test_winograd_e_limit():
    assert WINOGRAD.parameter(32) == 32
    with pytest.raises(InvalidInputError, match="Winograd output tile e"):
        WINOGRAD.parameter(33)


def test_check_raises_where_winograd_does_not_apply():
    strided = LAYER.replace(stride=2)
    with pytest.raises(InvalidInputError, match="stride"):
        WINOGRAD.check(strided)
    WINOGRAD.check(LAYER)
    DIRECT.check(strided)


@pytest.mark.parametrize("S", [64, 1000, 20000])
def test_bound_parts_are_the_bound_modules_at_the_given_e(S):
    """Each family's parts are its bound module's at (layer, S[, e]); Winograd's default e is
    2, a bad e is refused, and its paper leading term is Thm 4.12's formula."""
    d = DIRECT.bound_parts(LAYER, S)
    assert d.values == direct_bounds.direct_bound_values(LAYER, S)
    assert d.leading_terms == direct_bounds.direct_leading_terms(LAYER, S)
    for e in (2, 3, 4):
        w = WINOGRAD.bound_parts(LAYER, S, e)
        assert w.values == winograd_bounds.winograd_bound_values(LAYER, e, S)
        thm = LAYER.w_out * LAYER.h_out * LAYER.c_out * LAYER.c_in * (e + 2) * 3 / (e * math.sqrt(S))
        assert w.leading_terms["paper_thm_4_12"] == pytest.approx(thm, rel=1e-12)
    assert WINOGRAD.bound_parts(LAYER, S, None).values == WINOGRAD.bound_parts(LAYER, S, 2).values
    with pytest.raises(InvalidInputError, match="Winograd output tile e"):
        WINOGRAD.bound_parts(LAYER, S, 0)
