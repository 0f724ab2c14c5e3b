"""The computation order of the run dataflows (:mod:`dataflow.runs`) for the pebble game.

Blocks as in :mod:`dataflow.runs`: ``"output-runs"`` one block per image, run and channel
chunk; ``"weight-runs"`` one per chunk (every image and run inside); ``"input-runs"`` one per
image and run (every chunk inside). Within a block part, channel by channel:

* inputs resident (``"output-runs"`` with ``m <= z``, ``"input-runs"``): for each output
  channel and tap, the weight is used by every output of the run, then not again;
* weights resident (``"output-runs"`` with ``m > z``, ``"weight-runs"``): output by output
  and tap by tap, the input is used by every channel of the chunk, then not again.

Both advance every output's accumulation chain (:func:`dataflow.dag_direct.direct_chain`,
terms in ``(ci, i, j)`` order) one term at a time, so the order is topological.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> from dataflow.dag_direct import direct_conv_dag
>>> from dataflow.pebble import play
>>> from dataflow.runs import RunTiling, run_footprint, run_io
>>> layer = ConvLayer(1, 2, 3, 3, 3, 1, 1)
>>> dag, t = direct_conv_dag(layer), RunTiling(4, 2)
>>> sched = run_schedule(dag, layer, t, "output-runs")
>>> sched.block_starts
(0, 24, 36, 60, 72, 78)
>>> s = run_footprint(layer, t, "output-runs").total + 2
>>> play(dag, sched, s, flush_at=sched.block_starts).total == run_io(layer, t, "output-runs").total
True
"""

from __future__ import annotations

from iobound.layer import ConvLayer

from .dag_direct import direct_chain, direct_taps
from .runs import RunTiling, _check_order, check_run_tiling
from .schedules import TiledSchedule, check_layer_dag

__all__ = ["run_schedule"]


def _steps(layer: ConvLayer, b: int, co: int, oh: int, ow: int) -> dict:
    """The vertices that add each term ``(ci, i, j)`` to the output's chain."""
    rows, cols = direct_taps(layer, oh, ow)
    terms = [(ci, i, j) for ci in range(layer.c_in) for i, _ in rows for j, _ in cols]
    chain = [v for _, v in direct_chain(layer, b, co, oh, ow)]
    if not terms:
        return {}
    steps = {terms[0]: [chain[0]]}
    for k in range(1, len(terms)):
        steps[terms[k]] = chain[2 * k - 1: 2 * k + 1]
    return steps


def _part(layer: ConvLayer, b: int, positions, cos, inputs_resident: bool) -> list:
    """One run and channel chunk, channel by channel (module docstring)."""
    steps = {(co, p): _steps(layer, b, co, *p) for co in cos for p in positions}
    taps = [(i, j) for i in range(layer.k_h) for j in range(layer.k_w)]
    order: list = []
    for c in range(layer.c_in):
        if inputs_resident:
            seq = ((co, p, t) for co in cos for t in taps for p in positions)
        else:
            seq = ((co, p, t) for p in positions for t in taps for co in cos)
        for co, p, (i, j) in seq:
            order += steps[co, p].get((c, i, j), [])
    return order


def run_schedule(dag, layer: ConvLayer, tiling: RunTiling, order: str = "output-runs") -> TiledSchedule:
    """The computation order of the run dataflow ``order`` (a :class:`TiledSchedule`).

    ``block_starts`` marks the blocks (``play(..., flush_at=...)`` empties fast memory there).

    Examples
    --------
    One block per channel chunk (``z = 2`` of 3), or one per run (``m = 4`` of 9 positions):

    >>> from iobound.layer import ConvLayer
    >>> from dataflow.dag_direct import direct_conv_dag
    >>> layer = ConvLayer(1, 2, 3, 3, 3, 1, 1)
    >>> [run_schedule(direct_conv_dag(layer), layer, RunTiling(4, 2), o).block_starts
    ...  for o in ("weight-runs", "input-runs")]
    [(0, 54), (0, 36, 72)]
    """
    check_layer_dag(dag, layer, "direct")  # a DAG of this layer is small: so is the order
    _check_order(order)
    check_run_tiling(layer, tiling)
    flat = [(oh, ow) for oh in range(layer.h_out) for ow in range(layer.w_out)]
    runs = [(b, flat[s:s + tiling.m]) for b in range(layer.n) for s in range(0, len(flat), tiling.m)]
    chunks = [range(c, min(c + tiling.z, layer.c_out)) for c in range(0, layer.c_out, tiling.z)]
    if order == "output-runs":
        blocks = [[(b, pos, cos)] for b, pos in runs for cos in chunks]
    elif order == "weight-runs":
        blocks = [[(b, pos, cos) for b, pos in runs] for cos in chunks]
    else:
        blocks = [[(b, pos, cos) for cos in chunks] for b, pos in runs]
    inputs_resident = order == "input-runs" or (order == "output-runs" and tiling.m <= tiling.z)
    seq: list = []
    starts: list[int] = []
    for parts in blocks:
        starts.append(len(seq))
        for b, pos, cos in parts:
            seq += _part(layer, b, pos, cos, inputs_resident)
    return TiledSchedule(order=tuple(seq), block_starts=tuple(starts), algorithm="direct", tiling=tiling)
