"""The red-blue pebble game's referee: :func:`validate_moves` checks an explicit move list.

The rules are those of :mod:`dataflow.pebble` (which re-exports these names): loads need
a blue pebble, computes red pebbles on every predecessor, at most ``S`` red pebbles, and
every sink ends blue.

Examples
--------
>>> import networkx as nx
>>> validate_moves(nx.DiGraph([("a", "b")]), [("load", "a"), ("compute", "b"), ("store", "b")], S=2).total
2
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import networkx as nx

from iobound import limits
from iobound.errors import InvalidInputError

__all__ = ["IllegalMoveError", "MoveCount", "check_dag", "check_pebbles", "validate_moves",
           "legal_game", "without_unused_moves"]


class IllegalMoveError(InvalidInputError):
    """A move breaks a rule of the red-blue pebble game (the message says which and where).

    >>> validate_moves(nx.DiGraph([("a", "c"), ("b", "c")]), [("load", "a"), ("compute", "c")], S=3)
    Traceback (most recent call last):
    ...
    dataflow.pebble_moves.IllegalMoveError: move 1 (compute 'c'): predecessor 'b' has no red pebble
    """


def check_dag(dag) -> None:
    """InvalidInputError unless ``dag`` is a ``networkx.DiGraph`` without a cycle (the
    pebble game and the topological orders need one).

    >>> check_dag(nx.DiGraph([("a", "b"), ("b", "a")]))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: the graph has a cycle of 2 vertices through 'a'; the pebble game needs a DAG
    """
    if not isinstance(dag, nx.DiGraph):
        raise InvalidInputError(f"dag must be a networkx.DiGraph, got {type(dag).__name__}")
    if not nx.is_directed_acyclic_graph(dag):
        cycle = nx.find_cycle(dag)
        raise InvalidInputError(f"the graph has a cycle of {len(cycle)} vertices through "
                                f"{cycle[0][0]!r}; the pebble game needs a DAG")


def check_pebbles(S) -> int:
    """``S`` (red pebbles, fast-memory words) as an ``int`` in
    :data:`iobound.limits.FAST_MEMORY_WORDS`; else InvalidInputError.

    Examples
    --------
    >>> check_pebbles(12)
    12
    >>> check_pebbles(2.5)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: S must be an integer, got 2.5
    """
    return limits.check_int("S", S, limits.FAST_MEMORY_WORDS)


@dataclass(frozen=True)
class MoveCount:
    """What :func:`validate_moves` counted for a legal move list.

    >>> moves = [("load", "a"), ("load", "b"), ("compute", "c"), ("store", "c")]
    >>> count = validate_moves(nx.DiGraph([("a", "c"), ("b", "c")]), moves, S=3)
    >>> count, count.total
    (MoveCount(loads=2, stores=1, computes=1, peak_red=3), 3)
    """

    loads: int
    stores: int
    computes: int
    peak_red: int

    @property
    def total(self) -> int:
        return self.loads + self.stores


def validate_moves(dag: nx.DiGraph, moves: Iterable[tuple[str, object]], S: int) -> MoveCount:
    """Check an explicit move list against the rules and count its I/O.

    Parameters
    ----------
    dag : networkx.DiGraph
    moves : iterable of (op, vertex)
        ``op`` in ``load``, ``store``, ``compute``, ``evict``.
    S : int
        Red pebbles available.

    Returns
    -------
    MoveCount

    Raises
    ------
    IllegalMoveError
        At the first illegal move (its index, op, vertex and the rule), or at the end
        when an output has no blue pebble.

    Examples
    --------
    >>> import networkx as nx
    >>> g = nx.DiGraph([("a", "b")])
    >>> validate_moves(g, [("compute", "b")], S=2)
    Traceback (most recent call last):
    ...
    dataflow.pebble_moves.IllegalMoveError: move 0 (compute 'b'): predecessor 'a' has no red pebble
    """
    check_dag(dag)
    S = check_pebbles(S)
    count, peak, blue = _play_moves(dag, _check_iterable(moves), S)
    unstored = [v for v in dag if dag.out_degree(v) == 0 and v not in blue]
    if unstored:
        raise IllegalMoveError(f"the game ends with {len(unstored)} outputs without a blue "
                               f"pebble, e.g. {unstored[0]!r}")
    return MoveCount(loads=count["load"], stores=count["store"], computes=count["compute"],
                     peak_red=peak)


def _check_iterable(moves):
    if isinstance(moves, (str, bytes)) or not isinstance(moves, Iterable):
        raise InvalidInputError(f"moves must be an iterable of (op, vertex) pairs, got "
                                f"{type(moves).__name__} {moves!r:.60}")
    return moves


def _play_moves(dag: nx.DiGraph, moves: Iterable, S: int) -> tuple[dict, int, set]:
    """Each move's count, the most red pebbles at once and the blue set at the end of a
    game whose every move is legal (IllegalMoveError at the first that is not)."""
    red: set = set()
    blue = {v for v in dag if dag.in_degree(v) == 0}
    count = {"load": 0, "store": 0, "compute": 0, "evict": 0}
    peak = 0
    for k, mv in enumerate(moves):
        try:
            op, v = mv
        except (TypeError, ValueError):
            raise IllegalMoveError(f"move {k} is not an (op, vertex) pair: {mv!r}") from None
        rule = _broken_rule(dag, red, blue, op, v)
        if rule is None and op in ("load", "compute") and v not in red and len(red) + 1 > S:
            rule = f"{len(red) + 1} red pebbles, more than S={S}"
        if rule is not None:
            raise IllegalMoveError(f"move {k} ({op} {v!r}): {rule}")
        if op == "evict":
            red.discard(v)
        elif op == "store":
            blue.add(v)
        else:
            red.add(v)
        count[op] += 1
        peak = max(peak, len(red))
    return count, peak, blue


def legal_game(dag, moves) -> list:
    """``moves`` as a list once ``dag`` is a DAG and ``moves`` a legal, complete game on it
    with any number of red pebbles (what the measures of a played game assume); else
    InvalidInputError naming the first fault.

    >>> g = nx.DiGraph([("a", "b")])
    >>> legal_game(g, iter([("load", "a"), ("compute", "b"), ("store", "b")]))
    [('load', 'a'), ('compute', 'b'), ('store', 'b')]
    """
    moves = list(_check_iterable(moves))
    validate_moves(dag, moves, limits.FAST_MEMORY_WORDS.high)
    return moves


def without_unused_moves(dag: nx.DiGraph, moves: Iterable[tuple[str, object]]) -> tuple:
    """A legal game ``moves`` without the moves that serve nothing: a red pebble placed (a
    load or a compute) that no compute of a successor and no store uses before it is
    evicted or the game ends (it goes, with its eviction), a compute of a value already
    red, a store of a value already blue, and a store of a non-output never loaded
    after it; repeated until none is left (a move dropped may leave the moves that fed
    it unused).

    The game stays legal with the same ``S`` (only red pebbles no move needs go, and no
    blue one), and no count grows. An exact solver that minimises I/O alone may fill
    its spare compute steps with such moves (:func:`dataflow.optimal_pebbling`).

    >>> g = nx.DiGraph([("a", "b")])
    >>> without_unused_moves(g, [("load", "a"), ("compute", "b"), ("store", "b"),
    ...                          ("evict", "b"), ("compute", "b"), ("evict", "b")])
    (('load', 'a'), ('compute', 'b'), ('store', 'b'), ('evict', 'b'))
    """
    moves = legal_game(dag, moves)
    while True:
        drop = _unused_positions(dag, moves)
        if not drop:
            return tuple(moves)
        moves = [mv for i, mv in enumerate(moves) if i not in drop]


def _unused_positions(dag: nx.DiGraph, moves: list) -> set[int]:
    """Positions of :func:`without_unused_moves`' moves in one pass over a legal game."""
    placed: dict = {}  # a red vertex -> [the position that made it red, used since]
    blue = {v for v in dag if dag.in_degree(v) == 0}
    last_load = {v: i for i, (op, v) in enumerate(moves) if op == "load"}
    drop: set[int] = set()
    for i, (op, v) in enumerate(moves):
        if op in ("load", "compute"):
            if v in placed:  # (a load of a red value is illegal)
                drop.add(i)
                continue
            if op == "compute":
                for u in dag.predecessors(v):
                    placed[u][1] = True
            placed[v] = [i, False]
        elif op == "store":
            if v in blue or (dag.out_degree(v) > 0 and last_load.get(v, -1) < i):
                drop.add(i)
            else:
                blue.add(v)
                placed[v][1] = True
        else:  # evict
            start, used = placed.pop(v)
            if not used:
                drop |= {start, i}
    drop.update(start for start, used in placed.values() if not used)
    return drop


def _broken_rule(dag: nx.DiGraph, red: set, blue: set, op: str, v) -> str | None:
    """The rule move ``(op, v)`` breaks in the state ``red``/``blue``, or None when legal
    (the red-pebble count is checked by the caller)."""
    if v not in dag:
        return "not a vertex of the DAG"
    if op == "load":
        if v not in blue:
            return "it has no blue pebble"
        if v in red:
            return "it already has a red pebble"
    elif op in ("store", "evict"):
        if v not in red:
            return "it has no red pebble"
    elif op == "compute":
        preds = list(dag.predecessors(v))
        if not preds:
            return "a source cannot be computed (it starts blue)"
        missing = next((u for u in preds if u not in red), None)
        if missing is not None:
            return f"predecessor {missing!r} has no red pebble"
    else:
        return "unknown op; use load, store, compute or evict"
    return None
