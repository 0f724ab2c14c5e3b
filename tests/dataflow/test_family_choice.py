"""DirectDataflow.choose / evaluate_dataflow: how rectangles and raster runs are picked.

References: the compulsory I/O (every input, weight and output once, counted from the
layer's sizes), the documented rules of ``DirectDataflow.choose`` (least exact I/O; ties go
to rectangles; runs alone when no rectangle fits) and the documented order check
(``DataflowFamily.check_order``: an unknown order is an InvalidInputError listing the
orders).
"""

import pytest

from dataflow import runs, stationary
from dataflow.evaluate import evaluate_dataflow
from dataflow.families import dataflow_family
from iobound import ConvLayer
from iobound.errors import InvalidInputError

#: windows that do not overlap (extent 2 = stride 2): raster runs apply.
NON_OVERLAPPING = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=2, k_w=2, stride=2)


def _compulsory(layer):
    return layer.input_size + layer.weight_size + layer.output_size


def test_a_tie_between_runs_and_rectangles_goes_to_the_rectangle():
    """With room for the compulsory I/O both kinds reach it; the rectangle wins the tie."""
    fam, s = dataflow_family("direct"), 22
    run = runs.best_run_dataflow(NON_OVERLAPPING, s, runs.RUN_ORDERS)
    rect = stationary.best_direct_dataflow(NON_OVERLAPPING, s, False, stationary.ORDERS)
    assert run.io.total == rect.io.total == _compulsory(NON_OVERLAPPING)
    order, tiling = fam.choose(NON_OVERLAPPING, s, None, False, None)
    assert order in stationary.ORDERS
    assert fam.ordered_io(NON_OVERLAPPING, tiling, order).total == _compulsory(NON_OVERLAPPING)


@pytest.mark.parametrize("s", [6, 7, 8])
def test_runs_are_chosen_when_no_rectangle_fits(s):
    """A fast memory too small for every rectangle still gives the best run block."""
    fam = dataflow_family("direct")
    with pytest.raises(InvalidInputError):
        stationary.best_direct_dataflow(NON_OVERLAPPING, s, False, stationary.ORDERS)
    best = runs.best_run_dataflow(NON_OVERLAPPING, s, runs.RUN_ORDERS)
    order, tiling = fam.choose(NON_OVERLAPPING, s, None, False, None)
    assert (order, tiling) == (best.order, best.tiling)
    assert isinstance(tiling, runs.RunTiling)
    assert fam.ordered_footprint(NON_OVERLAPPING, tiling, order).total <= s


@pytest.mark.parametrize("algorithm, tiling", [("direct", None), ("winograd", None)])
def test_unknown_order_is_refused_naming_the_orders(algorithm, tiling):
    """evaluate_dataflow refuses an order its family does not have, listing the family's."""
    layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3)
    fam = dataflow_family(algorithm)
    with pytest.raises(InvalidInputError, match="unknown .* order 'diagonal'") as info:
        evaluate_dataflow(layer, 4096, algorithm, order="diagonal", tiling=tiling)
    for o in fam.orders:
        assert o in str(info.value)


WINOGRAD_LAYER = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=4, k_h=3, k_w=3, padding=1)


@pytest.mark.parametrize("s", [128, 256, 512, 1024])
def test_winograd_choice_is_the_least_io_of_both_footprint_models(s):
    """Without an order, the Winograd choice is the better of 'paper' and 'accumulate'
    (each searched on its own), the paper's on a tie; the paper's only where its footprint
    holds its schedule's words (the accumulator model's), as it does not at 128 and 256 words
    here: one channel a block."""
    from dataflow.winograd import winograd_footprint
    from dataflow.winograd_accumulate import winograd_accumulate_footprint
    fam = dataflow_family("winograd")
    per_order = {}
    for o in fam.orders:
        try:
            got, t = fam.choose(WINOGRAD_LAYER, s, 2, True, o)
        except InvalidInputError:
            continue
        sound = (winograd_footprint(WINOGRAD_LAYER, t).total
                 >= winograd_accumulate_footprint(WINOGRAD_LAYER, t).total)
        if o == "accumulate" or sound:
            per_order[o] = fam.ordered_io(WINOGRAD_LAYER, t, got).total
    assert ("paper" in per_order) == (s >= 512)
    order, tiling = fam.choose(WINOGRAD_LAYER, s, 2, True, None)
    least = min(per_order.values())
    assert fam.ordered_io(WINOGRAD_LAYER, tiling, order).total == least
    assert order == ("paper" if per_order.get("paper") == least else "accumulate")


def test_winograd_e_is_refused_for_direct():
    """A Winograd tile size with the direct algorithm is bad input, not ignored."""
    with pytest.raises(InvalidInputError, match="winograd e"):
        evaluate_dataflow(WINOGRAD_LAYER, 1024, "direct", e=2)


@pytest.mark.parametrize("e", [2, 3, 4])
def test_winograd_continuous_optimum_uses_the_tile_size(e):
    """The reported halo-free optimum is the one of the evaluated e (Eq. 14 depends on e)."""
    from dataflow.optimal_tiles import winograd_continuous_optimum
    rep = evaluate_dataflow(WINOGRAD_LAYER, 2048, "winograd", e=e)
    assert rep.tiling.e == e
    assert rep.continuous == winograd_continuous_optimum(WINOGRAD_LAYER, e, rep.block_memory_words)


def test_winograd_e_must_match_the_given_tiling():
    """An e that differs from the given tiling's e is refused, naming both."""
    from dataflow.winograd import WinogradTiling
    with pytest.raises(InvalidInputError, match="e=3 does not match the tiling's e=2"):
        evaluate_dataflow(WINOGRAD_LAYER, 4096, "winograd", e=3, tiling=WinogradTiling(2, 4, 4, 2))


@pytest.mark.parametrize("x, y, z", [(10, 4, 1), (4, 10, 1), (4, 4, 5)])
def test_given_winograd_tiles_larger_than_the_output_are_refused(x, y, z):
    """A given tile past the 8x8x4 output (by e or more, or z > c_out) is refused."""
    from dataflow.winograd import WinogradTiling
    with pytest.raises(InvalidInputError, match="larger than"):
        evaluate_dataflow(WINOGRAD_LAYER, 1 << 20, "winograd", tiling=WinogradTiling(2, x, y, z))


def test_fewer_words_than_processors_is_refused():
    """S // N_p < 1 leaves a block no fast memory: bad input, naming both numbers."""
    with pytest.raises(InvalidInputError, match="fast memory of 4 words leaves no word .* 8 processors"):
        evaluate_dataflow(WINOGRAD_LAYER, 4, processors=8)
