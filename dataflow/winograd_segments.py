"""The Winograd chain bound's segment quantities, measured on a played game.

The proof of :mod:`iobound.winograd_chain` makes claims about any legal move list of the
builder's Winograd DAG; this module measures them, so that proofs/test_winograd_chain.py
can check every step on played schedules.

* :func:`traced_events`: from the first computation of every ``Pi`` vertex, the compute
  event whose value reached it, for every product and partial sum of its chain.
* :func:`winograd_segments`: cuts the moves after every ``Y``-th virtual load (a load, or
  the traced event of a chain's first sum) and records, per segment, the products
  charged to it (to their parent sum's segment), the transformed operands and chains of
  those it computes, the incoming products and chain predecessors it needs, its fresh
  runs, and its start budget (red at its start or loaded in it).

Examples
--------
>>> from iobound import ConvLayer
>>> from dataflow.dag_winograd import winograd_conv_dag
>>> from dataflow.pebble import play
>>> from dataflow.schedules import topological_schedule
>>> layer = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=1, k_h=3, k_w=3)
>>> dag = winograd_conv_dag(layer, 2)
>>> res = play(dag, topological_schedule(dag), S=12, record_moves=True)
>>> segs = winograd_segments(dag, res.moves, Y=24)
>>> sum(s.fresh for s in segs), sum(s.charged for s in segs)   # 16 chains, 32 products
(16, 32)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import networkx as nx

from iobound import limits
from iobound.errors import InvalidInputError

from .pebble_moves import check_dag, legal_game
from .segments import SEGMENT_LOADS

__all__ = ["WinogradSegment", "traced_events", "winograd_segments", "is_input_side", "is_kernel_side"]


def _kind(d) -> str:
    if not isinstance(d, Mapping) or "kind" not in d:
        raise InvalidInputError(f"a vertex's data must be a mapping with its 'kind' (the "
                                f"Winograd DAG's), got {d!r:.60}")
    return d["kind"]


def is_input_side(d: dict) -> bool:
    """Raw inputs and input-transform entries (``B^T d``, ``P``).

    >>> is_input_side({"kind": "transform", "transform": "input"})
    True
    """
    kind = _kind(d)
    return kind == "input" or (kind == "transform" and d.get("transform") == "input")


def is_kernel_side(d: dict) -> bool:
    """Raw weights and kernel-transform entries (``G g``, ``J``).

    >>> is_kernel_side({"kind": "weight"}), is_kernel_side({"kind": "input"})
    (True, False)
    """
    kind = _kind(d)
    return kind == "weight" or (kind == "transform" and d.get("transform") == "kernel")


def _checked_game(dag, moves) -> list:
    """``moves`` as a list once ``dag`` is a Winograd DAG of the builder and ``moves`` a
    legal, complete game on it; else InvalidInputError."""
    check_dag(dag)
    if dag.graph.get("e") is None:   # the Winograd builder records its output tile
        raise InvalidInputError("the segments measure the Winograd DAG of "
                                "dataflow.winograd_conv_dag, which records its e; this DAG "
                                f"has none ({dag.graph.get('algorithm') or 'no'} algorithm)")
    return legal_game(dag, moves)


def _is_chain(d: dict) -> bool:
    return d["kind"] in ("product", "sum")


def traced_events(dag: nx.DiGraph, moves) -> dict:
    """Chain vertex -> the compute move whose value reaches its ``Pi``'s first computation.

    Examples
    --------
    Every product and partial sum of a played game is traced (no recomputation here):

    >>> from iobound import ConvLayer
    >>> from dataflow import play, topological_schedule, winograd_conv_dag
    >>> dag = winograd_conv_dag(ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=1, k_h=3, k_w=3), 2)
    >>> ev = traced_events(dag, play(dag, topological_schedule(dag), S=12, record_moves=True).moves)
    >>> len(ev), sum(d["kind"] in ("product", "sum") for _, d in dag.nodes(data=True))
    (48, 48)
    """
    return _traced_events(dag, _checked_game(dag, moves))


def _traced_events(dag: nx.DiGraph, moves: list) -> dict:
    red, blue, feeds, first_pi = {}, {}, {}, {}
    for k, (op, v) in enumerate(moves):
        if op == "compute":
            feeds[k] = {u: red[u] for u in dag.predecessors(v)}
            red[v] = k
            if v[0] == "pi":
                first_pi.setdefault(v, k)
        elif op == "load":
            red[v] = blue.get(v, -1)
        elif op == "store":
            blue[v] = red[v]
        else:
            red.pop(v, None)
    ev: dict = {}
    stack = list(first_pi.items())
    while stack:
        v, k = stack.pop()
        ev[v] = k
        stack += [(u, ku) for u, ku in feeds[k].items() if _is_chain(dag.nodes[u])]
    return ev


@dataclass
class WinogradSegment:
    """What one segment needs and computes (module docstring).

    ``charged``: products charged to it; ``computed``: those of them it computes;
    ``a``/``b``/``c``: per frequency ``(i, j)``, the ``P`` operands, ``J`` operands and
    chains ``(b, th, tw, co)`` of the computed ones; ``chains``: chains with a charged
    product; ``fresh``: runs that start their chain; ``needed``: incoming products and
    chain predecessors; ``d_in``/``d_w``: input- and kernel-side vertices of its start
    budget; ``budget``: red at its start or loaded in it.

    Examples
    --------
    With ``Y`` above the game's loads, one segment holds the whole game:

    >>> from iobound import ConvLayer
    >>> from dataflow import play, topological_schedule, winograd_conv_dag
    >>> dag = winograd_conv_dag(ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=1, k_h=3, k_w=3), 2)
    >>> moves = play(dag, topological_schedule(dag), S=12, record_moves=True).moves
    >>> (seg,) = winograd_segments(dag, moves, Y=1000)
    >>> seg.loads, seg.stores, seg.charged, seg.computed, len(seg.needed)
    (183, 136, 32, 32, 0)
    """

    loads: int = 0
    stores: int = 0
    charged: int = 0
    computed: int = 0
    fresh: int = 0
    a: dict = field(default_factory=dict)
    b: dict = field(default_factory=dict)
    c: dict = field(default_factory=dict)
    chains: set = field(default_factory=set)
    needed: set = field(default_factory=set)
    budget: set = field(default_factory=set)
    d_in: set = field(default_factory=set)
    d_w: set = field(default_factory=set)


def _chain_of(d: dict) -> tuple:
    return d["b"], d["th"], d["tw"], d["co"], d["i"], d["j"]


def _first_sum(dag: nx.DiGraph, v) -> bool:
    """A chain's first sum (both predecessors products), or a single-product ``Pi``."""
    d = dag.nodes[v]
    if d["kind"] == "product":
        return v[0] == "pi"
    return all(dag.nodes[u]["kind"] == "product" for u in dag.predecessors(v))


def _cut(moves: list, Y: int, fresh_moves: set) -> tuple[list, list[WinogradSegment]]:
    seg_of, red, virtual = [], set(), 0
    segs = [WinogradSegment()]
    for k, (op, v) in enumerate(moves):
        j = virtual // Y
        while len(segs) <= j:
            segs.append(WinogradSegment(budget=set(red)))
        seg_of.append(j)
        if op == "load":
            segs[j].loads += 1
            segs[j].budget.add(v)
            red.add(v)
        elif op == "store":
            segs[j].stores += 1
        elif op == "compute":
            red.add(v)
        else:
            red.discard(v)
        virtual += op == "load" or k in fresh_moves
    return seg_of, segs


def winograd_segments(dag: nx.DiGraph, moves, Y: int) -> list[WinogradSegment]:
    """Measure every segment of ``Y`` virtual loads of a played Winograd game.

    Examples
    --------
    Smaller segments: more of them, and the products they charge but do not compute are needed:

    >>> from iobound import ConvLayer
    >>> from dataflow import play, topological_schedule, winograd_conv_dag
    >>> dag = winograd_conv_dag(ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=1, k_h=3, k_w=3), 2)
    >>> moves = play(dag, topological_schedule(dag), S=12, record_moves=True).moves
    >>> segs = winograd_segments(dag, moves, Y=48)
    >>> len(segs), sum(s.loads for s in segs), sum(s.computed for s in segs)
    (5, 183, 7)
    >>> sum(len(s.needed) for s in segs)
    25
    """
    moves = _checked_game(dag, moves)
    Y = limits.check_int("Y", Y, SEGMENT_LOADS)
    ev = _traced_events(dag, moves)
    fresh_moves = {k for v, k in ev.items() if _first_sum(dag, v)}
    seg_of, segs = _cut(moves, Y, fresh_moves)
    for v, k in ev.items():
        d = dag.nodes[v]
        if d["kind"] == "product":
            parent = v if v[0] == "pi" else next(iter(dag.successors(v)))
            seg = segs[seg_of[ev[parent]]]
            seg.charged += 1
            seg.chains.add(_chain_of(d))
            if seg_of[k] != seg_of[ev[parent]]:
                seg.needed.add(v)
                continue
            seg.computed += 1
            nu = (d["i"], d["j"])
            for u in dag.predecessors(v):
                side = seg.a if is_input_side(dag.nodes[u]) else seg.b
                side.setdefault(nu, set()).add(u)
            seg.c.setdefault(nu, set()).add(_chain_of(d))
        else:
            seg = segs[seg_of[k]]
            preds = [u for u in dag.predecessors(v) if dag.nodes[u]["kind"] == "sum"]
            if preds and seg_of[ev[preds[0]]] != seg_of[k]:     # a run's first sum, continued
                seg.needed.add(preds[0])
    for v, k in ev.items():
        if k in fresh_moves:
            segs[seg_of[k]].fresh += 1
    for seg in segs:
        seg.d_in = {u for u in seg.budget if is_input_side(dag.nodes[u])}
        seg.d_w = {u for u in seg.budget if is_kernel_side(dag.nodes[u])}
    return segs
