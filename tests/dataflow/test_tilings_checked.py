"""Every public function that takes a tiling checks its type and its fit, with the check
of direct_io / winograd_io: a tile larger than the layer was sized, costed and judged
optimal by the footprint, the flops and the optimality gap (``satisfies_optimality`` of a
100 x 100 x 1000 tile on a 14 x 14 layer was True), a Winograd tiling had its I/O counted
as a direct one, and a None or a dict was an AttributeError."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

import dataflow as d
from dataflow.flops import winograd_flops
from dataflow.stationary import stationary_footprint, stationary_io
from iobound import ConvLayer
from iobound.errors import InvalidInputError
from iobound.networks import get_layer
from kernels.analytic import flops, io_words

L4 = get_layer("resnet18.conv4_1b")   # 14 x 14 outputs, 256 channels


def _direct_calls(layer, t):
    """The dataflow functions taking a direct tiling ``t``."""
    return {
        "direct_io": lambda: d.direct_io(layer, t),
        "direct_footprint": lambda: d.direct_footprint(layer, t),
        "direct_paper_io": lambda: d.direct_paper_io(layer, t),
        "direct_optimality_gap": lambda: d.direct_optimality_gap(layer, t),
        "satisfies_optimality": lambda: d.satisfies_optimality(layer, t),
        "stationary_io": lambda: stationary_io(layer, t, "weight"),
        "stationary_footprint": lambda: stationary_footprint(layer, t, "input"),
    }


def _kernel_calls(layer, algorithm, t):
    """The kernels' functions taking the tile of ``t`` as a tuple."""
    tile = tuple(getattr(t, k) for k in ("e", "x", "y", "z")) if algorithm == "winograd" \
        else (t.x, t.y, t.z, t.alpha)
    return {"kernels io_words": lambda: io_words(layer, algorithm, tile),
            "kernels flops": lambda: flops(layer, algorithm, tile)}


def _winograd_calls(layer, t):
    """The dataflow functions taking a Winograd tiling ``t``."""
    return {
        "winograd_io": lambda: d.winograd_io(layer, t),
        "winograd_footprint": lambda: d.winograd_footprint(layer, t),
        "winograd_paper_io": lambda: d.winograd_paper_io(layer, t),
        "winograd_optimality_gap": lambda: d.winograd_optimality_gap(layer, t),
        "winograd_satisfies_optimality": lambda: d.winograd_satisfies_optimality(layer, t),
        "winograd_flops": lambda: winograd_flops(layer, t),
    }


def _outcomes(calls) -> dict:
    """Each call's error message, or None when it returned."""
    out = {}
    for name, call in calls.items():
        try:
            call()
            out[name] = None
        except InvalidInputError as exc:
            out[name] = str(exc)
    return out


@st.composite
def direct_layers_and_tilings(draw):
    """A small dense layer and a direct tiling, each field up to twice its dimension."""
    while True:
        try:
            layer = ConvLayer(n=1, c_in=draw(st.integers(1, 4)), h_in=draw(st.integers(1, 9)),
                              w_in=draw(st.integers(1, 9)), c_out=draw(st.integers(1, 4)),
                              k_h=draw(st.integers(1, 3)), k_w=draw(st.integers(1, 3)),
                              stride=(draw(st.integers(1, 2)), draw(st.integers(1, 2))),
                              padding=draw(st.integers(0, 1)))
            break
        except ValueError:
            continue
    t = d.DirectTiling(draw(st.integers(1, 2 * layer.w_out)), draw(st.integers(1, 2 * layer.h_out)),
                       draw(st.integers(1, 2 * layer.c_out)), draw(st.integers(1, 2 * layer.c_in)))
    return layer, t


@settings(max_examples=60, deadline=None)
@given(direct_layers_and_tilings())
def test_direct_tile_larger_than_the_layer_is_refused_by_every_function_alike(case):
    """A direct tile larger than the layer is refused by io, footprint, paper estimate, gap,
    optimality, the stationary orders, io words and flops alike, with direct_io's message;
    a tile that fits is accepted by all of them."""
    layer, t = case
    fits = t.x <= layer.w_out and t.y <= layer.h_out and t.z <= layer.c_out and t.alpha <= layer.c_in
    outcomes = _outcomes({**_direct_calls(layer, t), **_kernel_calls(layer, "direct", t)})
    if fits:
        assert set(outcomes.values()) == {None}, outcomes
    else:
        assert len(set(outcomes.values())) == 1 and None not in outcomes.values(), outcomes
        assert "is larger than" in outcomes["direct_io"]


@st.composite
def winograd_layers_and_tilings(draw):
    """A small stride-1 square-kernel layer and a Winograd tiling up to twice its output."""
    while True:
        r = draw(st.integers(1, 3))
        try:
            layer = ConvLayer(n=1, c_in=draw(st.integers(1, 3)), h_in=draw(st.integers(1, 9)),
                              w_in=draw(st.integers(1, 9)), c_out=draw(st.integers(1, 4)),
                              k_h=r, k_w=r, padding=draw(st.integers(0, 1)))
            break
        except ValueError:
            continue
    e = draw(st.integers(1, 3))
    t = d.WinogradTiling(e, e * draw(st.integers(1, -(-2 * layer.w_out // e) + 1)),
                         e * draw(st.integers(1, -(-2 * layer.h_out // e) + 1)),
                         draw(st.integers(1, 2 * layer.c_out)))
    return layer, t


@settings(max_examples=60, deadline=None)
@given(winograd_layers_and_tilings())
def test_winograd_tile_larger_than_the_layer_is_refused_by_every_function_alike(case):
    """The same for Winograd: refused by all (winograd_io's message) or accepted by all."""
    layer, t = case
    fits = t.x < layer.w_out + t.e and t.y < layer.h_out + t.e and t.z <= layer.c_out
    outcomes = _outcomes({**_winograd_calls(layer, t), **_kernel_calls(layer, "winograd", t)})
    if fits:
        assert set(outcomes.values()) == {None}, outcomes
    else:
        assert len(set(outcomes.values())) == 1 and None not in outcomes.values(), outcomes


def test_the_sweep_cases_are_refused():
    """The sweep's cases: a 200x-too-large flops count, a satisfied optimality, a 29.4M-word
    footprint for a tile of 100 x 100 x 1000 on a 14 x 14 x 256 layer; Winograd flops for a
    stride-2 layer."""
    big = d.DirectTiling(100, 100, 1000, 1000)
    for call in {**_direct_calls(L4, big), **_kernel_calls(L4, "direct", big)}.values():
        with pytest.raises(InvalidInputError, match="tile x=100 is larger than w_out=14"):
            call()
    with pytest.raises(InvalidInputError, match="Winograd needs stride 1"):
        flops(get_layer("resnet50.conv3_1"), "winograd", (2, 4, 4, 8))
    big_w = d.WinogradTiling(2, 100, 100, 1000)
    for call in {**_winograd_calls(L4, big_w), **_kernel_calls(L4, "winograd", big_w)}.values():
        with pytest.raises(InvalidInputError, match="tile x=100 is larger than w_out=14"):
            call()


WRONG_TILINGS = [None, {"x": 7, "y": 7, "z": 16, "alpha": 4}, (7, 7, 16, 4)]


@pytest.mark.parametrize("bad", WRONG_TILINGS + [d.WinogradTiling(2, 4, 4, 8)])
@pytest.mark.parametrize("name", sorted(_direct_calls(L4, d.DirectTiling(7, 7, 16, 4))))
def test_direct_functions_refuse_what_is_no_direct_tiling(name, bad):
    """None, a dict, a tuple or a WinogradTiling (whose I/O direct_io counted) is refused,
    naming the type wanted, not an AttributeError."""
    with pytest.raises(InvalidInputError, match="tiling must be a DirectTiling"):
        _direct_calls(L4, bad)[name]()


@pytest.mark.parametrize("bad", WRONG_TILINGS + [d.DirectTiling(2, 2, 2)])
@pytest.mark.parametrize("name", sorted(_winograd_calls(L4, d.WinogradTiling(2, 4, 4, 8))))
def test_winograd_functions_refuse_what_is_no_winograd_tiling(name, bad):
    """The same for the Winograd functions (a DirectTiling had no attribute 'e'; its gap was
    -0.56)."""
    with pytest.raises(InvalidInputError, match="tiling must be a WinogradTiling"):
        _winograd_calls(L4, bad)[name]()


def test_run_tiles_are_checked_by_the_paper_estimate():
    """direct_paper_io takes run tiles too, checked with the run dataflow's rule."""
    from dataflow.runs import RunTiling
    layer = ConvLayer(1, 4, 8, 8, 4, 1, 1)
    assert d.direct_paper_io(layer, RunTiling(16, 4)) > 0
    with pytest.raises(InvalidInputError, match="run m=65 is larger than h_out\\*w_out=64"):
        d.direct_paper_io(layer, RunTiling(65, 4))


@pytest.mark.parametrize("call", [
    lambda L: d.direct_paper_total(L, 64, processors=100),
    lambda L: d.winograd_paper_total(L, 2, 64, processors=100),
])
def test_paper_totals_refuse_a_block_below_one_word(call):
    """As evaluate_dataflow: S / N_p below one word has no dataflow (a number was returned)."""
    layer = ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=1)
    with pytest.raises(InvalidInputError, match="leaves no word for each of 100 processors"):
        call(layer)
    assert d.winograd_paper_total(layer, 2, 12288, processors=12288) > 0


@pytest.mark.parametrize("flag", [None, 0, 1, 2, "yes", "True"])
def test_evaluate_dataflow_divisors_must_be_a_bool(flag):
    """divisors=None, 0, 'yes' or 2 was taken for its truth value."""
    layer = ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=1)
    with pytest.raises(InvalidInputError, match="divisors must be True or False"):
        d.evaluate_dataflow(layer, 1024, divisors=flag)
    with pytest.raises(InvalidInputError, match="divisors must be True or False"):
        d.optimal_direct_tiles(layer, 1024, divisors=flag)
