"""without_unused_moves: a legal game loses exactly the moves that serve nothing."""

from __future__ import annotations

import networkx as nx
import numpy as np
from hypothesis import given, strategies as st

from dataflow.pebble import play, validate_moves
from dataflow.pebble_moves import without_unused_moves
from dataflow.schedules import topological_schedule
from tests.dataflow.test_pebble import random_dags


def _wasted(dag: nx.DiGraph, moves: list, rng: np.random.Generator, count: int) -> list:
    """``moves`` with ``count`` legal moves inserted that serve nothing: a load or a compute
    evicted at once, a compute of a red value, a store of a blue one, a store of a
    non-output (never loaded after it; it stays blue, so no later load is lost)."""
    out = list(moves)
    for _ in range(count):
        at = int(rng.integers(0, len(out) + 1))
        red, blue = set(), {v for v in dag if dag.in_degree(v) == 0}
        for op, v in out[:at]:
            (red.discard if op == "evict" else blue.add if op == "store" else red.add)(v)
        loaded_later = {v for op, v in out[at:] if op == "load"}
        options = [[("load", v), ("evict", v)] for v in blue - red]
        options += [[("compute", v), ("evict", v)] for v in dag if v not in red
                    and dag.in_degree(v) and all(u in red for u in dag.predecessors(v))]
        options += [[("compute", v)] for v in red if dag.in_degree(v)
                    and all(u in red for u in dag.predecessors(v))]
        options += [[("store", v)] for v in red & blue]
        options += [[("store", v)] for v in red - blue - loaded_later if dag.out_degree(v)
                    and all(op != "store" or w != v for op, w in out[at:])]
        if options:
            out[at:at] = options[int(rng.integers(len(options)))]
    return out


@given(random_dags(), st.integers(0, 2**32 - 1), st.integers(1, 8))
def test_the_moves_added_for_nothing_are_exactly_the_ones_dropped(dag, seed, count):
    """A played game has no such move; with some added (memory to spare) they all go,
    nothing else does, and the result is a legal game again (dropping is idempotent)."""
    rng = np.random.default_rng(seed)
    S = dag.number_of_nodes() + 2 * count
    game = list(play(dag, topological_schedule(dag, rng), S, record_moves=True).moves)
    assert without_unused_moves(dag, game) == tuple(game)
    wasteful = _wasted(dag, game, rng, count)
    validate_moves(dag, wasteful, S)
    assert without_unused_moves(dag, wasteful) == tuple(game)


@given(random_dags(), st.integers(0, 2**32 - 1), st.integers(0, 4), st.integers(1, 6))
def test_with_tight_memory_the_played_game_comes_back(dag, seed, extra, count):
    """With tight memory (play's Belady game evicts, reloads, stores and reloads) each added
    move needs at most one red pebble more (a later one may land inside an earlier pair);
    dropping them gives back the game, legal with S."""
    S = max(d for _, d in dag.in_degree()) + 1 + extra
    rng = np.random.default_rng(seed)
    played = play(dag, topological_schedule(dag, rng), S, record_moves=True)
    game = list(played.moves)
    wasteful = _wasted(dag, game, rng, count)
    validate_moves(dag, wasteful, S + count)
    kept = without_unused_moves(dag, wasteful)
    assert kept == tuple(game)
    counted = validate_moves(dag, kept, S)
    assert (counted.loads, counted.stores, counted.computes) == (played.loads, played.stores,
                                                                 played.computes)


def test_a_dropped_compute_leaves_the_load_that_fed_it_unused():
    """The second load of a only fed a compute of b that nothing used: both go (two passes)."""
    g = nx.DiGraph([("a", "b"), ("b", "c")])
    game = [("load", "a"), ("compute", "b"), ("evict", "a"), ("compute", "c"), ("store", "c"),
            ("evict", "b"), ("evict", "c"), ("load", "a"), ("compute", "b"), ("evict", "b")]
    assert without_unused_moves(g, game) == tuple(game[:7])
    assert validate_moves(g, without_unused_moves(g, game), 2).loads == 1


def test_optimal_pebbling_returns_no_move_that_serves_nothing():
    """The diamond at S = 3: the CP-SAT model minimises I/O only and filled its spare
    compute steps with recomputes of the sink; the returned game computes each vertex once."""
    from dataflow.optimal_pebbling import optimal_pebbling
    g = nx.DiGraph([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    res = optimal_pebbling(g, S=3, time_limit=10, workers=1)
    assert res.io == 2 and without_unused_moves(g, res.moves) == res.moves
    assert validate_moves(g, res.moves, 3).computes == 3
