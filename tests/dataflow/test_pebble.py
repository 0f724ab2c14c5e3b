"""The pebble game player and the explicit-move validator follow the red-blue rules."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, strategies as st

from dataflow import pebble as pebble_module
from dataflow.pebble import IllegalMoveError, play, validate_moves
from dataflow.schedules import topological_schedule
from iobound.errors import InvalidInputError


@st.composite
def random_dags(draw):
    """Random connected-ish DAGs of up to 25 vertices with in-degree <= 3."""
    n = draw(st.integers(3, 25))
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    n_src = draw(st.integers(1, max(1, n // 3)))
    for v in range(n_src, n):
        k = draw(st.integers(1, min(3, v)))
        for u in draw(st.lists(st.integers(0, v - 1), min_size=k, max_size=k, unique=True)):
            g.add_edge(u, v)
    return g


@given(random_dags(), st.integers(0, 2**32 - 1), st.sampled_from(["belady", "lru"]), st.integers(0, 6))
def test_played_moves_are_legal_and_counted(dag, seed, policy, extra):
    """Every move the player makes is legal, and the validator counts the same I/O."""
    S = max(d for _, d in dag.in_degree()) + 1 + extra
    order = topological_schedule(dag, np.random.default_rng(seed))
    res = play(dag, order, S, policy, record_moves=True)
    count = validate_moves(dag, res.moves, S)
    assert (count.loads, count.stores, count.computes) == (res.loads, res.stores, res.computes)
    assert res.total == res.loads + res.stores and count.peak_red == res.peak_red <= S


@given(random_dags(), st.integers(0, 2**32 - 1), st.sampled_from(["belady", "lru"]))
def test_compulsory_io_is_a_floor_and_reached_with_unbounded_memory(dag, seed, policy):
    """Loads >= used sources, stores >= sinks; with S = |V| exactly that (no reloads)."""
    order = topological_schedule(dag, np.random.default_rng(seed))
    sources = sum(1 for v in dag if dag.in_degree(v) == 0 and dag.out_degree(v) > 0)
    sinks = sum(1 for v in dag if dag.out_degree(v) == 0 and dag.in_degree(v) > 0)
    small = play(dag, order, max(d for _, d in dag.in_degree()) + 1, policy)
    assert small.loads >= sources and small.stores >= sinks
    big = play(dag, order, dag.number_of_nodes(), policy)
    assert (big.loads, big.stores) == (sources, sinks)


def test_belady_keeps_the_value_needed_soonest():
    """With room for one extra value, Belady evicts the one used furthest away."""
    g = nx.DiGraph([("a", "x"), ("b", "x"), ("a", "y"), ("b", "z"), ("x", "o1"), ("y", "o1"),
                    ("z", "o2"), ("o1", "o3"), ("o2", "o3")])
    order = ["x", "y", "z", "o1", "o2", "o3"]
    bel, lru = play(g, order, 4, "belady"), play(g, order, 4, "lru")
    assert bel.total <= lru.total and bel.loads == 2


def test_recomputation_is_allowed():
    """An order may compute a vertex twice; computes counts both."""
    g = nx.DiGraph([("a", "m"), ("m", "o1"), ("m", "o2"), ("b", "o1"), ("b", "o2")])
    res = play(g, ["m", "o1", "m", "o2"], 3, record_moves=True)
    assert res.computes == 4 and validate_moves(g, res.moves, 3).computes == 4


def test_too_small_S_names_the_vertex():
    """A vertex with in-degree 2 cannot be computed with S=2."""
    g = nx.DiGraph([("a", "c"), ("b", "c")])
    with pytest.raises(ValueError, match=r"S=2 .*'c'"):
        play(g, ["c"], 2)


def test_non_topological_order_is_rejected():
    """Computing a vertex before its predecessor raises ValueError."""
    g = nx.DiGraph([("a", "b"), ("b", "c")])
    with pytest.raises(ValueError, match="not computed yet"):
        play(g, ["c", "b"], 3)


@pytest.mark.parametrize("order, message", [(["a", "b"], "source"), (["b"], "never computes"),
                                            (["zz", "b", "c"], "not a vertex"),
                                            # unhashable: a raw TypeError from a set lookup
                                            ([["b"], "c"], "position 0: \\['b'\\] is not a vertex"),
                                            (np.array([["b"], ["c"]], dtype=object),
                                             "position 0: .* is not a vertex")])
def test_bad_orders_are_rejected(order, message):
    """Sources, unknown vertices and missing vertices in the order raise ValueError."""
    g = nx.DiGraph([("a", "b"), ("b", "c")])
    with pytest.raises(ValueError, match=message):
        play(g, order, 3)


def test_unknown_policy_lists_the_choices():
    """An unknown policy name raises ValueError listing the policies."""
    with pytest.raises(ValueError, match="belady, lru"):
        play(nx.DiGraph([("a", "b")]), ["b"], 2, "fifo")


@pytest.mark.parametrize("moves, rule", [
    ([("load", "c")], "no blue pebble"),
    ([("store", "a")], "no red pebble"),
    ([("evict", "a")], "no red pebble"),
    ([("load", "a"), ("compute", "c")], "predecessor 'b'"),
    ([("load", "a"), ("load", "b"), ("compute", "c")], "more than S=2"),
    ([("load", "a"), ("load", "a")], "already has a red pebble"),
    ([("compute", "a")], "source cannot be computed"),
    ([("jump", "a")], "unknown op"),
    ([("load", "a"), ("evict", "a")], "outputs without a blue pebble"),
])
def test_validator_rejects_illegal_moves(moves, rule):
    """Each broken rule raises IllegalMoveError with the reason."""
    g = nx.DiGraph([("a", "c"), ("b", "c")])
    with pytest.raises(IllegalMoveError, match=rule):
        validate_moves(g, moves, 2)


def test_validator_accepts_a_hand_written_game():
    """A legal game is counted: 2 loads, 1 store."""
    g = nx.DiGraph([("a", "c"), ("b", "c")])
    moves = [("load", "a"), ("load", "b"), ("evict", "a"), ("load", "a"), ("compute", "c"),
             ("store", "c")]
    with pytest.raises(IllegalMoveError):
        validate_moves(g, moves, 2)
    count = validate_moves(g, moves, 3)
    assert (count.loads, count.stores, count.peak_red) == (3, 1, 3)


def _evict_anything(game, pinned):
    """A broken policy: evicts the oldest red value even when the next compute needs it."""
    if len(game.red) >= game.S:
        game.drop(next(iter(game.lru) if game.lru else iter(game.red)))


def _forget_outputs(game, v, _drop=pebble_module._Game.drop):
    """A broken eviction that drops outputs without storing them."""
    if v in game.sinks:
        game.red.discard(v)
        game.lru.pop(v, None)
        game.key.pop(v, None)
    else:
        _drop(game, v)


@pytest.mark.parametrize("attr, broken, rule", [
    ("make_room", _evict_anything, "has no red pebble"),
    ("make_room", lambda game, pinned: None, "more than S=3"),
    ("drop", _forget_outputs, "outputs without a blue pebble"),
])
def test_player_checks_its_own_moves(monkeypatch, attr, broken, rule):
    """play() checks the rules on every move: a broken policy is caught, not miscounted."""
    g = nx.DiGraph([("a", "c"), ("b", "c"), ("a", "d"), ("e", "d"), ("c", "f"), ("d", "f")])
    res = play(g, ["c", "d", "f"], 3, "lru")           # computing d evicts (and stores) c
    assert (res.loads, res.stores) == (4, 2)
    monkeypatch.setattr(pebble_module._Game, attr, broken)
    with pytest.raises(IllegalMoveError, match=rule):
        play(g, ["c", "d", "f"], 3, "lru")


CYCLIC = nx.DiGraph([("s", "a"), ("a", "b"), ("b", "a"), ("b", "t")])


def test_a_cyclic_graph_is_refused_by_name():
    """A graph with a cycle is an InvalidInputError (not NetworkXUnfeasible from a
    topological sort, nor a partial order from the random one); a non-graph too."""
    for call in (lambda g: play(g, ["a", "b", "t"], 3), lambda g: validate_moves(g, [], 3),
                 topological_schedule, lambda g: topological_schedule(g, np.random.default_rng(0))):
        with pytest.raises(InvalidInputError, match="cycle of 2 vertices"):
            call(CYCLIC)
        with pytest.raises(InvalidInputError, match="dag must be a networkx.DiGraph"):
            call([("a", "b")])


@given(st.floats() | st.text(max_size=3) | st.none() | st.booleans()
       | st.integers(max_value=0) | st.integers(min_value=2**40 + 1))
def test_pebbles_must_be_a_limited_integer(S):
    """S red pebbles is an integer in FAST_MEMORY_WORDS for the player and the referee."""
    g = nx.DiGraph([("a", "b"), ("b", "c")])
    with pytest.raises(InvalidInputError, match=r"^S( must be an integer|=-?\d+ is (below|above))"):
        play(g, ["b", "c"], S)
    with pytest.raises(InvalidInputError, match=r"^S( must be an integer|=-?\d+ is (below|above))"):
        validate_moves(g, [], S)
