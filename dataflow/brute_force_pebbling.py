"""Minimum I/O of a very tiny DAG by brute force: Dijkstra over every red-blue game state.

The reference :func:`dataflow.optimal_pebbling.optimal_pebbling` (a CP-SAT model with a
horizon) is checked against: no horizon, no model, only the rules of the game. A state is
(red set, blue set) as bit masks; loads and stores cost 1, computes and evictions 0.

Examples
--------
>>> import networkx as nx
>>> brute_force_pebbling(nx.DiGraph([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")]), S=3)
2
"""

from __future__ import annotations

import heapq

import networkx as nx

from iobound import limits
from iobound.errors import InvalidInputError

from .pebble_moves import check_dag, check_pebbles

__all__ = ["brute_force_pebbling", "MAX_STATES", "MAX_BRUTE_FORCE_VERTICES"]

#: ``max_states`` of :func:`brute_force_pebbling`: every visited state stays in memory.
MAX_STATES = limits.Limit(1, 1 << 32, "game states: every visited state stays in memory")
#: Vertices :func:`brute_force_pebbling` takes. A state is two bit masks over the vertices
#: and each state is expanded over every vertex, so time and memory per state grow with the
#: DAG: up to 64 vertices the masks are machine words and the default 2,000,000 states take
#: about half a minute and half a gigabyte (measured at 58 vertices; 86 vertices: 40 s);
#: a DAG of thousands of vertices takes minutes and gigabytes to reach the state cap.
#: Exact answers come from far smaller DAGs (the states grow as 4^vertices).
MAX_BRUTE_FORCE_VERTICES = 64


def brute_force_pebbling(dag: nx.DiGraph, S: int, max_states: int = 2_000_000) -> int:
    """Minimum loads + stores by Dijkstra over all game states (no horizon; very tiny DAGs).

    A state is (red set, blue set); loads and stores cost 1, computes and evictions 0.

    Raises
    ------
    InvalidInputError
        When the DAG has more than :data:`MAX_BRUTE_FORCE_VERTICES` vertices, no game exists
        with ``S`` pebbles, or more than ``max_states`` states are visited.

    Examples
    --------
    >>> import networkx as nx
    >>> brute_force_pebbling(nx.DiGraph([("a", "b"), ("b", "c")]), S=2)  # a chain: 1 load, 1 store
    2
    """
    check_dag(dag)
    if dag.number_of_nodes() > MAX_BRUTE_FORCE_VERTICES:
        raise InvalidInputError(f"brute force takes DAGs of at most {MAX_BRUTE_FORCE_VERTICES} "
                                f"vertices, got {dag.number_of_nodes():,}; use "
                                "dataflow.optimal_pebbling (a few dozen vertices)")
    S = check_pebbles(S)
    max_states = limits.check_int("max_states", max_states, MAX_STATES)
    nodes = list(dag.nodes)
    n = len(nodes)
    idx = {v: k for k, v in enumerate(nodes)}
    pred_mask = [sum(1 << idx[u] for u in dag.predecessors(v)) for v in nodes]
    sources = [dag.in_degree(v) == 0 for v in nodes]
    goal = sum(1 << k for k, v in enumerate(nodes) if dag.out_degree(v) == 0)
    start = (0, sum(1 << k for k in range(n) if sources[k]))
    dist = {start: 0}
    heap = [(0, start)]
    while heap:
        d, (r, b) = heapq.heappop(heap)
        if d > dist[(r, b)]:
            continue
        if b & goal == goal:
            return d
        if len(dist) > max_states:
            raise InvalidInputError(f"more than {max_states} game states; the DAG is too large for brute force")
        full = bin(r).count("1") >= S
        for k in range(n):
            bit = 1 << k
            nxt = []
            if r & bit:
                nxt.append((0, (r & ~bit, b)))                      # evict
                if not b & bit:
                    nxt.append((1, (r, b | bit)))                   # store
            elif not full:
                if b & bit:
                    nxt.append((1, (r | bit, b)))                   # load
                if not sources[k] and r & pred_mask[k] == pred_mask[k]:
                    nxt.append((0, (r | bit, b)))                   # compute
            for cost, state in nxt:
                if d + cost < dist.get(state, float("inf")):
                    dist[state] = d + cost
                    heapq.heappush(heap, (d + cost, state))
    raise InvalidInputError(f"no complete game exists with S={S} red pebbles")
