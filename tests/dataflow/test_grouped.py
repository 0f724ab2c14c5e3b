"""Grouped and depthwise layers: the DAG, the per-group dataflows and tiles that span groups.

Every played schedule and every tiled dataflow is compared with every reported lower bound
(at the S it was played with): none may move less.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from dataflow.dag_direct import direct_conv_dag, evaluate_dag
from dataflow.direct import DirectTiling, direct_footprint, direct_io
from dataflow.evaluate import evaluate_dataflow
from dataflow.grouped import (best_grouped_dataflow, group_sublayer, grouped_footprint,
                              grouped_io, grouped_schedule)
from dataflow.optimal_tiles import optimal_direct_tiles
from dataflow.pebble import play
from dataflow.schedules import tiled_schedule
from dataflow.stationary import ORDERS, best_direct_dataflow, stationary_io
from iobound import ConvLayer
from iobound.direct_bounds import direct_bound_values
from iobound.errors import InvalidInputError
from iobound.networks import get_layer
from iobound.vertex_counts import direct_counts, direct_vertex_count
from kernels.reference import conv2d_reference

from layer_cases import small_grouped_cases


def _assert_above_every_bound(layer, played, s):
    for method, value in direct_bound_values(layer, s).items():
        assert played >= value - 1e-9, (method, played, value)


@given(small_grouped_cases())
def test_vertex_counts_match_the_built_grouped_dag(case):
    """Vertex counts equal the built DAG's, and every class is G times one group's."""
    layer, _ = case
    dag = direct_conv_dag(layer)
    c, sub = direct_counts(layer), direct_counts(group_sublayer(layer))
    kinds = [d["kind"] for _, d in dag.nodes(data=True)]
    assert dag.number_of_nodes() == direct_vertex_count(layer) == layer.groups * sub.vertices
    assert kinds.count("input") == c.used_inputs and kinds.count("weight") == c.used_weights
    assert kinds.count("output") == c.outputs
    assert (c.used_inputs, c.used_weights, c.products) == tuple(
        layer.groups * v for v in (sub.used_inputs, sub.used_weights, sub.products))


@given(small_grouped_cases(), st.integers(0, 2**32 - 1))
def test_grouped_dag_evaluates_to_the_grouped_convolution(case, seed):
    """The DAG's outputs are the per-group convolutions (numpy reference on each group's slice)."""
    layer, _ = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((layer.n, layer.c_in, layer.h_in, layer.w_in))
    w = rng.standard_normal((layer.c_out, layer.c_in_per_group, layer.k_h, layer.k_w))
    cg, og, sub = layer.c_in_per_group, layer.c_out_per_group, group_sublayer(layer)
    y = np.concatenate([conv2d_reference(x[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og], sub)
                        for g in range(layer.groups)], axis=1)
    dag = direct_conv_dag(layer)
    src = {v: (x[v[1:]] if v[0] == "in" else w[(v[1], v[2] - v[1] // og * cg, v[3], v[4])])
           for v in dag if dag.in_degree(v) == 0}
    val = evaluate_dag(dag, src)
    for v, kind in dag.nodes(data="kind"):
        if kind == "output":
            assert val[v] == pytest.approx(y[v[1:]], abs=1e-9)


@given(small_grouped_cases(), st.sampled_from(ORDERS))
def test_per_group_dataflow_played_matches_its_io_and_the_bounds(case, order):
    """The per-group dataflow played block by block (S = footprint + 2, flushed at block starts):
    output-stationary moves exactly grouped_io without padding; with padding (the DAG omits
    weights that only meet padding) or another order (Belady reuses values across a block's
    tiles in the spare pebbles, as for dense layers) at most it; never less than any bound."""
    layer, t = case
    s = grouped_footprint(layer, t, order).total + 2
    sched = grouped_schedule(layer, t, order)
    played = play(direct_conv_dag(layer), sched.order, s, flush_at=sched.block_starts).total
    io = grouped_io(layer, t, order).total
    assert played == io if layer.padding == (0, 0) and order == "output" else played <= io
    _assert_above_every_bound(layer, played, s)


@given(small_grouped_cases())
def test_tiles_spanning_groups_are_counted_exactly_and_never_win(case):
    """Output-stationary tiles over the global channels (z up to c_out, spanning groups): played
    equals direct_io without padding and is above every bound; the per-group tiling with
    z' = min(z, c_out/G), alpha' = min(alpha, c_in/G) moves no more and needs no more words."""
    layer, t = case
    span = DirectTiling(t.x, t.y, min(layer.c_out, t.z * layer.groups), t.alpha)
    s = direct_footprint(layer, span).total + 2
    sched = tiled_schedule(direct_conv_dag(layer), layer, span)
    played = play(direct_conv_dag(layer), sched.order, s, flush_at=sched.block_starts).total
    io = direct_io(layer, span).total
    assert played == io if layer.padding == (0, 0) else played <= io
    _assert_above_every_bound(layer, played, s)
    per = DirectTiling(t.x, t.y, min(span.z, layer.c_out_per_group), min(span.alpha, layer.c_in_per_group))
    assert grouped_io(layer, per).total <= io
    assert grouped_footprint(layer, per).total <= direct_footprint(layer, span).total


@given(small_grouped_cases(), st.integers(40, 400))
def test_evaluated_grouped_dataflow_is_above_the_bound(case, s):
    """evaluate_dataflow on a grouped layer: G times the sub-layer's I/O, ratio >= 1, per-group tiles."""
    layer, _ = case
    try:
        rep = evaluate_dataflow(layer, s)
    except InvalidInputError:            # no block fits
        return
    sub = evaluate_dataflow(group_sublayer(layer), s)
    assert rep.io.total == layer.groups * sub.io.total and rep.tiling == sub.tiling
    assert rep.io.total >= rep.lower_bound and rep.layer == layer
    assert rep.tiling.z <= layer.c_out_per_group
    assert rep.tiles_source.endswith("per group") == (layer.groups > 1)


@given(small_grouped_cases())
def test_groups_one_is_the_dense_dataflow(case):
    """With groups = 1 the grouped functions are the dense ones."""
    layer, t = case
    dense = layer.replace(groups=1, c_in=layer.c_in_per_group, c_out=layer.c_out_per_group)
    t = DirectTiling(t.x, t.y, min(t.z, dense.c_out), min(t.alpha, dense.c_in))
    for order in ORDERS:
        assert grouped_io(dense, t, order) == stationary_io(dense, t, order)


def test_dense_only_searches_refuse_grouped_layers():
    """The dense searches and non-output orders name dataflow.grouped for a grouped layer."""
    layer = get_layer("mobilenet.conv_dw_2")
    t = DirectTiling(8, 8, 1)
    for call in (lambda: best_direct_dataflow(layer, 12288), lambda: optimal_direct_tiles(layer, 12288),
                 lambda: stationary_io(layer, t, "weight")):
        with pytest.raises(InvalidInputError, match="dataflow.grouped"):
            call()


def test_winograd_refuses_grouped_layers():
    """Winograd names the groups in every entry point (bound, dataflow)."""
    from iobound.report import bound_report
    layer = get_layer("resnext50.conv2_1b")
    for call in (lambda: evaluate_dataflow(layer, 12288, algorithm="winograd"),
                 lambda: bound_report(layer, 12288, algorithm="winograd")):
        with pytest.raises(InvalidInputError, match="groups=32"):
            call()


def test_presets_depthwise_and_resnext_dataflows():
    """MobileNet's depthwise and ResNeXt's grouped layers get a dataflow within 2x of the bound
    at 48 KiB (compulsory I/O is the best bound there)."""
    for name in ("mobilenet.conv_dw_1", "mobilenet.conv_dw_2", "resnext50.conv3_1b"):
        rep = evaluate_dataflow(get_layer(name), 12288)
        assert rep.bound_method == "compulsory" and 1 <= rep.ratio_to_bound < 2, name


def test_best_grouped_dataflow_scales_the_sub_layer():
    """best_grouped_dataflow: the sub-layer's choice with I/O times G."""
    layer = ConvLayer(1, 8, 10, 10, 8, 3, 3, padding=1, groups=4)
    got, sub = best_grouped_dataflow(layer, 200), best_direct_dataflow(group_sublayer(layer), 200)
    assert got.tiling == sub.tiling and got.io.total == 4 * sub.io.total


@given(st.integers(1, 16), st.integers(1, 8), st.integers(1, 4), st.integers(4, 40),
       st.sampled_from([1, 3, 5]), st.integers(1, 2), st.integers(64, 20000), st.booleans())
def test_best_grouped_dataflow_never_beats_a_bound(groups, cg, og, size, k, stride, s, divisors):
    """Mid-sized grouped layers (no DAG): every order's best per-group tiling moves at least
    every bound of the whole layer at S + 2."""
    from iobound.multi_block import bound_fast_memory
    from iobound.report import bound_report

    layer = ConvLayer(1, groups * cg, size, size, groups * og, k, k, stride=stride, padding=k // 2,
                      groups=groups)
    bounds = bound_report(layer, bound_fast_memory(s)).bounds
    for order in ORDERS:
        try:
            choice = best_grouped_dataflow(layer, s, divisors, orders=(order,))
        except InvalidInputError:
            continue                      # no block of this order fits
        assert choice.footprint.total <= s
        assert all(choice.io.total >= b.value - 1e-9 for b in bounds.values()), (order, choice)
