"""The one-accumulator Winograd footprint: the tiled schedule fits it in the pebble game."""

from __future__ import annotations

from hypothesis import assume, given, strategies as st

from dataflow.dag_winograd import winograd_conv_dag
from dataflow.pebble import play
from dataflow.schedules import tiled_schedule
from dataflow.winograd import WinogradTiling, check_winograd_tiling, winograd_footprint, winograd_io
from dataflow.winograd_accumulate import (optimal_winograd_accumulate_tiles,
                                          winograd_accumulate_footprint)
from iobound.layer import ConvLayer
from iobound.multi_block import bound_fast_memory
from iobound.report import bound_report
from layer_cases import winograd_cases


def _valid(layer, tiling) -> bool:
    try:
        check_winograd_tiling(layer, tiling)
    except ValueError:
        return False
    return True


@given(winograd_cases())
def test_schedule_fits_the_footprint(case):
    """Played block by block with the footprint + 2 (Belady), the paper's tiled order moves
    at most the dataflow's exact I/O and at least every Winograd bound; the footprint is
    below the paper's two-array one whenever a block holds a tile."""
    layer, tiling, _, _ = case
    assume(_valid(layer, tiling))
    dag = winograd_conv_dag(layer, tiling.e)
    sched = tiled_schedule(dag, layer, tiling)
    s = bound_fast_memory(winograd_accumulate_footprint(layer, tiling).total)
    played = play(dag, sched.order, s, "belady", flush_at=sched.block_starts).total
    assert played <= winograd_io(layer, tiling).total
    assert all(played >= b.value - 1e-9
               for b in bound_report(layer, s, "winograd", tiling.e).bounds.values())


@given(st.integers(1, 3), st.integers(2, 5), st.integers(3, 7), st.integers(3, 7), st.integers(0, 1),
       st.integers(1, 2), st.integers(1, 2), st.integers(1, 4))
def test_free_z_played_within_footprint(c_in, c_out, h, w, pad, tx, ty, z):
    """Channel blocks that do not divide c_out (the last one smaller): played with the
    footprint + 2 (Belady), the tiled order moves at most the formula and at least every
    Winograd bound."""
    layer = ConvLayer(1, c_in, h, w, c_out, 3, 3, padding=pad)
    tiling = WinogradTiling(2, 2 * tx, 2 * ty, min(z, c_out))
    assume(_valid(layer, tiling))
    dag = winograd_conv_dag(layer, 2)
    sched = tiled_schedule(dag, layer, tiling)
    s = bound_fast_memory(winograd_accumulate_footprint(layer, tiling).total)
    played = play(dag, sched.order, s, "belady", flush_at=sched.block_starts).total
    assert played <= winograd_io(layer, tiling).total
    assert all(played >= b.value - 1e-9 for b in bound_report(layer, s, "winograd", 2).bounds.values())


def test_free_z_beats_dividing_z():
    """ResNet-50's conv4 layers at 48 KiB: a z that does not divide c_out moves less."""
    from iobound.networks import get_layer
    layer = get_layer("resnet50.conv4_2b")
    best = optimal_winograd_accumulate_tiles(layer, 12288)
    assert layer.c_out % best.tiling.z != 0
    assert best.io.total < 0.8 * 2245632       # the best dividing z before (x = y = 14, z = 8)


def test_larger_tiles_for_the_same_memory():
    """On a VGG-sized layer the search finds tiles of less I/O than the two-array model allows."""
    from dataflow.optimal_tiles import optimal_winograd_tiles

    layer = ConvLayer(1, 64, 56, 56, 64, 3, 3, padding=1)
    one = optimal_winograd_accumulate_tiles(layer, 12288)
    two = optimal_winograd_tiles(layer, 12288)
    assert one.footprint.total <= 12288 and one.io.total < two.io.total
    assert winograd_footprint(layer, one.tiling).total > 12288


def test_none_when_nothing_fits():
    """A memory below the smallest block gives None."""
    assert optimal_winograd_accumulate_tiles(ConvLayer(1, 2, 6, 6, 2, 3, 3), 20) is None


@given(st.integers(1, 2), st.integers(1, 4), st.integers(1, 3), st.integers(1, 2),
       st.integers(1, 2), st.integers(0, 400))
def test_the_default_winograd_dataflow_moves_its_io_within_its_footprint(ci, e, r, co, tiles, extra):
    """Whichever model ``evaluate_dataflow`` picks unasked, the tiled schedule played with
    its footprint + 2 moves at most the reported I/O. The paper's two arrays once won with
    one tile and one channel a block and a game with them moved more (226 words against
    182 at F(6x6, 3x3) with 201 words)."""
    from dataflow.evaluate import evaluate_dataflow
    from iobound.errors import InvalidInputError
    side = e * tiles + r - 1
    layer = ConvLayer(n=1, c_in=ci, h_in=side, w_in=side, c_out=co, k_h=r, k_w=r)
    s = min(winograd_footprint(layer, WinogradTiling(e, e, e, 1)).total,
            winograd_accumulate_footprint(layer, WinogradTiling(e, e, e, 1)).total) + extra
    try:
        rep = evaluate_dataflow(layer, s, algorithm="winograd", e=e)
    except InvalidInputError:  # no block fits: nothing claimed
        return
    dag = winograd_conv_dag(layer, e)
    sched = tiled_schedule(dag, layer, rep.tiling)
    played = play(dag, sched.order, bound_fast_memory(rep.footprint.total), "belady",
                  flush_at=sched.block_starts).total
    assert played <= rep.io.total


def test_the_papers_footprint_is_not_taken_unasked_where_its_schedule_does_not_fit():
    from dataflow.evaluate import evaluate_dataflow
    from iobound.errors import InvalidInputError
    layer = ConvLayer(n=1, c_in=2, h_in=8, w_in=8, c_out=1, k_h=3, k_w=3)
    assert evaluate_dataflow(layer, 201, algorithm="winograd", e=6, order="paper").order == "paper"
    try:
        evaluate_dataflow(layer, 201, algorithm="winograd", e=6)
    except InvalidInputError as err:
        assert "too small" in str(err)
    else:
        raise AssertionError("201 words took the paper's tiling its schedule does not fit")
