"""Weight-, input- and output-stationary direct dataflows: exact I/O, played games, the best choice."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings, strategies as st

from dataflow.dag_direct import direct_conv_dag
from dataflow.direct import DirectTiling
from dataflow.pebble import play
from dataflow.stationary import (ORDERS, best_direct_dataflow, stationary_footprint, stationary_io,
                                 stationary_schedule)
from iobound.layer import ConvLayer
from iobound.multi_block import bound_fast_memory
from iobound.report import bound_report
from layer_cases import small_direct_cases


@st.composite
def cases(draw):
    """A small layer (batch up to 2), a tiling of it and an order."""
    layer, tiling = draw(small_direct_cases(n_max=2, c_max=4))
    return layer, tiling, draw(st.sampled_from(ORDERS))


@given(cases())
def test_played_game_achieves_the_formula(case):
    """Played block by block with the footprint (+2 for the in-place update) in Belady's
    game, each order moves at most its exact I/O (so the count is achievable; Belady may
    reuse values across tiles in the spare pebbles, and the formula also counts weights a
    block meets only on padding), and never less than any bound."""
    layer, tiling, order = case
    dag = direct_conv_dag(layer)
    sched = stationary_schedule(dag, layer, tiling, order)
    s = bound_fast_memory(stationary_footprint(layer, tiling, order).total)
    played = play(dag, sched.order, s, "belady", flush_at=sched.block_starts).total
    formula = stationary_io(layer, tiling, order).total
    assert played <= formula
    assert all(played >= b.value - 1e-9 for b in bound_report(layer, s).bounds.values())


@given(cases())
def test_orders_share_outputs_and_differ_as_documented(case):
    """Outputs once in every order; weight-stationary loads every weight once, input-stationary
    every input once per spatial tile; output-stationary is dataflow.direct."""
    layer, tiling, _ = case
    out, wgt, inp = (stationary_io(layer, tiling, o) for o in ORDERS)
    assert out.output_stores == wgt.output_stores == inp.output_stores == layer.output_size
    assert wgt.weight_loads == layer.weight_size and wgt.input_loads == out.input_loads
    assert inp.weight_loads == out.weight_loads and inp.input_loads <= out.input_loads


def test_best_is_the_brute_force_minimum():
    """On a small layer the search returns the least exact I/O over every order and tiling that fits."""
    layer = ConvLayer(1, 3, 6, 6, 4, 3, 3, padding=1)
    s = 80
    best = best_direct_dataflow(layer, s, divisors=False)
    brute = min(stationary_io(layer, DirectTiling(x, y, z), o).total
                for o in ORDERS for x, y, z in itertools.product(range(1, 7), range(1, 7), range(1, 5))
                if stationary_footprint(layer, DirectTiling(x, y, z), o).total <= s)
    assert best.io.total == brute and best.footprint.total <= s


def test_weight_stationary_reaches_compulsory_when_weights_fit():
    """A 1x1 layer whose weights fit moves exactly its compulsory I/O."""
    layer = ConvLayer(1, 64, 56, 56, 64, 1, 1)
    best = best_direct_dataflow(layer, 12288)
    assert best.order == "weight" and best.io.total == bound_report(layer, 12288).bounds["compulsory"].value


def test_bad_input_is_named():
    """Unknown orders and a memory too small for any block are ValueErrors naming them."""
    layer = ConvLayer(1, 2, 4, 4, 2, 3, 3)
    with pytest.raises(ValueError, match="unknown dataflow order 'row'"):
        stationary_io(layer, DirectTiling(1, 1, 1), "row")
    with pytest.raises(ValueError, match="too small"):
        best_direct_dataflow(layer, 3)


@given(st.integers(1, 64), st.integers(4, 40), st.integers(1, 64), st.sampled_from([1, 3, 5]),
       st.integers(1, 2), st.integers(64, 20000), st.booleans())
def test_best_dataflow_never_beats_a_bound(c_in, size, c_out, k, stride, s, divisors):
    """On mid-sized layers (no DAG) every order's best tiling moves at least every bound at S + 2."""
    layer = ConvLayer(1, c_in, size, size, c_out, k, k, stride=stride, padding=k // 2)
    bounds = bound_report(layer, bound_fast_memory(s)).bounds
    for order in ORDERS:
        try:
            choice = best_direct_dataflow(layer, s, divisors, orders=(order,))
        except ValueError:
            continue                      # no block of this order fits
        assert choice.footprint.total <= s
        assert all(choice.io.total >= b.value - 1e-9 for b in bounds.values()), (order, choice)


def _best_on_one_row(layer, s, orders=ORDERS):
    """Brute force over every x (y = 1, every z, every order) of a one-row layer: the least
    (I/O, footprint) that fits ``s`` words."""
    return min((stationary_io(layer, t, o).total, stationary_footprint(layer, t, o).total)
               for x in range(1, layer.w_out + 1) for z in range(1, layer.c_out + 1)
               for t in [DirectTiling(x, 1, z)] for o in orders
               if stationary_footprint(layer, t, o).total <= s)


def test_large_axes_search_every_size():
    """A very wide 1-row layer (1534 outputs): the choice fits, moves its exact I/O and is
    the least of every size."""
    layer = ConvLayer(1, 2, 3, 3 * 512, 2, 3, 3)
    best = best_direct_dataflow(layer, 4096, divisors=False, orders=("output",))
    assert best.footprint.total <= 4096 and best.io == stationary_io(layer, best.tiling, "output")
    assert (best.io.total, best.footprint.total) == _best_on_one_row(layer, 4096, ("output",))


def test_a_wide_dilated_axis_finds_the_largest_size_of_a_count():
    """1025 outputs of two taps 600 apart, 2650 words: past 512 outputs the search tried only
    the least size of each tile count (513 for two tiles) and chose x = 1 at 3,077 words;
    x = 1024 (also two tiles) reads 1626 inputs instead of 2050 and moves 2,653."""
    layer = ConvLayer(1, 1, 1, 1625, 1, 1, 2, dilation=(1, 600))
    best = best_direct_dataflow(layer, 2650, divisors=False)
    assert (best.io.total, best.tiling.x, best.order) == (2653, 1024, "weight")
    assert (best.io.total, best.footprint.total) == _best_on_one_row(layer, 2650)


@st.composite
def wide_rows(draw):
    """A one-row layer of 513..700 outputs (dilated, strided, padded) and a fast memory just
    above the footprint of a tile wider than 512 (where a larger size of a tile count may
    read fewer inputs and just fit)."""
    w_out, stride, dilation = draw(st.integers(513, 700)), draw(st.integers(1, 2)), draw(st.integers(1, 400))
    k, pad, c_out = draw(st.integers(2, 3)), draw(st.integers(0, 2)), draw(st.integers(1, 2))
    w_in = (w_out - 1) * stride + (k - 1) * dilation + 1 - 2 * pad
    layer = ConvLayer(1, 1, 1, w_in, c_out, 1, k, stride=(1, stride), padding=(0, pad),
                      dilation=(1, dilation))
    t = DirectTiling(draw(st.integers(513, w_out)), 1, draw(st.integers(1, c_out)))
    s = stationary_footprint(layer, t, draw(st.sampled_from(ORDERS))).total + draw(st.integers(0, 40))
    return layer, s


@settings(max_examples=10, deadline=None)
@given(wide_rows())
def test_wide_axes_match_brute_force(case):
    """Past 512 outputs (where the search once kept one size per tile count) the any-size
    search reaches the least (I/O, footprint) of every x, z and order."""
    layer, s = case
    best = best_direct_dataflow(layer, s, divisors=False)
    assert (best.io.total, best.footprint.total) == _best_on_one_row(layer, s)


def _held_words(layer, t, order):
    """The most words a block of ``order`` holds at once, by enumerating its stages (module
    doc of dataflow.stationary): the kept operand for all input channels, the streamed
    operand of one chunk of ``alpha`` input channels, and the current tile's accumulators.
    Input words are the distinct padded positions the stage's windows touch (a kernel
    stages the padding as zeros); weights the distinct (co, ci, i, j) of the stage."""
    (sh, sw), (dh, dw) = layer.stride, layer.dilation
    kk = [(i, j) for i in range(layer.k_h) for j in range(layer.k_w)]

    def inputs(chans, rows, cols):
        return {(c, oy * sh + i * dh, ox * sw + j * dw)
                for c in chans for oy in rows for ox in cols for i, j in kk}

    def weights(outs, chans):
        return {(co, c, i, j) for co in outs for c in chans for i, j in kk}

    tiles = [(range(oy, min(oy + t.y, layer.h_out)), range(ox, min(ox + t.x, layer.w_out)))
             for oy in range(0, layer.h_out, t.y) for ox in range(0, layer.w_out, t.x)]
    zs = [range(c, min(c + t.z, layer.c_out)) for c in range(0, layer.c_out, t.z)]
    alphas = [range(c, min(c + t.alpha, layer.c_in)) for c in range(0, layer.c_in, t.alpha)]
    peak = 0
    for rows, cols in tiles:
        for outs in zs:
            acc = len(rows) * len(cols) * len(outs)
            for chans in alphas:
                if order == "weight":   # kept: the chunk's weights of every input channel
                    held = len(weights(outs, range(layer.c_in))) + len(inputs(chans, rows, cols))
                else:                   # kept: the tile's inputs of every input channel
                    held = len(inputs(range(layer.c_in), rows, cols)) + len(weights(outs, chans))
                peak = max(peak, held + acc)
    return peak


@given(small_direct_cases(n_max=1, c_max=4), st.sampled_from(["weight", "input"]))
def test_footprint_is_the_most_a_block_holds(case, order):
    """The weight- and input-stationary footprints hold every stage of the block (never
    less than the enumerated words) and, with stride <= kernel and no dilation, exactly the
    largest stage. A footprint that staged one input channel (weight order) or one
    weight chunk of one channel (input order) whatever alpha passed every earlier test: the
    Belady game they play reuses values as it likes and needs fewer words than a kernel's
    staging."""
    layer, t = case
    got = stationary_footprint(layer, t, order).total
    held = _held_words(layer, t, order)
    assert got >= held
    if layer.stride[0] <= layer.k_h and layer.stride[1] <= layer.k_w:
        assert got == held
