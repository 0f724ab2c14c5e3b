"""The LRU player's I/O equals an independent transcription of the documented rules.

:mod:`dataflow.pebble` says: a value is dropped (free) as soon as it is dead, an output is
stored the moment it is computed, and when fast memory is full the least recently used
unpinned value is evicted (stored first if it is live and not blue). The reference below
plays exactly that with a plain ``OrderedDict`` and recomputes deadness by scanning the
order, so an eviction of the most recent value, or dead values kept on chip, show up as
different load/store counts on random DAGs and orders.
"""

from __future__ import annotations

from collections import OrderedDict

import networkx as nx
import numpy as np
from hypothesis import given, settings, strategies as st

from dataflow.pebble import play, validate_moves
from dataflow.schedules import topological_schedule


def _dead_after(dag, order, u, t) -> bool:
    """No use of u after position t before it is computed again (or ever)."""
    for w in order[t + 1:]:
        if w == u:
            return True
        if dag.has_edge(u, w):
            return False
    return True


def reference_lru(dag: nx.DiGraph, order: list, S: int) -> tuple[int, int]:
    """(loads, stores) of LRU with free dropping of dead values, straight from the rules."""
    blue = {v for v in dag if dag.in_degree(v) == 0}
    sinks = {v for v in dag if dag.out_degree(v) == 0}
    red: OrderedDict = OrderedDict()        # least recently used first
    loads = stores = 0

    def remove(u, t):
        nonlocal stores
        if u not in blue and (u in sinks or not _dead_after(dag, order, u, t)):
            blue.add(u)
            stores += 1
        del red[u]

    for t, v in enumerate(order):
        preds = list(dag.predecessors(v))
        pinned = set(preds) | {v}
        for u in preds:
            if u in red:
                continue
            if len(red) >= S:
                remove(next(w for w in red if w not in pinned), t - 1)
            red[u] = None
            loads += 1
        if v not in red:
            if len(red) >= S:
                remove(next(w for w in red if w not in pinned), t - 1)
            red[v] = None
        for u in preds + [v]:
            if u in red:
                if _dead_after(dag, order, u, t):
                    remove(u, t)
                else:
                    red.move_to_end(u)
    for u in list(red):
        remove(u, len(order))
    return loads, stores


@st.composite
def dags_and_orders(draw):
    """Random DAGs of up to 18 vertices (in-degree <= 3) and one random topological order."""
    n = draw(st.integers(3, 18))
    n_src = draw(st.integers(1, max(1, n // 3)))
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for v in range(n_src, n):
        k = draw(st.integers(1, min(3, v)))
        for u in draw(st.lists(st.integers(0, v - 1), min_size=k, max_size=k, unique=True)):
            g.add_edge(u, v)
    order = topological_schedule(g, np.random.default_rng(draw(st.integers(0, 2**16))))
    return g, list(order)


@settings(deadline=None, max_examples=150)
@given(dags_and_orders(), st.integers(0, 4))
def test_lru_player_matches_the_reference_lru(case, extra):
    """play(..., "lru") loads and stores exactly what the documented LRU rules do."""
    dag, order = case
    S = max(d for _, d in dag.in_degree()) + 1 + extra
    res = play(dag, order, S, "lru", record_moves=True)
    assert (res.loads, res.stores) == reference_lru(dag, order, S)
    assert validate_moves(dag, res.moves, S).total == res.total


def test_lru_evicts_the_least_recently_used_value():
    """Outputs u1..u6 each read one source, in the cyclic trace a b c a b c, with S=3 (one
    spare pebble besides the source and the output). Computing u3 evicts a (least recently
    used), so a and b are both reloaded: 5 loads; evicting b (the most recent) would keep
    a and cost 4. Every output is stored once."""
    trace = ["a", "b", "c", "a", "b", "c"]
    g = nx.DiGraph([(src, f"u{i}") for i, src in enumerate(trace, 1)])
    res = play(g, [f"u{i}" for i in range(1, 7)], 3, "lru")
    assert (res.loads, res.stores) == (5, 6)


def test_dead_values_leave_fast_memory_at_once():
    """A chain a -> m1 -> m2 -> ... -> m5 with S=2: every value dies right after its one use,
    so two pebbles suffice with one load (a) and one store (the output), never a spill."""
    g = nx.path_graph(["a", "m1", "m2", "m3", "m4", "m5"], create_using=nx.DiGraph)
    res = play(g, ["m1", "m2", "m3", "m4", "m5"], 2, "lru", record_moves=True)
    assert (res.loads, res.stores) == (1, 1)
    assert [m for m in res.moves if m[0] == "store"] == [("store", "m5")]
