"""Hostile arguments to the dataflow API (README "Hostile input", iobound/errors.py): a
layer that is no ConvLayer is one InvalidInputError naming the layer for every public
function that takes one (as evaluate_dataflow and the optimal-tile searches already do),
never an AttributeError about the first field read; and play's flush positions are
schedule positions, never silently dropped."""

from __future__ import annotations

import numpy as np
import pytest

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
