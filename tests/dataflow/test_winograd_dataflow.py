"""Winograd dataflow: tiling validation, footprint, the paper's estimate, optimality gap, and
no dataflow below a bound."""

import math

import pytest
from hypothesis import given, strategies as st

from dataflow.evaluate import evaluate_dataflow
from dataflow.families import dataflow_family
from dataflow.winograd import (
    WinogradTiling, winograd_footprint, winograd_io, winograd_optimality_gap,
    winograd_paper_io, winograd_paper_total, winograd_satisfies_optimality,
)
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from iobound.multi_block import bound_fast_memory
from iobound.report import bound_report

LAYER = ConvLayer(n=1, c_in=8, h_in=16, w_in=16, c_out=16, k_h=3, k_w=3, padding=(1, 1))


def test_tiling_requires_multiple_of_e():
    """x and y must be multiples of e."""
    with pytest.raises(ValueError, match="y=5 must be a multiple of e=2"):
        WinogradTiling(2, 4, 5, 1)


def test_stride2_rejected():
    """Winograd needs stride 1; the message names the stride."""
    layer = LAYER.replace(stride=(2, 2))
    with pytest.raises(ValueError, match="stride"):
        winograd_io(layer, WinogradTiling(2, 2, 2, 1))


def test_non_square_kernel_rejected():
    """Winograd needs k_h == k_w."""
    with pytest.raises(ValueError, match="square kernel"):
        winograd_footprint(LAYER.replace(k_w=1), WinogradTiling(2, 2, 2, 1))


def test_footprint_formula():
    """shared = (y+r-1)(x+r-1) + z r^2; registers = 2 (x/e)(y/e) z (e+r-1)^2."""
    fp = winograd_footprint(LAYER, WinogradTiling(4, 8, 4, 2))
    assert fp.shared_words == 6 * 10 + 2 * 9
    assert fp.register_words == 2 * 2 * 1 * 2 * 36


def test_overhanging_tile_equals_clipped_tile():
    """A tile overhanging w_out=7 by a partial Winograd tile moves what the clipped tile moves."""
    layer = ConvLayer(1, 2, 9, 9, 4, 3, 3)
    assert winograd_io(layer, WinogradTiling(2, 8, 8, 4)).total == layer.input_size + layer.weight_size + layer.output_size


def test_tile_overhanging_by_e_rejected():
    """A tile that overhangs by a whole Winograd tile is rejected."""
    with pytest.raises(ValueError, match="x=10"):
        winograd_io(ConvLayer(1, 2, 10, 10, 4, 3, 3), WinogradTiling(2, 10, 2, 1))


def test_paper_io_underestimates_halo():
    """Eq. 14 takes x' = x, so the exact count (x + r - 1 staged columns) is larger."""
    layer = ConvLayer(1, 4, 10, 10, 8, 3, 3)
    t = WinogradTiling(2, 4, 4, 4)
    assert winograd_io(layer, t).total > winograd_paper_io(layer, t)


def test_paper_total_is_printed_form_sqrt2_below_eq14():
    """The printed total is sqrt(2) below Eq. 14 evaluated at the paper's own tile choice."""
    layer = ConvLayer(1, 4, 12, 12, 9, 3, 3, padding=(1, 1))
    e, x, y, z = 2, 6, 6, 4                          # x*y = r^2 z
    s = 2 * (e + 2) ** 2 * x * y * z / e ** 2        # the paper's S for this tile
    hwc = layer.output_size
    eq14_reads = winograd_paper_io(layer, WinogradTiling(e, x, y, z)) - hwc
    printed_reads = winograd_paper_total(layer, e, int(s)) - hwc
    assert eq14_reads == pytest.approx(math.sqrt(2) * printed_reads)


def test_gap_zero_at_r2z():
    """x*y = r^2 z gives gap 0 and satisfies the condition at tol 0."""
    t = WinogradTiling(2, 6, 6, 4)
    assert winograd_optimality_gap(LAYER, t) == 0.0 and winograd_satisfies_optimality(LAYER, t, tol=0.0)


@given(st.integers(1, 2), st.integers(1, 64), st.integers(3, 40), st.integers(3, 40), st.integers(1, 64),
       st.sampled_from([2, 3, 5]), st.integers(0, 2), st.integers(1, 4), st.integers(200, 20000))
def test_no_winograd_dataflow_below_any_bound(nb, c_in, h, w, c_out, r, pad, e, s):
    """The optimal Winograd tiles of either footprint model, on random layers and memories,
    move at least every reported Winograd bound at their footprint + 2 (the game they play)."""
    layer = ConvLayer(nb, c_in, h + r - 1, w + r - 1, c_out, r, r, padding=min(pad, r - 1))
    for order in dataflow_family("winograd").orders:
        try:
            rep = evaluate_dataflow(layer, s, algorithm="winograd", e=e, order=order)
        except InvalidInputError:
            continue                                   # nothing fits this memory
        bounds = bound_report(layer, bound_fast_memory(rep.footprint.total), "winograd", e).bounds
        assert all(rep.io.total >= b.value - 1e-9 for b in bounds.values()), (order, rep.tiling)


def test_chain_bound_binds_for_vgg_dataflow():
    """On VGG-16's conv3_2 at 48 KiB the chain bound is the binding one, 5.6x compulsory I/O,
    and the chosen dataflow stays above it."""
    from iobound.networks import get_layer
    rep = evaluate_dataflow(get_layer("vgg16.conv3_2"), 12288, algorithm="winograd", e=2)
    assert rep.bound_method == "x_partition_chain"
    assert rep.lower_bound > 5 * 2195456 and rep.io.total >= rep.lower_bound


@given(st.floats() | st.text(max_size=3) | st.none() | st.booleans()
       | st.integers(max_value=0) | st.integers(min_value=2**40 + 1))
def test_paper_total_and_tiles_refuse_bad_numbers(v):
    """e, S and N_p are integers within their limits (a TypeError, a NaN total, a
    ZeroDivisionError or an OverflowError before); tol a finite number >= 0."""
    with pytest.raises(InvalidInputError, match="Winograd output tile e"):
        winograd_paper_total(LAYER, v, 1024)
    with pytest.raises(InvalidInputError, match="fast_memory"):
        winograd_paper_total(LAYER, 2, v)
    with pytest.raises(InvalidInputError, match="processors"):
        winograd_paper_total(LAYER, 2, 1024, v)
    with pytest.raises(InvalidInputError, match="tile e"):
        WinogradTiling(v, 2, 2, 1)
    if isinstance(v, bool) or not (isinstance(v, (int, float)) and 0 <= v < math.inf):
        with pytest.raises(InvalidInputError, match="tol must be a finite number >= 0"):
            winograd_satisfies_optimality(LAYER, WinogradTiling(2, 2, 2, 4), tol=v)
