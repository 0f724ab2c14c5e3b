"""Hostile arguments to the dataflow API (README "Hostile input", iobound/errors.py): a
layer that is no ConvLayer is one InvalidInputError naming the layer for every public
function that takes one (as evaluate_dataflow and the optimal-tile searches already do),
never an AttributeError about the first field read; and play's flush positions are
schedule positions, never silently dropped."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from iobound import ConvLayer
from iobound.errors import InvalidInputError

LAYER = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=2, k_h=3, k_w=3, padding=1)


def _calls():
    import dataflow as d
    dt, wt = d.DirectTiling(2, 2, 1, 1), d.WinogradTiling(2, 2, 2, 1)
    return {
        "direct_io": lambda L: d.direct_io(L, dt),
        "direct_footprint": lambda L: d.direct_footprint(L, dt),
        "direct_paper_io": lambda L: d.direct_paper_io(L, dt),
        "direct_paper_total": lambda L: d.direct_paper_total(L, 64),
        "direct_optimality_gap": lambda L: d.direct_optimality_gap(L, dt),
        "satisfies_optimality": lambda L: d.satisfies_optimality(L, dt),
        "winograd_io": lambda L: d.winograd_io(L, wt),
        "winograd_footprint": lambda L: d.winograd_footprint(L, wt),
        "winograd_paper_io": lambda L: d.winograd_paper_io(L, wt),
        "winograd_paper_total": lambda L: d.winograd_paper_total(L, 2, 600),
        "winograd_optimality_gap": lambda L: d.winograd_optimality_gap(L, wt),
        "winograd_satisfies_optimality": lambda L: d.winograd_satisfies_optimality(L, wt),
        "dataflow_reuse": lambda L: d.dataflow_reuse(L),
        "direct_chain": lambda L: d.direct_chain(L, 0, 0, 0, 0),
        "direct_conv_dag": lambda L: d.direct_conv_dag(L),
        "winograd_conv_dag": lambda L: d.winograd_conv_dag(L, 2),
        "tiled_schedule": lambda L: d.tiled_schedule(d.direct_conv_dag(LAYER), L, dt),
        "direct_continuous_optimum":
            lambda L: d.continuous_optimum.direct_continuous_optimum(L, 600),
        "winograd_continuous_optimum":
            lambda L: d.continuous_optimum.winograd_continuous_optimum(L, 2, 600),
        "direct_taps": lambda L: d.dag_direct.direct_taps(L, 0, 0),
        "group_channels": lambda L: d.dag_direct.group_channels(L, 0),
        "check_dense": lambda L: d.direct.check_dense(L, "a count"),
        "winograd_product_flops": lambda L: d.flops.winograd_product_flops(L, 2),
        "direct_block_words": lambda L: d.direct.direct_block_words(L, 2, 2, 1, 1),
        "winograd_block_words": lambda L: d.winograd.winograd_block_words(L, 2, 2, 2, 1),
    }


@pytest.mark.parametrize("bad", ["vgg16.conv1_1", None, np.int64(4), {"n": 1}])
@pytest.mark.parametrize("name", sorted(_calls()))
def test_a_non_layer_is_named(name, bad):
    call = _calls()[name]
    call(LAYER)  # the call itself is valid with a layer
    with pytest.raises(InvalidInputError, match="layer"):
        call(bad)


def _game():
    from dataflow import direct_conv_dag, topological_schedule
    dag = direct_conv_dag(LAYER)
    return dag, topological_schedule(dag)


@pytest.mark.parametrize("flush_at", [(-1,), (10**9,), (2.5,), ("3",), True, 5, None])
def test_play_refuses_flush_positions_outside_the_schedule(flush_at):
    """A flush position that is no position of the schedule was ignored: the game was played
    as if no flush had been asked for (a count for another schedule, silently)."""
    from dataflow import play
    dag, order = _game()
    with pytest.raises(InvalidInputError, match="flush_at"):
        play(dag, order, 16, flush_at=flush_at)


def test_play_flush_positions_numpy_and_ends():
    """Positions 0..len(order) are positions (numpy integers too); flushing at 0 or at the
    end changes nothing, flushing in the middle costs I/O."""
    from dataflow import play
    dag, order = _game()
    plain = play(dag, order, 16).total
    assert play(dag, order, 16, flush_at=(0, len(order))).total == plain
    mid = np.int64(len(order) // 2)
    assert play(dag, order, 16, flush_at=np.array([mid])).total == \
        play(dag, order, 16, flush_at=[int(mid)]).total >= plain


@pytest.mark.parametrize("name", [5, ["conv1"], {"a": 1}, b"conv1"])
def test_a_layer_name_that_is_no_string_is_refused(name):
    """ConvLayer's name is a str (it names the kernel file and log of tune_layers); 5 or a
    list was accepted and tune_layers stopped with "'int' object has no attribute
    'replace'" from inside search.winner.kernel_file."""
    with pytest.raises(InvalidInputError, match="name"):
        ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=2, k_h=3, k_w=3, name=name)


def test_a_layer_name_none_is_no_name():
    layer = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=2, k_h=3, k_w=3, name=None)
    assert layer.name == "" and layer == ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=2, k_h=3, k_w=3)


@pytest.mark.parametrize("e", [-1, 0, 1.5, float("nan"), True, "2"])
def test_winograd_product_flops_refuse_what_is_no_tile(e):
    """e was not checked: -1 gave 128 flops, 1.5 gave 882.0, nan nan, 0 a ZeroDivisionError."""
    from dataflow.flops import winograd_product_flops
    with pytest.raises(InvalidInputError, match="Winograd output tile e"):
        winograd_product_flops(LAYER, e)


@pytest.mark.parametrize("tile", ["2", -1, 0, None, 10 ** 30, 2.0])
def test_block_words_refuse_what_is_no_tile(tile):
    """The unchecked formulas took '2' (a string repeated 25 times as the footprint), -1
    (negative words), None (TypeError) and 10**30."""
    from dataflow.direct import direct_block_words
    from dataflow.winograd import winograd_block_words
    for args in ((tile, 2, 1, 1), (2, tile, 1, 1), (2, 2, tile, 1), (2, 2, 1, tile)):
        with pytest.raises(InvalidInputError, match="tile"):
            direct_block_words(LAYER, *args)
    with pytest.raises(InvalidInputError, match="tile"):
        winograd_block_words(LAYER, 2, 2, tile, 1)
    with pytest.raises(InvalidInputError, match="Winograd"):
        winograd_block_words(LAYER, -10 ** 30 if tile is None else tile, 2, 2, 1)


def test_block_words_past_the_layer_are_still_sized():
    """What the unchecked formulas are for: tiles larger than the layer (kernels.config)."""
    from dataflow.direct import direct_block_words
    assert direct_block_words(LAYER, 70, 7, 8, np.int64(2)).total > 0


@pytest.mark.parametrize("fast_memory", [-5, 0, float("nan"), 1.5, 2 ** 41, None])
def test_continuous_optima_check_the_fast_memory(fast_memory):
    """direct_continuous_optimum(L, -5) gave io=672.0 'smallest tile', nan gave io=nan."""
    from dataflow.continuous_optimum import direct_continuous_optimum, winograd_continuous_optimum
    with pytest.raises(InvalidInputError, match="fast_memory"):
        direct_continuous_optimum(LAYER, fast_memory)
    with pytest.raises(InvalidInputError, match="fast_memory"):
        winograd_continuous_optimum(LAYER, 2, fast_memory)
    with pytest.raises(InvalidInputError, match="Winograd"):
        winograd_continuous_optimum(LAYER, float("nan"), 600)


def test_continuous_optima_of_numpy_numbers_are_floats():
    from dataflow.continuous_optimum import direct_continuous_optimum
    got = direct_continuous_optimum(LAYER, np.int64(600), alpha=np.int32(2))
    assert got == direct_continuous_optimum(LAYER, 600, alpha=2)
    assert all(type(v) is float for v in (got.x, got.y, got.z, got.io))


@pytest.mark.parametrize("n", [np.uint64(2 ** 63), 10 ** 18, True, None, "10", 0])
def test_least_size_per_count_refuses_sizes_no_layer_has(n):
    """np.uint64(2**63) asked for 22.6 GiB (the process was killed), 10**18 a MemoryError,
    True and None TypeErrors."""
    from dataflow.io_volume import least_size_per_count
    with pytest.raises(InvalidInputError, match="n"):
        least_size_per_count(n)


@pytest.mark.parametrize("call, name", [
    (lambda io: io.tile_extents(None, 3), "n_out"),
    (lambda io: io.tile_extents(7, 0), "tile"),
    (lambda io: io.used_per_tile(4, 4, "3", 1, 1, 0, 10), "stride"),
    (lambda io: io.used_total(5, 2, 1, 1, 3, -1, 5), "pad"),
    (lambda io: io.used_totals(5, 1, 0, 2, 0, 7), "dilation"),
    (lambda io: io.used_totals(2 ** 40, 1, 1, 2, 0, 7), "n_out"),
    (lambda io: io.channel_group_spans(8, 3, 3), "per_group"),
    (lambda io: io.channel_group_spans(8, 2, None), "z"),
    (lambda io: io.check_block_memory(64, 0), "processors"),
    (lambda io: io.check_block_memory(None, 1), "fast_memory"),
])
def test_axis_counts_name_the_bad_argument(call, name):
    """Raw TypeError / ValueError / OverflowError / ZeroDivisionError before."""
    import dataflow.io_volume as io
    with pytest.raises(InvalidInputError, match=name):
        call(io)


@settings(deadline=None, max_examples=60)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(1, 3), st.integers(1, 3),
       st.integers(1, 4), st.integers(0, 3), st.integers(1, 40))
def test_axis_counts_of_numpy_integers_are_the_int_counts(n_out, tile, stride, dilation, k, pad,
                                                          n_in):
    from dataflow.io_volume import used_per_tile, used_total, used_totals
    args = (n_out, tile, stride, dilation, k, pad, n_in)
    np_args = tuple(np.int32(v) for v in args)
    assert used_total(*np_args) == used_total(*args)
    assert used_per_tile(*np_args).tolist() == used_per_tile(*args).tolist()
    no_tile = np_args[:1] + np_args[2:]
    assert used_totals(*no_tile).tolist() == used_totals(*(args[:1] + args[2:])).tolist()


def test_the_segments_check_their_game():
    """Y = 0 was a ZeroDivisionError; a bad DAG or move list an AttributeError, TypeError,
    KeyError or IndexError from inside."""
    import networkx as nx

    from dataflow import play
    from dataflow.segments import chain_segments, useful_events
    dag, order = _game()
    moves = play(dag, order, 16, record_moves=True).moves
    assert chain_segments(dag, moves, 8)
    with pytest.raises(InvalidInputError, match="Y"):
        chain_segments(dag, moves, 0)
    with pytest.raises(InvalidInputError, match="DiGraph"):
        chain_segments(None, moves, 8)
    with pytest.raises(InvalidInputError, match="kind"):
        useful_events(nx.DiGraph([("a", "b")]), [("compute", "b")])
    with pytest.raises(InvalidInputError, match="moves must be"):
        useful_events(dag, None)
    with pytest.raises(InvalidInputError, match="move 0"):
        chain_segments(dag, [("store", "nowhere")] + list(moves), 8)
    with pytest.raises(InvalidInputError, match="outputs without a blue pebble"):
        useful_events(dag, moves[:len(moves) // 2])


def test_with_recomputation_checks_its_arguments():
    """rng None was an AttributeError on .random."""
    import random

    from dataflow.schedules import with_recomputation
    dag, order = _game()
    assert len(with_recomputation(dag, order, random.Random(0), share=1.0)) > len(order)
    with pytest.raises(InvalidInputError, match="rng"):
        with_recomputation(dag, order, None)
    with pytest.raises(InvalidInputError, match="share"):
        with_recomputation(dag, order, random.Random(0), share=2)
    with pytest.raises(InvalidInputError, match="no vertex"):
        with_recomputation(dag, list(order) + ["x"], random.Random(0))
    with pytest.raises(InvalidInputError, match="DiGraph"):
        with_recomputation(None, order, random.Random(0))


@pytest.mark.parametrize("call, name", [
    (lambda m: m.direct_taps(LAYER, None, 0), "oh"),
    (lambda m: m.direct_taps(LAYER, 0, 4), "ow"),
    (lambda m: m.group_channels(LAYER, -1), "co"),
    (lambda m: m.check_dag_size(None, "direct"), "estimate"),
])
def test_dag_helpers_name_the_bad_argument(call, name):
    import dataflow.dag_direct as m
    with pytest.raises(InvalidInputError, match=name):
        call(m)


# --- runs and the Winograd segments (the second probe) -----------------------------------

def test_run_schedule_needs_this_layers_direct_dag():
    """The dag argument was never read: None on a large layer ran past 20 s, a DAG of
    another layer was taken silently."""
    from dataflow import direct_conv_dag
    from dataflow.dag_winograd import winograd_conv_dag
    from dataflow.runs import RunTiling
    from dataflow.runs_schedule import run_schedule
    pointwise = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=2, k_h=1, k_w=1)  # runs apply
    tiling = RunTiling(4, 1)
    assert run_schedule(direct_conv_dag(pointwise), pointwise, tiling).order
    with pytest.raises(InvalidInputError, match="DiGraph"):
        run_schedule(None, ConvLayer(1, 256, 64, 64, 256, 1, 1), RunTiling(64, 64))
    with pytest.raises(InvalidInputError, match="built from the layer"):
        run_schedule(direct_conv_dag(LAYER), pointwise, tiling)
    with pytest.raises(InvalidInputError, match="direct DAG"):
        run_schedule(winograd_conv_dag(LAYER, 2), LAYER, tiling)


@pytest.mark.parametrize("orders", [None, 5, (), "output-runs", ("output-runs", None)])
def test_best_run_dataflow_checks_its_orders(orders):
    """None or 5 was a TypeError, () returned None as if no block fitted."""
    from dataflow.runs import best_run_dataflow
    with pytest.raises(InvalidInputError, match="order"):
        best_run_dataflow(LAYER, 100, orders)


def test_a_run_order_is_a_name():
    """A numpy array of names was 'truth value of an array is ambiguous'."""
    from dataflow.runs import RunTiling, run_io
    with pytest.raises(InvalidInputError, match="run order"):
        run_io(LAYER, RunTiling(4, 1), np.array(["output-runs", "weight-runs"]))


def _winograd_game():
    from dataflow import play, topological_schedule
    from dataflow.dag_winograd import winograd_conv_dag
    layer = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=1, k_h=3, k_w=3)
    dag = winograd_conv_dag(layer, 2)
    return dag, play(dag, topological_schedule(dag), 12, record_moves=True).moves


@pytest.mark.parametrize("Y", [0, -1, 2.5, True, None])
def test_winograd_segments_check_y(Y):
    """0 was a ZeroDivisionError, -1 an IndexError, 2.5 a TypeError, True taken as 1."""
    from dataflow.winograd_segments import winograd_segments
    dag, moves = _winograd_game()
    assert winograd_segments(dag, moves, 24)
    with pytest.raises(InvalidInputError, match="Y"):
        winograd_segments(dag, moves, Y)


def test_winograd_segments_check_their_game():
    """An unknown op was skipped, a direct DAG gave meaningless segments, a bad vertex a
    KeyError, moves='abc' a ValueError, dag=None an AttributeError."""
    from dataflow import direct_conv_dag
    from dataflow.winograd_segments import traced_events, winograd_segments
    dag, moves = _winograd_game()
    with pytest.raises(InvalidInputError, match="move 0"):
        winograd_segments(dag, [("jump", moves[0][1])] + list(moves), 24)
    with pytest.raises(InvalidInputError, match="Winograd DAG"):
        winograd_segments(direct_conv_dag(LAYER), moves, 24)
    with pytest.raises(InvalidInputError, match="move 0"):
        winograd_segments(dag, [("load", "nowhere")] + list(moves), 24)
    with pytest.raises(InvalidInputError, match="moves must be"):
        winograd_segments(dag, "abc", 24)
    with pytest.raises(InvalidInputError, match="DiGraph"):
        winograd_segments(None, moves, 24)
    with pytest.raises(InvalidInputError, match="moves must be"):
        traced_events(dag, None)


@pytest.mark.parametrize("data", [{}, None, "input"])
def test_side_predicates_take_vertex_data(data):
    from dataflow.winograd_segments import is_input_side, is_kernel_side
    for predicate in (is_input_side, is_kernel_side):
        with pytest.raises(InvalidInputError, match="kind"):
            predicate(data)
