"""Direct dataflows of grouped layers: the dense dataflow of one group, run once per group.

A layer with ``groups = G`` computes G independent dense convolutions ``c_in/G -> c_out/G``
of the same spatial shape: its DAG (:func:`dataflow.dag_direct.direct_conv_dag`) is the
disjoint union of G copies of the DAG of :func:`group_sublayer`. A dataflow that runs a dense
dataflow of that sub-layer on every group (blocks never mix groups) therefore moves exactly
G times the sub-layer's traffic, with the sub-layer's footprint, for every order of
:mod:`dataflow.stationary` (and whatever dense dataflow is added there): the reduction is
exact, and :func:`grouped_schedule` plays it on the grouped DAG.

Tiles that span groups (output-stationary; the other orders are defined per group only and
refuse grouped layers). Output-stationary tiles over the global channel index (``z``
channels from a multiple of ``z``, as :func:`dataflow.schedules.tiled_schedule` runs them)
may cover several groups; a block then reads the input channels of every group it touches.
:func:`dataflow.direct.direct_io` counts that exactly (``channel_group_spans``). Such a
tiling never moves less than the per-group tiling with ``z' = min(z, c_out/G)`` and
``alpha' = min(alpha, c_in/G)``, whose footprint is no larger (every group is touched by at
least ``ceil((c_out/G) / z')`` of its chunks; weights and outputs are the same;
``tests/dataflow/test_grouped.py``), so the search looks at per-group tiles only.

Where the reduction is not exact: a lower bound of the grouped layer is not G times the
sub-layer's (the segment argument shares one fast memory among all groups,
proofs/test_grouped_bounds.py), so :func:`evaluate_grouped` takes the bound of the whole layer;
Winograd does not apply to grouped layers (``ConvLayer.winograd_problem``).

Examples
--------
>>> from iobound.layer import ConvLayer
>>> dw = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1, groups=8)
>>> group_sublayer(dw).short()
'n1 1x8x8 -> 1x8x8 k3x3 s1x1 p1x1'
>>> t = DirectTiling(x=8, y=8, z=1)
>>> grouped_io(dw, t).total == 8 * grouped_io(group_sublayer(dw), t).total == 1096
True
>>> best_grouped_dataflow(dw, 256).io.total    # every input, weight and output once
1096
"""

from __future__ import annotations

import dataclasses

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer, takes_layer

from .direct import DirectTiling
from .io_volume import DataflowIO, shown_tiling
from .stationary import ORDERS, StationaryChoice, best_direct_dataflow, stationary_footprint, stationary_io

__all__ = ["group_sublayer", "check_group_tiling", "grouped_io", "grouped_footprint",
           "best_grouped_dataflow", "grouped_schedule", "evaluate_grouped"]


@takes_layer
def group_sublayer(layer: ConvLayer) -> ConvLayer:
    """The dense layer of one group: ``c_in/G -> c_out/G`` channels, the same spatial shape.

    Examples
    --------
    >>> group_sublayer(ConvLayer(2, 6, 5, 5, 4, 3, 3, groups=2)).short()
    'n2 3x5x5 -> 2x3x3 k3x3 s1x1 p0x0'
    """
    if layer.groups == 1:
        return layer
    label = f"{layer.name} (one of {layer.groups} groups)" if layer.name else ""
    return layer.replace(c_in=layer.c_in_per_group, c_out=layer.c_out_per_group, groups=1,
                         name=label)


@takes_layer
def check_group_tiling(layer: ConvLayer, tiling: DirectTiling) -> None:
    """InvalidInputError when a per-group tiling is larger than one group (or the output).

    Examples
    --------
    >>> check_group_tiling(ConvLayer(1, 4, 5, 5, 4, 3, 3, groups=2), DirectTiling(3, 3, 4))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: tile z=4 is larger than one group's c_out/groups=2 (grouped layers are tiled per group)
    """
    if not isinstance(tiling, DirectTiling):
        raise InvalidInputError(f"a grouped layer needs a DirectTiling, got {shown_tiling(tiling)}")
    for name, dim, dim_name in (("x", layer.w_out, "w_out"), ("y", layer.h_out, "h_out"),
                                ("z", layer.c_out_per_group, "one group's c_out/groups"),
                                ("alpha", layer.c_in_per_group, "one group's c_in/groups")):
        v = getattr(tiling, name)
        if v > dim:
            hint = " (grouped layers are tiled per group)" if name in ("z", "alpha") else ""
            raise InvalidInputError(f"tile {name}={v} is larger than {dim_name}={dim}{hint}")


@takes_layer
def grouped_io(layer: ConvLayer, tiling: DirectTiling, order: str = "output") -> DataflowIO:
    """Exact traffic of the per-group dataflow: G times the sub-layer's (``groups == 1``: the
    dense).

    Examples
    --------
    >>> grouped_io(ConvLayer(1, 8, 8, 8, 8, 3, 3, padding=1, groups=2), DirectTiling(4, 4, 4))
    DataflowIO(input_loads=800, weight_loads=1152, output_stores=512, total=2464)
    """
    check_group_tiling(layer, tiling)
    return stationary_io(group_sublayer(layer), tiling, order).times(layer.groups)


@takes_layer
def grouped_footprint(layer: ConvLayer, tiling: DirectTiling, order: str = "output"):
    """On-chip words of one block of the per-group dataflow (the sub-layer's footprint).

    Examples
    --------
    >>> layer, t = ConvLayer(1, 8, 8, 8, 8, 3, 3, padding=1, groups=2), DirectTiling(4, 4, 4)
    >>> grouped_footprint(layer, t) == stationary_footprint(group_sublayer(layer), t)
    True
    >>> grouped_footprint(layer, t, "weight").total
    244
    """
    check_group_tiling(layer, tiling)
    return stationary_footprint(group_sublayer(layer), tiling, order)


@takes_layer
def best_grouped_dataflow(layer: ConvLayer, fast_memory: int, divisors: bool = True,
                          orders: tuple[str, ...] = ORDERS) -> StationaryChoice:
    """The per-group order and tiling of least exact I/O (:func:`dataflow.stationary.best_direct_dataflow`
    on the sub-layer), its I/O scaled to all groups.

    Examples
    --------
    >>> best = best_grouped_dataflow(ConvLayer(1, 8, 8, 8, 8, 3, 3, padding=1, groups=2), 300)
    >>> best.order, best.tiling, best.io.total
    ('weight', DirectTiling(x=4, y=4, z=4, alpha=1), 1600)
    """
    choice = best_direct_dataflow(group_sublayer(layer), fast_memory, divisors, orders)
    return dataclasses.replace(choice, io=choice.io.times(layer.groups))


def _shift(v: tuple, g: int, og: int, cg: int) -> tuple:
    """A sub-layer vertex key moved to group ``g`` (output channel at 2, input channel at 5)."""
    if v[0] == "prod":
        return v[:2] + (v[2] + g * og,) + v[3:5] + (v[5] + g * cg,) + v[6:]
    return v[:2] + (v[2] + g * og,) + v[3:]


@takes_layer
def grouped_schedule(layer: ConvLayer, tiling: DirectTiling, order: str = "output"):
    """The per-group dataflow's computation order on the grouped DAG (a ``TiledSchedule``).

    The sub-layer's :func:`dataflow.stationary.stationary_schedule`, once per group with
    the channel indices shifted; ``block_starts`` mark every block of every group.

    Examples
    --------
    >>> from dataflow.dag_direct import direct_conv_dag
    >>> from dataflow.pebble import play
    >>> layer = ConvLayer(1, 4, 4, 4, 4, 3, 3, groups=2)
    >>> t = DirectTiling(2, 2, 1)
    >>> sched = grouped_schedule(layer, t)
    >>> s = grouped_footprint(layer, t).total + 2
    >>> play(direct_conv_dag(layer), sched.order, s, flush_at=sched.block_starts).total
    216
    >>> grouped_io(layer, t).total
    216
    """
    from .dag_direct import direct_conv_dag
    from .schedules import TiledSchedule
    from .stationary import stationary_schedule

    check_group_tiling(layer, tiling)
    sub = group_sublayer(layer)
    one = stationary_schedule(direct_conv_dag(sub), sub, tiling, order)
    og, cg = layer.c_out_per_group, layer.c_in_per_group
    seq, starts = [], []
    for g in range(layer.groups):
        starts += [len(seq) + s for s in one.block_starts]
        seq += [_shift(v, g, og, cg) for v in one.order]
    return TiledSchedule(order=tuple(seq), block_starts=tuple(starts), algorithm="direct",
                         tiling=tiling)


@takes_layer
def evaluate_grouped(layer: ConvLayer, fast_memory: int, processors: int = 1,
                     tiling: DirectTiling | None = None, tolerance: float | None = None,
                     divisors: bool = True, order: str | None = None):
    """:func:`dataflow.evaluate.evaluate_dataflow` of a grouped layer (direct algorithm).

    The sub-layer's report (per-group tiles, footprint, optimality condition, continuous
    optimum) with the traffic and the paper's estimates times G, and the lower bound and
    ratio of the whole grouped layer; ``tiles_source`` ends in ``" per group"``.

    >>> from iobound.layer import ConvLayer
    >>> dw = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1, groups=8)
    >>> r = evaluate_grouped(dw, 256)   # depthwise: 8 groups of one channel
    >>> r.tiles_source, r.io.total, r.ratio_to_bound   # each value moved once: the bound
    ('optimal per group', 1096, 1.0)
    """
    from .evaluate import OPTIMALITY_TOLERANCE, _bound, evaluate_dataflow
    from iobound.multi_block import bound_fast_memory

    from .runs import RunTiling

    if isinstance(tiling, RunTiling):   # per group too; the sub-layer checks m
        if tiling.z > layer.c_out_per_group:
            raise InvalidInputError(f"run z={tiling.z} is larger than one group's c_out/groups="
                                    f"{layer.c_out_per_group} (grouped layers are tiled per group)")
    elif tiling is not None:
        check_group_tiling(layer, tiling)
    g = layer.groups
    rep = evaluate_dataflow(group_sublayer(layer), fast_memory, "direct", processors, None, tiling,
                            OPTIMALITY_TOLERANCE if tolerance is None else tolerance, divisors, order)
    bound, method = _bound(layer, bound_fast_memory(rep.block_memory_words), "direct", None)
    io = rep.io.times(g)
    return dataclasses.replace(
        rep, layer=layer, tiles_source=rep.tiles_source + " per group", io=io,
        io_paper_approx=g * rep.io_paper_approx, io_paper_closed_form=g * rep.io_paper_closed_form,
        lower_bound=bound, bound_method=method,
        ratio_to_bound=io.total / bound if bound > 0 else float("inf"),
        continuous=dataclasses.replace(rep.continuous, io=g * rep.continuous.io))
