"""Hostile arguments to the bounds API (iobound/errors.py): every public function that takes
a layer names a non-layer; Winograd e, S, axis sizes, pebble counts and flags are checked
integers (or bools), so a numpy integer gives the Python integer's answer and an impossible
value is one InvalidInputError naming it, never a wrong number or a raw exception."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from iobound import ConvLayer
from iobound.errors import InvalidInputError

LAYER = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=4, k_h=3, k_w=3, padding=1)


def _layer_calls():
    from iobound import (algorithms, direct_bounds, reuse_classes, vertex_counts, winograd_bounds,
                         winograd_chain, winograd_vertex_counts)
    return {
        "winograd_offered": lambda L: algorithms.winograd_offered(L),
        "direct_bound_values": lambda L: direct_bounds.direct_bound_values(L, 64),
        "direct_leading_terms": lambda L: direct_bounds.direct_leading_terms(L, 64),
        "direct_bound_details": lambda L: direct_bounds.direct_bound_details(L),
        "weighted_products": lambda L: reuse_classes.weighted_products(L),
        "effective_reuse": lambda L: reuse_classes.effective_reuse(L),
        "direct_counts": lambda L: vertex_counts.direct_counts(L),
        "direct_vertex_count": lambda L: vertex_counts.direct_vertex_count(L),
        "iter_direct_products": lambda L: vertex_counts.iter_direct_products(L),
        "winograd_bound_values": lambda L: winograd_bounds.winograd_bound_values(L, 2, 64),
        "winograd_leading_terms": lambda L: winograd_bounds.winograd_leading_terms(L, 2, 64),
        "winograd_bound_details": lambda L: winograd_bounds.winograd_bound_details(L, 2),
        "winograd_layer_caps": lambda L: winograd_chain.winograd_layer_caps(L, 2),
        "winograd_chain_bound": lambda L: winograd_chain.winograd_chain_bound(L, 2, 64),
        "winograd_chain_details": lambda L: winograd_chain.winograd_chain_details(L, 2),
        "winograd_counts": lambda L: winograd_vertex_counts.winograd_counts(L, 2),
        "winograd_vertex_count": lambda L: winograd_vertex_counts.winograd_vertex_count(L, 2),
        "winograd_vertex_count_lower":
            lambda L: winograd_vertex_counts.winograd_vertex_count_lower(L, 2),
        "winograd_products_lower": lambda L: winograd_vertex_counts.winograd_products_lower(L, 2),
        "winograd_gamma": lambda L: winograd_vertex_counts.winograd_gamma(L, 2),
        "winograd_chain_count": lambda L: winograd_vertex_counts.winograd_chain_count(L, 2),
    }


@pytest.mark.parametrize("bad", [None, {"c_in": 4}, "resnet18.conv1", [LAYER]])
@pytest.mark.parametrize("name", sorted(_layer_calls()))
def test_a_non_layer_is_named(name, bad):
    """An AttributeError or 'unhashable type: dict' (from a cache) before."""
    call = _layer_calls()[name]
    call(LAYER)
    with pytest.raises(InvalidInputError, match="layer must be a ConvLayer"):
        call(bad)


@pytest.mark.parametrize("e", [-1, 0, 1.5, math.nan, True, "2", 33])
def test_winograd_tiles_refuse_what_is_no_tile(e):
    """winograd_tiles(-1) was (-4, -4), 1.5 (3.0, 3.0), nan (nan, nan), 0 a ZeroDivisionError."""
    with pytest.raises(InvalidInputError, match="Winograd output tile e"):
        LAYER.winograd_tiles(e)


def test_a_numpy_e_is_the_int_e():
    """np.int8(3) gave np.int8 tile counts (which overflow in later products)."""
    got = LAYER.winograd_tiles(np.int8(3))
    assert got == LAYER.winograd_tiles(3) and all(type(t) is int for t in got)


@pytest.mark.parametrize("s", [1.5, 0, -3, 2 ** 41, math.inf, "64", None])
def test_the_pebble_counts_of_multi_block_are_checked(s):
    """bound_fast_memory(10**30) was 10**30 + 2, past the limit every bound applies."""
    from iobound.multi_block import bound_fast_memory
    with pytest.raises(InvalidInputError, match="block_words"):
        bound_fast_memory(s)


def test_a_pooled_fast_memory_past_the_limit_is_named():
    from iobound.limits import FAST_MEMORY_WORDS
    from iobound.multi_block import bound_fast_memory
    with pytest.raises(InvalidInputError, match="pooled fast memory S"):
        bound_fast_memory(FAST_MEMORY_WORDS.high // 2, cluster_blocks=4)
    assert bound_fast_memory(100, cluster_blocks=np.int64(3)) == 302


@pytest.mark.parametrize("cc", [[1, 2, 3], None, "86", (0, 9), (8.0, 6), (True, 0)])
def test_arch_of_takes_a_compute_capability_only(cc):
    """arch_of([1, 2]) was 'sm_12' for any pair-like thing; None a TypeError (cannot
    unpack)."""
    from iobound.device_checks import arch_of
    with pytest.raises(InvalidInputError, match="compute_capability"):
        arch_of(cc)


def test_arch_of_a_numpy_pair():
    from iobound.device_checks import arch_of
    assert arch_of((np.int64(8), np.int64(6))) == "sm_86"


@pytest.mark.parametrize("paper", ["", "yes", 1.5, None, object()])
def test_direct_composite_takes_a_flag(paper):
    """paper was read by truthiness: "" picked the tight form, any object the paper's."""
    from iobound.direct_bounds import direct_composite
    with pytest.raises(InvalidInputError, match="paper must be True or False"):
        direct_composite(paper)


@pytest.mark.parametrize("args, name", [((3, -1, 1), "stride"), ((3, 0, 1), "stride"),
                                        ((3, math.inf, 1), "stride"), ((10 ** 29, 2, 1), "k"),
                                        ((3, 1, None), "dilation")])
def test_axis_tap_classes_refuse_impossible_axes(args, name):
    """(3, -1, 1) gave (3, 3, 3), stride 0 a ZeroDivisionError, k = 10**29 ran for ever."""
    from iobound.reuse_classes import axis_tap_classes
    with pytest.raises(InvalidInputError, match=name):
        axis_tap_classes(*args)


def test_axis_tap_products_refuse_impossible_axes():
    """(6, 4, 3, inf, 0, 1) gave (0, 0, 0)."""
    from iobound.reuse_classes import axis_tap_products
    with pytest.raises(InvalidInputError, match="stride"):
        axis_tap_products(6, 4, 3, math.inf, 0, 1)
    with pytest.raises(InvalidInputError, match="pad"):
        axis_tap_products(6, 4, 3, 1, -1, 1)


@pytest.mark.parametrize("count", [math.inf, 10 ** 30, 33, -1, True, None, 2.0])
def test_interpolation_points_refuse_a_count_no_tile_takes(count):
    """inf and 10**30 never returned (quadratic in count); -1 was [], True [0]."""
    from iobound.winograd_transforms import interpolation_points
    with pytest.raises(InvalidInputError, match="count"):
        interpolation_points(count)


@pytest.mark.parametrize("kwargs, name", [
    ({"padding": (1, 2, 3)}, "padding"), ({"size": 8}, "size"), ({"tiles": None}, "tiles"),
    ({"e": 0}, "Winograd e"), ({"padding": (-1, 0)}, "pad"), ({"tiles": (4, 2.5)}, "tiles")])
def test_winograd_caps_check_their_pairs(kwargs, name):
    """A 3-tuple padding gave caps; a bad size or tiles a TypeError / IndexError."""
    from iobound.winograd_routing import winograd_caps
    args = {"e": 2, "r": 3, "padding": (1, 1), "size": (8, 8), "tiles": (4, 4)} | kwargs
    with pytest.raises(InvalidInputError, match=name):
        winograd_caps(**args)


def test_the_routing_caches_answer_true_as_nothing_else():
    """The caches compare keys by equality: the checks come first."""
    from iobound.winograd_routing import axis_routing, cross_routing
    axis_routing(2, 3, 1, 8, 4)
    with pytest.raises(InvalidInputError, match="Winograd e"):
        axis_routing(2.0, 3, 1, 8, 4)
    with pytest.raises(InvalidInputError, match="pad"):
        cross_routing(2, 3, True, 8, 4)


_INT_KINDS = [int, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
              np.uint64]


@settings(deadline=None, max_examples=40)
@given(st.sampled_from(_INT_KINDS), st.integers(2, 4), st.integers(64, 4096))
def test_numpy_integers_give_the_int_answers(kind, e, s):
    """np.int32(2) made winograd_paper_total negative and winograd_product_flops 0 on a
    large layer (products in 32 bits); np.uint32(2) an OverflowError in the chain bound.
    Every count and bound is the same for any integer type."""
    from dataflow.flops import winograd_product_flops
    from dataflow.winograd import winograd_paper_total
    from iobound.winograd_bounds import winograd_bound_values
    from iobound.winograd_chain import winograd_chain_bound
    big = ConvLayer(8, 512, 226, 226, 512, 3, 3)
    ks = kind(s) if kind is int or s <= np.iinfo(kind).max else s   # S as the type holds it
    assert winograd_product_flops(big, kind(e)) == winograd_product_flops(big, e)
    assert winograd_paper_total(big, kind(e), ks) == winograd_paper_total(big, e, s)
    assert winograd_chain_bound(LAYER, kind(e), ks) == winograd_chain_bound(LAYER, e, s)
    assert winograd_bound_values(LAYER, kind(e), ks) == winograd_bound_values(LAYER, e, s)
