"""Optimal tiles: the SymPy optimum and the integer search against brute force."""

import itertools

import pytest
import sympy as sp
from hypothesis import given, strategies as st

from dataflow.direct import DirectTiling, direct_footprint, direct_io
from dataflow.optimal_tiles import (
    A, ALPHA, C, K, S, continuous_optimum_expressions, dataflow_reuse,
    direct_continuous_optimum, optimal_direct_tiles, optimal_winograd_tiles,
    winograd_continuous_optimum,
)
from dataflow.winograd import WinogradTiling, winograd_footprint, winograd_io
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from layer_cases import small_square_layers


def brute_direct(layer, s, divisors):
    best = None
    for x, y, z in itertools.product(range(1, layer.w_out + 1), range(1, layer.h_out + 1),
                                     range(1, layer.c_out + 1)):
        if divisors and (layer.w_out % x or layer.h_out % y or layer.c_out % z):
            continue
        t = DirectTiling(x, y, z)
        fp = direct_footprint(layer, t).total
        if fp <= s:
            key = (direct_io(layer, t).total, fp)
            best = key if best is None or key < best else best
    return best


@given(small_square_layers(), st.integers(10, 400))
def test_direct_search_matches_brute_force_any_tiles(layer, s):
    """With divisors=False the chosen tiling has the least exact I/O of all fitting tilings."""
    best = brute_direct(layer, s, divisors=False)
    if best is None:
        with pytest.raises(ValueError, match="too small"):
            optimal_direct_tiles(layer, s, divisors=False)
        return
    choice = optimal_direct_tiles(layer, s, divisors=False)
    assert (choice.io.total, choice.footprint.total) == best


@given(small_square_layers(), st.integers(10, 400))
def test_direct_search_matches_brute_force_divisors(layer, s):
    """With divisors=True the choice is the best dividing tiling whenever one fits."""
    best = brute_direct(layer, s, divisors=True)
    if best is None:
        return
    choice = optimal_direct_tiles(layer, s)
    assert choice.divisible and (choice.io.total, choice.footprint.total) == best


@given(small_square_layers(winograd=True), st.integers(1, 3), st.integers(40, 900))
def test_winograd_search_matches_brute_force(layer, e, s):
    """The Winograd choice has the least exact I/O of all fitting tilings with x, y multiples of e."""
    best = None
    for x, y, z in itertools.product(range(e, layer.w_out + e, e), range(e, layer.h_out + e, e),
                                     range(1, layer.c_out + 1)):
        t = WinogradTiling(e, x, y, z)
        fp = winograd_footprint(layer, t).total
        if fp <= s:
            key = (winograd_io(layer, t).total, fp)
            best = key if best is None or key < best else best
    if best is None:
        with pytest.raises(ValueError, match="too small"):
            optimal_winograd_tiles(layer, s, e, divisors=False)
        return
    choice = optimal_winograd_tiles(layer, s, e, divisors=False)
    assert (choice.io.total, choice.footprint.total) == best


def test_lagrange_condition_is_aP_equals_Kz():
    """The SymPy optimum satisfies a P = K z and the footprint constraint exactly."""
    p_opt, z_opt = continuous_optimum_expressions()
    assert sp.simplify(A * p_opt - K * z_opt) == 0
    g = C * p_opt * z_opt + ALPHA * (A * p_opt + K * z_opt) - S
    assert sp.simplify(g) == 0


@given(st.floats(0.5, 4), st.floats(1, 49), st.floats(1, 20), st.integers(1, 4), st.integers(100, 10**5),
       st.floats(-0.3, 0.3))
def test_continuous_optimum_beats_constrained_neighbours(a, k, c, alpha, s, eps):
    """Moving along the constraint g = S away from the optimum never lowers f."""
    p_opt, z_opt = continuous_optimum_expressions()
    vals = {A: a, K: k, C: c, ALPHA: alpha, S: s}
    p0, z0 = float(p_opt.subs(vals)), float(z_opt.subs(vals))

    def f(p, z):
        return (a * p + k * z) / (p * z)

    z1 = z0 * (1 + eps)
    p1 = (s - alpha * k * z1) / (c * z1 + alpha * a)   # solve g = S for P
    if p1 > 0:
        assert f(p1, z1) >= f(p0, z0) * (1 - 1e-12)


def test_dataflow_reuse_forms():
    """R_df is k^2 at stride 1, k^2/mu^2 for overlapping windows, 1 for strided 1x1."""
    assert dataflow_reuse(ConvLayer(1, 1, 9, 9, 1, 3, 3)) == 9
    assert dataflow_reuse(ConvLayer(1, 1, 9, 9, 1, 3, 3, stride=(2, 2))) == 2.25
    assert dataflow_reuse(ConvLayer(1, 1, 9, 9, 1, 1, 1, stride=(2, 2))) == 1


def test_continuous_optimum_fills_memory():
    """The continuous direct optimum uses exactly S words (accumulators plus staging)."""
    layer = ConvLayer(1, 64, 56, 56, 64, 3, 3, padding=(1, 1))
    opt = direct_continuous_optimum(layer, 12288)
    assert opt.x * opt.y * opt.z + opt.x * opt.y + 9 * opt.z == pytest.approx(12288)


def test_winograd_continuous_optimum_condition():
    """The Winograd continuous optimum has x y = r^2 z and fills S words."""
    layer = ConvLayer(1, 64, 56, 56, 64, 3, 3, padding=(1, 1))
    opt = winograd_continuous_optimum(layer, 4, 12288)
    assert opt.x * opt.y == pytest.approx(9 * opt.z)
    assert 2 * 36 / 16 * opt.x * opt.y * opt.z + opt.x * opt.y + 9 * opt.z == pytest.approx(12288)


def test_integer_choice_near_continuous_io():
    """For a large layer the exact I/O of the chosen tiles is within 1.6x of the halo-free optimum."""
    layer = ConvLayer(1, 64, 56, 56, 64, 3, 3, padding=(1, 1))
    choice = optimal_direct_tiles(layer, 12288)
    assert choice.continuous.io <= choice.io.total <= 1.6 * choice.continuous.io


def test_too_small_memory_message():
    """A memory below the smallest block is a ValueError with the needed size."""
    with pytest.raises(ValueError, match="needs 19 words"):
        optimal_direct_tiles(ConvLayer(1, 1, 9, 9, 1, 3, 3), 10)


def test_winograd_divisor_fallback():
    """When no multiple of e divides the output (7 with e=2), overhanging tiles are used."""
    layer = ConvLayer(1, 4, 9, 9, 8, 3, 3)   # w_out = h_out = 7
    choice = optimal_winograd_tiles(layer, 2000, 2)
    assert not choice.divisible and choice.tiling.x % 2 == 0 and choice.footprint.total <= 2000


@given(st.floats() | st.text(max_size=3) | st.none() | st.booleans()
       | st.integers(max_value=0) | st.integers(min_value=2**40 + 1))
def test_fast_memory_must_be_a_limited_integer(s):
    """S is a whole number of words within FAST_MEMORY_WORDS: a str/None was a
    TypeError and 10**30 ran numpy on it; named InvalidInputError now."""
    layer = ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=(1, 1))
    with pytest.raises(InvalidInputError, match="fast_memory"):
        optimal_direct_tiles(layer, s)
    with pytest.raises(InvalidInputError, match="fast_memory"):
        optimal_winograd_tiles(layer, s)
    with pytest.raises(InvalidInputError, match="alpha"):
        optimal_direct_tiles(layer, 128, alpha=s)
