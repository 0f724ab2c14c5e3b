"""The chain X-partition bounds below the fast memory their proofs need.

The direct chain bound is proven for S >= 9 (its shared-boundary form for S >= 11) and the
Winograd chain bound for S >= 9; below, each is reported at its value at that least S,
which stays valid because more red pebbles never cost I/O. So the reported value is
constant for every S up to 9, and the Winograd bound's two evaluations (the compiled
SymPy form and :func:`iobound.winograd_chain.winograd_chain_bound`) agree at every S.
"""

import pytest
from hypothesis import given, settings, strategies as st

from iobound.direct_bounds import CHAIN_MIN_S, direct_bound_values
from iobound.layer import ConvLayer
from iobound.winograd_bounds import winograd_bound_values
from iobound.winograd_chain import winograd_chain_bound

layers = st.builds(
    lambda ci, co, h, k, s, p: ConvLayer(n=1, c_in=ci, c_out=co, h_in=h + k - 1, w_in=h + k - 1,
                                         k_h=k, k_w=k, stride=(s, s), padding=(p, p)),
    st.integers(4, 64), st.integers(4, 64), st.integers(2, 12), st.integers(1, 3),
    st.integers(1, 2), st.integers(0, 1))


@settings(deadline=None, max_examples=30)
@given(layers, st.integers(1, CHAIN_MIN_S))
def test_direct_chain_bound_is_its_value_at_nine_below_nine(layer, s):
    """x_partition_chain(S) = x_partition_chain(9) for every S <= 9."""
    at_min = direct_bound_values(layer, CHAIN_MIN_S)["x_partition_chain"]
    assert direct_bound_values(layer, s)["x_partition_chain"] == pytest.approx(at_min, rel=1e-12)


wino_layers = st.builds(
    lambda ci, co, h, p: ConvLayer(n=1, c_in=ci, c_out=co, h_in=h, w_in=h, k_h=3, k_w=3,
                                   padding=(p, p)),
    st.integers(8, 64), st.integers(8, 64), st.integers(4, 14), st.integers(0, 1))


@settings(deadline=None, max_examples=30)
@given(wino_layers, st.sampled_from([2, 3, 4]), st.integers(1, 40))
def test_winograd_chain_bound_forms_agree_and_clamp_below_nine(layer, e, s):
    """The compiled x_partition_chain equals winograd_chain_bound, and both equal their value
    at S = 9 for every S <= 9."""
    value = winograd_bound_values(layer, e, s)["x_partition_chain"]
    assert value == pytest.approx(winograd_chain_bound(layer, e, s), rel=1e-12, abs=1e-9)
    if s <= 9:
        assert value == pytest.approx(winograd_bound_values(layer, e, 9)["x_partition_chain"],
                                      rel=1e-12, abs=1e-9)
        assert winograd_chain_bound(layer, e, s) == pytest.approx(
            winograd_chain_bound(layer, e, 9), rel=1e-12, abs=1e-9)
