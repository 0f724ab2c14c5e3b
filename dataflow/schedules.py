"""Computation orders for the pebble game: topological orders and the orders of tiled dataflows.

A schedule lists the non-source vertices of a DAG in the order they are computed (a
vertex may repeat: recomputation). :func:`dataflow.pebble.play` executes it.

* :func:`topological_schedule`: any topological order; a random one with an explicit
  ``np.random.Generator`` (Kahn's algorithm choosing uniformly among the ready vertices).
* :func:`tiled_schedule`: the order a tiled dataflow computes in (conventions.md). Blocks
  are visited image by image, then by output-tile row, tile column and output-channel
  block (``for b, oy0, ox0, co0``); ``block_starts`` marks where each block begins, so
  ``play(..., flush_at=sched.block_starts)`` models blocks that share nothing on chip.

  - Direct (:class:`dataflow.direct.DirectTiling` ``x, y, z, alpha``): within a block the
    input channels go in chunks of ``alpha``; within a chunk, output by output
    (``co, oh, ow``), the products of the chunk's channels and the partial sums that add
    them (the accumulation chain of :func:`dataflow.dag_direct.direct_chain`).
  - Winograd (:class:`dataflow.winograd.WinogradTiling` ``e, x, y, z``): within a block,
    channel by channel: the kernel transforms of the block's ``z`` output channels at
    that channel, then tile by tile the input transform of the tile followed, for every
    output channel, by the element products and the channel-sum step of each ``(i, j)``;
    after the last channel, tile by tile and channel by channel, the output transform.
    Transforms shared by several blocks are recomputed in each block (as on a GPU), and a
    block computes only the transform entries its own tiles need.

Examples
--------
>>> from iobound import ConvLayer
>>> from dataflow.dag_direct import direct_conv_dag
>>> from dataflow.direct import DirectTiling
>>> from dataflow.pebble import play
>>> layer = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=2, k_h=3, k_w=3)
>>> dag = direct_conv_dag(layer)
>>> sched = tiled_schedule(dag, layer, DirectTiling(x=2, y=1, z=2, alpha=1))
>>> len(sched.order), sched.block_starts
(280, (0, 140))
>>> play(dag, sched, S=30, flush_at=sched.block_starts).total  # = direct_io(...).total
128
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import networkx as nx
import numpy as np

from iobound import limits
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer, check_layer

from .dag_direct import direct_chain
from .pebble_moves import check_dag
from .direct import DirectTiling, _shown_tiling, check_direct_tiling
from .winograd import WinogradTiling, check_winograd_tiling

__all__ = ["TiledSchedule", "tiled_schedule", "topological_schedule", "with_recomputation",
           "check_layer_dag"]


@dataclass(frozen=True)
class TiledSchedule:
    """The computation order of a tiled dataflow.

    Attributes
    ----------
    order : tuple
        Vertices in compute order (every non-source at least once).
    block_starts : tuple[int, ...]
        Index in ``order`` where each block begins.
    algorithm : str
        ``"direct"`` or ``"winograd"``.
    tiling : DirectTiling or WinogradTiling

    Examples
    --------
    >>> from iobound import ConvLayer
    >>> from dataflow import WinogradTiling, winograd_conv_dag
    >>> layer = ConvLayer(n=1, c_in=1, h_in=6, w_in=6, c_out=1, k_h=3, k_w=3)
    >>> s = tiled_schedule(winograd_conv_dag(layer, 2), layer, WinogradTiling(e=2, x=2, y=4, z=1))
    >>> s.algorithm, s.tiling.e, len(s), s.block_starts, s.order[-1]  # ends with an output
    ('winograd', 2, 296, (0, 148), ('out', 0, 0, 3, 3))
    """

    order: tuple
    block_starts: tuple[int, ...]
    algorithm: str
    tiling: object

    def __len__(self) -> int:
        return len(self.order)


def topological_schedule(dag: nx.DiGraph, rng: np.random.Generator | None = None) -> tuple:
    """The non-source vertices in a topological order (random when ``rng`` is given).

    Examples
    --------
    >>> import networkx as nx, numpy as np
    >>> g = nx.DiGraph([("a", "b"), ("b", "c"), ("a", "c")])
    >>> topological_schedule(g, np.random.default_rng(0))
    ('b', 'c')
    """
    check_dag(dag)
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise InvalidInputError(f"rng must be a numpy.random.Generator (np.random.default_rng) "
                                f"or None, got {type(rng).__name__} {rng!r:.60}")
    if rng is None:
        return tuple(v for v in nx.topological_sort(dag) if dag.in_degree(v) > 0)
    indeg = dict(dag.in_degree())
    ready = [v for v, d in indeg.items() if d == 0]
    order = []
    while ready:
        k = int(rng.integers(len(ready)))
        ready[k], ready[-1] = ready[-1], ready[k]
        v = ready.pop()
        if indeg[v] == 0 and dag.in_degree(v) > 0:
            order.append(v)
        for w in dag.successors(v):
            indeg[w] -= 1
            if indeg[w] == 0:
                ready.append(w)
    return tuple(order)


def with_recomputation(dag: nx.DiGraph, order, rng, share: float = 0.2) -> list:
    """``order`` with a second compute of a random ``share`` of the products inserted
    right before each of their successors (schedules that recompute, for the proofs'
    played-game checks). ``rng`` has ``random()`` (numpy or the standard library).

    Examples
    --------
    >>> import networkx as nx, random
    >>> g = nx.DiGraph([("x", "p"), ("p", "s")])
    >>> g.nodes["p"]["kind"] = "product"
    >>> with_recomputation(g, ["p", "s"], random.Random(0), share=1.0)
    ['p', 'p', 's']
    """
    check_dag(dag)
    if isinstance(order, (str, bytes)) or not isinstance(order, Iterable):
        raise InvalidInputError(f"order must be an iterable of the DAG's vertices, got "
                                f"{type(order).__name__}")
    order = list(order)
    strangers = [v for v in order if v not in dag]
    if strangers:
        raise InvalidInputError(f"order holds {strangers[0]!r:.60}, no vertex of the DAG")
    if not callable(getattr(rng, "random", None)):
        raise InvalidInputError(f"rng must have random() (numpy's Generator or random.Random), "
                                f"got {type(rng).__name__}")
    share = limits.check_number("share", share, 0, 1)
    out = []
    redo = {v for v in order if dag.nodes[v].get("kind") == "product" and rng.random() < share}
    for v in order:
        out += [u for u in dag.predecessors(v) if u in redo]
        out.append(v)
    return out


def _blocks(layer: ConvLayer, x: int, y: int, z: int):
    for b in range(layer.n):
        for oy0 in range(0, layer.h_out, y):
            for ox0 in range(0, layer.w_out, x):
                for co0 in range(0, layer.c_out, z):
                    yield (b, range(oy0, min(oy0 + y, layer.h_out)),
                           range(ox0, min(ox0 + x, layer.w_out)),
                           range(co0, min(co0 + z, layer.c_out)))


def direct_tile_order(layer: ConvLayer, b: int, rows, cols, cos, alpha: int) -> list:
    """One output tile's computations: channel chunk by chunk, output by output (its chains).

    Examples
    --------
    Two outputs of one row, ``alpha = 1``: both take channel 0's products before channel 1's.

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=2, h_in=3, w_in=3, c_out=1, k_h=2, k_w=2)
    >>> order = direct_tile_order(layer, 0, range(1), range(2), range(1), alpha=1)
    >>> len(order), order[-1]
    (30, ('out', 0, 0, 0, 1))
    >>> [v[5] for v in order if v[0] == "prod"]   # the input channel of each product
    [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]
    """
    order: list = []
    chains = [direct_chain(layer, b, co, oh, ow) for co in cos for oh in rows for ow in cols]
    pos = [0] * len(chains)
    for c0 in range(0, layer.c_in, alpha):
        for k, chain in enumerate(chains):
            p = pos[k]
            while p < len(chain) and chain[p][0] < c0 + alpha:
                order.append(chain[p][1])
                p += 1
            pos[k] = p
    return order


def _direct_order(layer: ConvLayer, t: DirectTiling) -> tuple[list, list[int]]:
    order: list = []
    starts: list[int] = []
    for b, rows, cols, cos in _blocks(layer, t.x, t.y, t.z):
        starts.append(len(order))
        order += direct_tile_order(layer, b, rows, cols, cos, t.alpha)
    return order, starts


def _present(dag: nx.DiGraph, keys) -> list:
    return [k for k in keys if k in dag]


def _winograd_order(dag: nx.DiGraph, layer: ConvLayer, t: WinogradTiling) -> tuple[list, list[int]]:
    e, nn, c_in = t.e, t.e + layer.k_h - 1, layer.c_in
    ij = [(i, j) for i in range(nn) for j in range(nn)]
    order: list = []
    starts: list[int] = []
    for b, rows, cols, cos in _blocks(layer, t.x, t.y, t.z):
        starts.append(len(order))
        tiles = [(th, tw) for th in range(rows.start // e, -(-rows.stop // e))
                 for tw in range(cols.start // e, -(-cols.stop // e))]

        def prod(co, th, tw, i, j, ci):
            return ("pi", b, co, th, tw, i, j) if c_in == 1 else ("wprod", b, co, th, tw, i, j, ci)

        def acc(co, th, tw, i, j, ci):
            return ("pi", b, co, th, tw, i, j) if ci == c_in - 1 else ("wsum", b, co, th, tw, i, j, ci)

        for ci in range(c_in):
            prods = {(co, th, tw): _present(dag, [prod(co, th, tw, i, j, ci) for i, j in ij])
                     for co in cos for th, tw in tiles}
            gs = sorted({u for ps in prods.values() for p in ps for u in dag.predecessors(p)
                         if u[0] == "g"})
            for co in cos:      # kernel by kernel: one kernel's G g is live at a time
                mine = [g for g in gs if g[1] == co]
                order += sorted({u for g in mine for u in dag.predecessors(g)}) + mine
            for th, tw in tiles:
                bts = _present(dag, [("bt", b, ci, th, tw, i, j) for i, j in ij])
                order += sorted({u for p in bts for u in dag.predecessors(p)}) + bts
                for co in cos:
                    for p in prods[co, th, tw]:
                        order.append(p)
                        if ci > 0:
                            order.append(acc(co, th, tw, p[5], p[6], ci))
        for th, tw in tiles:
            for co in cos:
                order += _present(dag, [("at1", b, co, th, tw, a, j) for a in range(e) for j in range(nn)])
                order += _present(dag, [("out", b, co, th * e + a, tw * e + c)
                                        for a in range(e) for c in range(e)])
    return order, starts


def check_layer_dag(dag, layer: ConvLayer, algorithm: str | None = None) -> str | None:
    """The algorithm ``dag`` was built for, once ``dag`` is a DAG built from ``layer`` (by
    :func:`dataflow.direct_conv_dag` or :func:`dataflow.winograd_conv_dag`, which record
    both) and, when ``algorithm`` is given, for that algorithm; else InvalidInputError.

    >>> from iobound import ConvLayer
    >>> from dataflow.dag_direct import direct_conv_dag
    >>> small = ConvLayer(1, 1, 3, 3, 1, 2, 2)
    >>> check_layer_dag(direct_conv_dag(small), small, "direct")
    'direct'
    """
    check_layer(layer)
    check_dag(dag)
    built = dag.graph.get("layer")
    if isinstance(built, ConvLayer) and built != layer:
        raise InvalidInputError(f"the DAG was built from the layer {built.short()}, not from "
                                f"{layer.short()}")
    found = dag.graph.get("algorithm")
    if algorithm is not None and found != algorithm:
        raise InvalidInputError(f"a {algorithm} schedule needs the {algorithm} DAG of the layer, "
                                f"got a {found} DAG")
    return found


def tiled_schedule(dag: nx.DiGraph, layer: ConvLayer, tiling) -> TiledSchedule:
    """The computation order of the tiled dataflow ``tiling`` on ``dag`` (module docstring).

    Parameters
    ----------
    dag : networkx.DiGraph
        :func:`dataflow.direct_conv_dag` or :func:`dataflow.winograd_conv_dag` of ``layer``.
    layer : ConvLayer
    tiling : DirectTiling or WinogradTiling

    Returns
    -------
    TiledSchedule

    Raises
    ------
    InvalidInputError
        When the DAG was built from another layer, the tiling type does not match the DAG
        or does not fit the layer, or the schedule misses a vertex.

    Examples
    --------
    >>> from iobound import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> from dataflow import DirectTiling, direct_conv_dag
    >>> s = tiled_schedule(direct_conv_dag(layer), layer, DirectTiling(x=3, y=3, z=2, alpha=1))
    >>> s.algorithm, len(s.block_starts)  # 2 x 2 tiles of 3 x 3 outputs, 2 channel blocks
    ('direct', 8)
    """
    algorithm = check_layer_dag(dag, layer)
    if isinstance(tiling, WinogradTiling):
        if algorithm != "winograd" or dag.graph.get("e") != tiling.e:
            raise InvalidInputError(f"a WinogradTiling with e={tiling.e} needs the Winograd DAG with the "
                             f"same e, got a {algorithm} DAG (e={dag.graph.get('e')})")
        check_winograd_tiling(layer, tiling)
        order, starts = _winograd_order(dag, layer, tiling)
    elif isinstance(tiling, DirectTiling):
        if algorithm != "direct":
            raise InvalidInputError(f"a DirectTiling needs the direct DAG, got a {algorithm} DAG")
        check_direct_tiling(layer, tiling)
        order, starts = _direct_order(layer, tiling)
    else:
        raise InvalidInputError(f"tiling must be a DirectTiling or a WinogradTiling, got "
                                f"{_shown_tiling(tiling)}")
    covered = set(order)
    missing = [v for v in dag if dag.in_degree(v) > 0 and v not in covered]
    if missing:
        raise InvalidInputError(f"the tiled order misses {len(missing)} vertices, e.g. "
                                f"{missing[0]!r} (is the DAG built from this layer?)")
    return TiledSchedule(order=tuple(order), block_starts=tuple(starts),
                         algorithm=algorithm, tiling=tiling)
