"""dataflow.grouped's argument checks and the dense (groups = 1) case.

References: the documented contracts of :func:`dataflow.grouped.check_group_tiling` (a
per-group tile is at most one group's c_out/G and c_in/G) and of
:func:`dataflow.grouped.group_sublayer` (a dense layer is its own sub-layer).
"""

import pytest

from dataflow.direct import DirectTiling
from dataflow.grouped import check_group_tiling, group_sublayer, grouped_io
from dataflow.stationary import stationary_io
from iobound import ConvLayer
from iobound.errors import InvalidInputError

GROUPED = ConvLayer(n=1, c_in=4, h_in=5, w_in=5, c_out=6, k_h=3, k_w=3, groups=2)


@pytest.mark.parametrize("tiling, field", [
    (DirectTiling(3, 3, 1, alpha=3), "alpha"),    # c_in/G = 2
    (DirectTiling(3, 3, 4, alpha=1), "z"),        # c_out/G = 3
    (DirectTiling(4, 3, 1, alpha=1), "x"),        # w_out = 3
    (DirectTiling(3, 4, 1, alpha=1), "y"),        # h_out = 3
])
def test_tiles_past_one_group_or_the_output_are_refused(tiling, field):
    with pytest.raises(InvalidInputError, match=f"tile {field}="):
        check_group_tiling(GROUPED, tiling)


def test_largest_per_group_tile_is_accepted():
    check_group_tiling(GROUPED, DirectTiling(3, 3, 3, alpha=2))


def test_a_dense_layer_is_its_own_sub_layer():
    """groups = 1: the same layer (name included) and the dense traffic."""
    dense = ConvLayer(n=1, c_in=2, h_in=5, w_in=5, c_out=3, k_h=3, k_w=3, name="x.conv")
    assert group_sublayer(dense) is dense
    t = DirectTiling(3, 3, 3, 1)
    assert grouped_io(dense, t) == stationary_io(dense, t, "output")


@pytest.mark.parametrize("layer, s", [
    (ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1, groups=8), 256),
    (ConvLayer(n=2, c_in=4, h_in=6, w_in=6, c_out=6, k_h=3, k_w=3, groups=2), 200),
    (ConvLayer(n=1, c_in=6, h_in=7, w_in=7, c_out=9, k_h=2, k_w=2, stride=2, groups=3), 120),
    # small S: a segment bound, not the compulsory I/O, is the best bound of the whole layer
    (ConvLayer(n=1, c_in=8, h_in=12, w_in=12, c_out=16, k_h=3, k_w=3, padding=1, groups=2), 40),
])
def test_grouped_report_scales_the_paper_estimates_by_the_groups(layer, s):
    """The paper's estimates of a grouped layer: Eq. 12 with C_in = c_in/G over all c_out
    channels (= G times the sub-layer's), the closed form and the halo-free optimum G times
    the sub-layer's."""
    from dataflow.evaluate import evaluate_dataflow
    from iobound.multi_block import bound_fast_memory
    from iobound.report import bound_report
    rep = evaluate_dataflow(layer, s)
    t, g = rep.tiling, layer.groups
    r = layer.k_h * layer.k_w / (layer.stride[0] * layer.stride[1])
    outputs = layer.n * layer.h_out * layer.w_out * layer.c_out
    eq12 = (outputs / (t.x * t.y * t.z) * layer.k_h * layer.k_w * layer.c_in_per_group
            * (t.z + t.x * t.y / r) + outputs)
    assert rep.io_paper_approx == pytest.approx(eq12)
    sub = evaluate_dataflow(group_sublayer(layer), s, tiling=t, order=rep.order)
    assert rep.io_paper_approx == pytest.approx(g * sub.io_paper_approx)
    assert rep.io_paper_closed_form == pytest.approx(g * sub.io_paper_closed_form)
    assert rep.continuous.io == pytest.approx(g * sub.continuous.io)
    # the ratio is to the whole grouped layer's bound (not G times the sub-layer's)
    assert rep.lower_bound == bound_report(layer, bound_fast_memory(rep.block_memory_words)).best
    assert rep.ratio_to_bound == pytest.approx(rep.io.total / rep.lower_bound)


@pytest.mark.parametrize("tolerance", [0.0, 0.9])
def test_grouped_report_keeps_the_given_tolerance(tolerance):
    """evaluate_dataflow's tolerance reaches the grouped report's optimality condition."""
    from dataflow.evaluate import evaluate_dataflow
    rep = evaluate_dataflow(GROUPED, 200, tolerance=tolerance)
    assert rep.optimality.tolerance == tolerance
    assert rep.optimality.satisfied == (abs(rep.optimality.relative_gap) <= tolerance)
