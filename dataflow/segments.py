"""Useful events and the X-partition segment quantities of a played direct-convolution game.

The chain X-partition bound (proofs/test_x_partition_chain.py) rests on combinatorial
claims about any legal move list; this module measures them on real ones, so the
proof's steps can be checked on built DAGs and played schedules.

* :func:`useful_events`: for every non-source vertex, the compute move whose value
  reaches an output's first store (the flow followed back through loads and stores;
  with recomputation this picks one compute per vertex).
* :func:`chain_segments`: cuts the moves after every ``Y``-th load and measures, per
  segment, what the proof bounds: the operands, incoming partial sums and incoming
  products the segment needs (all red at its start or loaded in it), the outputs
  whose chain runs in it (their last sum red at its end or stored in it), the fresh
  ones, and the per-class weighted products charged to it (charged to the segment of
  their parent sum's useful event).

Examples
--------
>>> from iobound import ConvLayer
>>> from dataflow.dag_direct import direct_conv_dag
>>> from dataflow.pebble import play
>>> from dataflow.schedules import topological_schedule
>>> layer = ConvLayer(n=1, c_in=2, h_in=3, w_in=3, c_out=2, k_h=2, k_w=2)
>>> dag = direct_conv_dag(layer)
>>> res = play(dag, topological_schedule(dag), S=10, record_moves=True)
>>> segs = chain_segments(dag, res.moves, Y=20)
>>> sum(s.fresh for s in segs), all(s.needed <= s.start_budget for s in segs)
(8, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import networkx as nx

from iobound import limits
from iobound.errors import InvalidInputError
from iobound.reuse_classes import axis_tap_classes

from .pebble_moves import check_dag, legal_game

__all__ = ["ChainSegment", "useful_events", "chain_segments", "SEGMENT_LOADS"]

#: Loads per segment (``Y``): the proofs take a few times S.
SEGMENT_LOADS = limits.Limit(1, 1 << 62, "loads per segment: a few times S")


def useful_events(dag: nx.DiGraph, moves) -> dict:
    """Vertex -> index of its useful compute move (the one whose value reaches an output's store).

    Raises
    ------
    ValueError
        When two useful computations reach one vertex (a DAG whose non-sources have more
        than one successor; not the direct DAG).

    Examples
    --------
    Without recomputation every non-source vertex has exactly one useful compute:

    >>> from iobound import ConvLayer
    >>> from dataflow import direct_conv_dag, play, topological_schedule
    >>> dag = direct_conv_dag(ConvLayer(n=1, c_in=2, h_in=3, w_in=3, c_out=2, k_h=2, k_w=2))
    >>> ev = useful_events(dag, play(dag, topological_schedule(dag), S=10, record_moves=True).moves)
    >>> len(ev), sum(1 for v in dag if dag.in_degree(v) > 0)
    (120, 120)
    """
    return _useful_events(dag, _checked_game(dag, moves))


def _checked_game(dag, moves) -> list:
    """``moves`` as a list once ``dag`` is a DAG whose vertices have their ``kind`` and
    ``moves`` a legal and complete game on it (any number of red pebbles); else
    InvalidInputError (what these measures assume, checked first: a KeyError or an
    AssertionError from deep inside before)."""
    check_dag(dag)
    missing = [v for v, d in dag.nodes(data=True) if "kind" not in d]
    if missing:
        raise InvalidInputError(f"vertex {missing[0]!r:.60} has no 'kind': the segments measure "
                                "a direct-convolution DAG (dataflow.direct_conv_dag)")
    return legal_game(dag, moves)


def _useful_events(dag: nx.DiGraph, moves: list) -> dict:
    """:func:`useful_events` of a checked game."""
    red, blue, feeds = {}, {}, {}
    for k, (op, v) in enumerate(moves):
        if op == "compute":
            feeds[k] = {u: red[u] for u in dag.predecessors(v)}
            red[v] = k
        elif op == "load":
            red[v] = blue.get(v, -1)          # -1: a source's own value
        elif op == "store":
            blue.setdefault(v, red[v])
        elif op == "evict":
            red.pop(v, None)
    useful: dict = {}
    stack = [(o, blue[o]) for o in dag if dag.out_degree(o) == 0]
    while stack:
        v, k = stack.pop()
        if useful.setdefault(v, k) != k:
            raise ValueError(f"{v!r} has two useful computations ({useful[v]} and {k})")
        stack += [(u, ku) for u, ku in feeds[k].items() if ku >= 0]
    return useful


@dataclass(frozen=True)
class ChainSegment:
    """What one segment of ``Y`` loads needs and produces (see the module docstring).

    ``needed``: inputs, weights, incoming chain predecessors and incoming products it
    needs; ``start_budget``: how many vertices were red at its start or loaded in it
    (``<= S + loads``). ``outputs``: outputs with a run of useful sums in it, ``fresh``
    the runs that start the chain; ``end_budget``: run ends red at its end or stored in
    it (all of them, checked). ``weighted``: per-class weighted products charged to it;
    ``lw_computed``/``lw_rhs``: the weighted products it computes and
    ``sqrt(|A||B||C|)`` of their operand and output sets. For the shared-boundary form
    (proofs/test_x_partition_chain_shared.py): ``operands`` = |A| + |B|, ``incoming`` the
    charged products computed earlier, ``continued`` the runs with a chain predecessor,
    ``kept_in`` the non-sources red at its start other than its incoming products and
    ``kept_out`` the run ends red at its end.

    Examples
    --------
    With ``Y`` above the game's loads, one segment holds the whole game (8 outputs, all fresh):

    >>> from iobound import ConvLayer
    >>> from dataflow import direct_conv_dag, play, topological_schedule
    >>> dag = direct_conv_dag(ConvLayer(n=1, c_in=2, h_in=3, w_in=3, c_out=2, k_h=2, k_w=2))
    >>> moves = play(dag, topological_schedule(dag), S=10, record_moves=True).moves
    >>> (seg,) = chain_segments(dag, moves, Y=1000)
    >>> seg.loads, seg.stores, seg.outputs, seg.fresh, seg.incoming
    (104, 70, 8, 8, 0)
    """

    loads: int
    stores: int
    needed: int
    start_budget: int
    outputs: int
    fresh: int
    end_budget: int
    weighted: float
    lw_computed: float
    lw_rhs: float
    operands: int = 0
    incoming: int = 0
    continued: int = 0
    kept_in: int = 0
    kept_out: int = 0


def _tap_weight(dag: nx.DiGraph):
    layer = dag.graph["layer"]
    th = axis_tap_classes(layer.k_h, layer.stride[0], layer.dilation[0])
    tw = axis_tap_classes(layer.k_w, layer.stride[1], layer.dilation[1])

    def weight(p) -> float:
        w = next(u for u in dag.predecessors(p) if dag.nodes[u]["kind"] == "weight")
        return 1.0 / math.sqrt(th[dag.nodes[w]["i"]] * tw[dag.nodes[w]["j"]])
    return weight


def _is_product(dag: nx.DiGraph, v) -> bool:
    return dag.nodes[v]["kind"] == "product" or (
        dag.nodes[v]["kind"] == "output" and dag.nodes[v]["op"] == "mul")


def chain_segments(dag: nx.DiGraph, moves, Y: int) -> list[ChainSegment]:
    """Measure the chain X-partition quantities of every segment of ``Y`` loads (stores do not cut).

    Raises
    ------
    AssertionError
        When a needed vertex was neither red at the segment's start nor loaded in it,
        or a run end neither red at its end nor stored in it (the proof's claims).

    Examples
    --------
    Segments of 10 loads (the last holds the rest); each keeps all its run ends:

    >>> from iobound import ConvLayer
    >>> from dataflow import direct_conv_dag, play, topological_schedule
    >>> dag = direct_conv_dag(ConvLayer(n=1, c_in=2, h_in=3, w_in=3, c_out=2, k_h=2, k_w=2))
    >>> moves = play(dag, topological_schedule(dag), S=10, record_moves=True).moves
    >>> segs = chain_segments(dag, moves, Y=10)   # 104 loads
    >>> len(segs), segs[-1].loads, all(s.end_budget == s.outputs for s in segs)
    (11, 4, True)
    """
    moves = _checked_game(dag, moves)
    Y = limits.check_int("Y", Y, SEGMENT_LOADS)
    useful = _useful_events(dag, moves)
    seg_of, starts, loaded, stored, ends, n_io = _cut(moves, Y)
    h, weight = len(starts), _tap_weight(dag)
    need, a_set, b_set, c_set, inc = ([set() for _ in range(h)] for _ in range(5))
    wsum, wcomp = [0.0] * h, [0.0] * h
    for p in (v for v in dag if _is_product(dag, v)):
        j = seg_of[useful[next(iter(dag.successors(p)), p)]]   # the parent sum's segment
        wsum[j] += weight(p)
        if seg_of[useful[p]] == j:
            ops = list(dag.predecessors(p))
            need[j].update(ops)
            a_set[j].update(u for u in ops if dag.nodes[u]["kind"] == "input")
            b_set[j].update(u for u in ops if dag.nodes[u]["kind"] == "weight")
            c_set[j].add(_output_of(dag, p))
            wcomp[j] += weight(p)
        else:
            need[j].add(p), inc[j].add(p)
    runs: dict = {}
    for v, k in useful.items():
        if not _is_product(dag, v):
            runs.setdefault((seg_of[k], _output_of(dag, v)), []).append(v)
    out = []
    for j in range(h):
        mine = {o: r for (jj, o), r in runs.items() if jj == j}
        run_ends = {o for o in c_set[j] if _is_product(dag, o)}   # single-product outputs
        fresh, continued = len(run_ends), 0
        for run in mine.values():
            first = min(run, key=useful.__getitem__)
            chain_pred = [u for u in dag.predecessors(first) if not _is_product(dag, u)]
            need[j].update(chain_pred)
            fresh += not chain_pred
            continued += bool(chain_pred)
            run_ends.add(max(run, key=useful.__getitem__))
        budget = starts[j] | loaded[j]
        assert need[j] <= budget, f"segment {j}: {len(need[j] - budget)} needed vertices not available"
        kept = {v for v in run_ends if v in ends[j] or stored[j].get(v, -1) > useful[v]}
        assert kept == run_ends, f"segment {j}: a run end neither red at its end nor stored in it"
        out.append(ChainSegment(
            loads=n_io[j][0], stores=n_io[j][1], needed=len(need[j]), start_budget=len(budget),
            outputs=len(run_ends), fresh=fresh, end_budget=len(kept), weighted=wsum[j],
            lw_computed=wcomp[j],
            lw_rhs=math.sqrt(len(a_set[j]) * len(b_set[j]) * len(c_set[j])),
            operands=len(a_set[j]) + len(b_set[j]), incoming=len(inc[j]), continued=continued,
            kept_in=sum(1 for v in starts[j] - inc[j] if dag.in_degree(v) > 0),
            kept_out=len(run_ends & ends[j])))
    return out


def _cut(moves: list, Y: int):
    """Segment of every move, and per segment: red set at its start and end, vertices loaded,
    last store move of each vertex stored, and its (loads, stores)."""
    seg_of, red, n_loads = [], set(), 0
    starts, loaded, stored, ends, n_io = [set()], [set()], [{}], [], [[0, 0]]
    for k, (op, v) in enumerate(moves):
        j = n_loads // Y
        while len(starts) <= j:
            ends.append(set(red))
            starts.append(set(red)), loaded.append(set()), stored.append({}), n_io.append([0, 0])
        seg_of.append(j)
        if op in ("load", "store"):
            n_loads += op == "load"
            n_io[j][op == "store"] += 1
            (loaded[j].add(v), red.add(v)) if op == "load" else stored[j].__setitem__(v, k)
        elif op == "compute":
            red.add(v)
        else:
            red.discard(v)
    ends.append(set(red))
    return seg_of, starts, loaded, stored, ends, n_io


def _output_of(dag: nx.DiGraph, v):
    d = dag.nodes[v]
    return ("out", d["b"], d["co"], d["oh"], d["ow"])
