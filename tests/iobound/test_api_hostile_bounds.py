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


# --- composite algorithms (the second probe) --------------------------------------------

def _alg(*phis):
    from iobound.composite import CompositeAlgorithm, CompositeStep
    return CompositeAlgorithm(tuple(CompositeStep(str(i), p) for i, p in enumerate(phis)))


def test_a_phi_that_drops_is_no_relaxed_bound():
    """A Piecewise phi whose pieces rise but which drops at a breakpoint passed the
    derivative check: the relaxed T(3) was 6 where the exact maximum is 13, so the lower
    bound built on it was invalid."""
    import sympy as sp

    from iobound.symbols import S, k
    alg = _alg(sp.Piecewise((10 * k, k < 2), (k, True)))
    assert alg.T_exact(3) == 13.0
    with pytest.raises(InvalidInputError, match="not provably non-decreasing"):
        alg.T_expr()
    rising = _alg(sp.sqrt(k) + k)
    assert rising.T_expr().subs(S, 3) >= rising.T_exact(3)


@pytest.mark.parametrize("phi", ["nan", "oo", "zoo", "I*k"])
def test_a_phi_that_is_no_finite_real_number_is_refused(phi):
    """T_expr gave nan, oo or zoo; T_exact dropped an imaginary part with a warning."""
    import sympy as sp
    alg = _alg(sp.sympify(phi))
    with pytest.raises(InvalidInputError, match="finite real|real numbers"):
        alg.T_expr()
    with pytest.raises(InvalidInputError, match="finite real|real numbers"):
        alg.T_exact(3)


def test_a_callable_phi_that_gives_complex_numbers_is_refused():
    from iobound.composite import CompositeAlgorithm, CompositeStep
    alg = CompositeAlgorithm((CompositeStep("c", lambda k: k * 1j),))
    with pytest.raises(InvalidInputError, match="real numbers"):
        alg.T_exact(3)


def test_t_exact_enumerates_the_simplex_only():
    """20 steps at s = 2 (231 points) built 3^20 tuples and ran past 20 s; a numpy s
    passed the size guard by overflowing."""
    import itertools

    import sympy as sp

    from iobound.composite import _simplex
    from iobound.symbols import k
    assert _alg(*([k] * 20)).T_exact(2) == 2 + 20 * 2   # all of s in k_1, carried on
    for s, n in ((0, 3), (4, 1), (3, 3), (5, 2)):
        want = sorted(c for c in itertools.product(range(s + 1), repeat=n) if sum(c) <= s)
        assert sorted(map(tuple, _simplex(s, n).tolist())) == want
    with pytest.raises(InvalidInputError, match="points"):
        _alg(k, k).T_exact(np.int64(3_100_000_000))
    assert _alg(k).T_exact(np.uint8(255)) == _alg(k).T_exact(255)
    with pytest.raises(InvalidInputError, match="max_points"):
        _alg(k).T_exact(3, max_points=None)
    with pytest.raises(InvalidInputError, match="max_points"):
        _alg(sp.Integer(1) * k).T_exact(3, max_points=float("nan"))


@pytest.mark.parametrize("params, name", [
    ({"R": np.True_}, "R"), ({"R": "2"}, "R"), ({"R": 10 ** 400}, "R"), ({"k": 5}, "k"),
    ({"S": 100}, "S"), ({"R": 2, "1x": 3}, "1x")])
def test_params_are_real_numbers_of_parameters(params, name):
    """np.True_ was taken as 1 where True is refused, "2" parsed; k or S a SyntaxError from
    the compiled function, 10**400 an OverflowError."""
    from iobound.symbols import R, k
    with pytest.raises(InvalidInputError, match=name):
        _alg(R * k).T_exact(3, params)


def test_phi_without_a_numeric_value_is_named():
    """An undefined function f(k) was a NameError, a huge constant an OverflowError."""
    import sympy as sp

    from iobound.symbols import k
    with pytest.raises(InvalidInputError, match="no numeric value|finite real"):
        _alg(sp.Function("f")(k)).T_exact(3)
    with pytest.raises(InvalidInputError, match="no numeric value|finite real"):
        _alg(sp.Integer(10 ** 400) * k).T_exact(3)


def test_step_and_algorithm_arguments_are_checked():
    import sympy as sp

    from iobound.composite import CompositeAlgorithm, CompositeStep, composite_bound_expr
    from iobound.symbols import S, k
    step = CompositeStep("a", 2 * k)
    with pytest.raises(InvalidInputError, match="which"):
        step.evaluate("foo", [1.0], 3)
    with pytest.raises(InvalidInputError, match="s must be"):
        step.evaluate("phi", [1.0], "x")
    with pytest.raises(InvalidInputError, match="arg"):
        step.evaluate("phi", {}, 3)
    with pytest.raises(InvalidInputError, match="arg"):
        step.symbolic("phi", "S+1")
    with pytest.raises(InvalidInputError, match="step name"):
        CompositeStep(None, k)
    with pytest.raises(InvalidInputError, match="algorithm name"):
        CompositeAlgorithm((step,), name=5)
    with pytest.raises(InvalidInputError, match="ks must be"):
        _alg(k, k).objective((S,))
    for bad in (5, None, "S", sp.Integer(0), sp.nan, sp.Eq(S, 1)):
        with pytest.raises(InvalidInputError, match="T must be"):
            composite_bound_expr(bad)


# --- Device (the second probe) ------------------------------------------------------------

@pytest.mark.parametrize("field_name", ["dram_bandwidth_gbs", "fp32_peak_gflops"])
@pytest.mark.parametrize("value", [1e-320, 1e300, np.float32(1e-45), 0.0, -1.0])
def test_device_rates_outside_any_gpu_are_refused(field_name, value):
    """1e-320 GB/s made every memory time inf, 1e300 every time 0."""
    import dataclasses

    from iobound.devices import get_device
    with pytest.raises(InvalidInputError, match=field_name):
        dataclasses.replace(get_device("v100"), **{field_name: value})


def test_device_rates_are_stored_as_floats():
    """A numpy float was kept, and json.dumps(to_dict()) failed."""
    import dataclasses
    import json

    from iobound.devices import get_device
    d = dataclasses.replace(get_device("v100"), dram_bandwidth_gbs=np.float32(900.0),
                            fp32_peak_gflops=np.uint64(15700))
    assert type(d.dram_bandwidth_gbs) is float and type(d.fp32_peak_gflops) is float
    json.dumps(d.to_dict())


@pytest.mark.parametrize("aliases", ["abc", None, 5, ("",), ("a\x00",)])
def test_device_from_dict_checks_aliases(aliases):
    """A string became ('a', 'b', 'c'); None or 5 a TypeError."""
    from iobound.device_spec import Device
    from iobound.devices import get_device
    with pytest.raises(InvalidInputError, match="alias|device name"):
        Device.from_dict({**get_device("v100").to_dict(), "aliases": aliases})


@pytest.mark.parametrize("amount", [-5, float("nan"), True, "9", None, [1], 10 ** 400,
                                    np.array([1.0, -1.0]), np.array(["a"])])
def test_roofline_times_take_amounts(amount):
    """-5 bytes took -5.6e-09 ms, NaN gave nan, True was 1 byte."""
    from iobound.devices import get_device
    v100 = get_device("v100")
    with pytest.raises(InvalidInputError, match="nbytes"):
        v100.memory_time_ms(amount)
    with pytest.raises(InvalidInputError, match="flops"):
        v100.compute_time_ms(amount)
    assert v100.memory_time_ms(np.array([9e8, 0])).tolist() == [1.0, 0.0]
