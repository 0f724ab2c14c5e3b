"""The red-blue pebble game (Hong & Kung 1981): a player for computation orders and a move checker.

Rules. Sources start with blue pebbles (in slow memory). A move is one of

* ``load v``: put a red pebble on a vertex that has a blue one (one I/O);
* ``store v``: put a blue pebble on a vertex that has a red one (one I/O);
* ``compute v``: put a red pebble on a non-source whose predecessors all have red pebbles;
* ``evict v``: remove a red pebble.

At most ``S`` red pebbles are ever on the DAG, and at the end every sink (output) has a
blue pebble. Recomputation is allowed (a vertex may be computed again).

:func:`play` executes a computation order with an eviction policy and counts the I/O. It
checks every move as it makes it: a load needs a blue pebble (else the order is not
topological), a compute needs red pebbles on all predecessors, the red pebbles never
exceed ``S``, and every sink ends blue (:class:`IllegalMoveError` otherwise; these guard
the player itself). :func:`validate_moves` checks an explicit move list independently.

* ``"belady"``: evict the value whose next use is furthest in the future (clean, i.e.
  already blue, values first on ties). It is Belady's optimal replacement for the loads
  of a fixed order; with write-backs it is a good heuristic, not a proven optimum.
* ``"lru"``: evict the least recently used value.

With both policies a value is dropped as soon as it is dead (no further use before it is
computed again), which costs nothing, and an output is stored the moment it is computed
(it has no uses, so it is dead at once): every output is stored exactly once. A live
value that has no blue pebble is stored before it is evicted (the store is counted).

Examples
--------
>>> import networkx as nx
>>> g = nx.DiGraph([("a", "c"), ("b", "c"), ("c", "d"), ("a", "d")])
>>> res = play(g, ["c", "d"], S=3, record_moves=True)
>>> res.loads, res.stores, res.total, res.peak_red
(2, 1, 3, 3)
>>> validate_moves(g, res.moves, S=3).total
3
"""

from __future__ import annotations

import heapq
import logging
from collections import OrderedDict
from dataclasses import dataclass
from typing import Iterable, Sequence

import networkx as nx

from iobound import limits
from iobound.errors import InvalidInputError

from .pebble_moves import (IllegalMoveError, MoveCount, check_dag, check_pebbles, validate_moves,
                           without_unused_moves)

__all__ = ["IllegalMoveError", "MoveCount", "PebbleResult", "POLICIES", "play", "validate_moves",
           "without_unused_moves"]

logger = logging.getLogger(__name__)

#: Eviction policies :func:`play` accepts.
POLICIES = ("belady", "lru")

_INF = float("inf")


@dataclass(frozen=True)
class PebbleResult:
    """I/O of one played game.

    Attributes
    ----------
    loads, stores : int
        Red pebbles placed on blue vertices, and blue pebbles placed (words moved).
    total : int
        ``loads + stores``.
    peak_red : int
        Most red pebbles on the DAG at once (``<= S``).
    computes : int
        Compute moves (``> number of non-sources`` when the order recomputes).
    S : int
        Red pebbles available.
    policy : str
        The eviction policy.
    moves : tuple or None
        The moves ``(op, vertex)`` when asked for (``record_moves=True``).

    Examples
    --------
    >>> import networkx as nx
    >>> g = nx.DiGraph([("a", "c"), ("b", "c"), ("c", "d"), ("a", "d")])
    >>> res = play(g, ["c", "d"], S=3, policy="lru")
    >>> res.total == res.loads + res.stores, res.computes, res.S, res.policy, res.moves
    (True, 2, 3, 'lru', None)
    """

    loads: int
    stores: int
    total: int
    peak_red: int
    computes: int
    S: int
    policy: str
    moves: tuple | None = None


def _check_order(dag: nx.DiGraph, order: Sequence, S: int) -> None:
    seen = set()
    for t, v in enumerate(order):
        if v not in dag:  # first: networkx answers False for an unhashable v, a set raises
            raise InvalidInputError(f"schedule position {t}: {v!r:.60} is not a vertex of the DAG")
        if v in seen:
            continue
        indeg = dag.in_degree(v)
        if indeg == 0:
            raise InvalidInputError(f"schedule position {t}: {v!r} is a source (it starts blue; "
                             "sources are loaded, not computed)")
        if indeg + 1 > S:
            raise InvalidInputError(f"S={S} red pebbles cannot compute {v!r}: it needs its {indeg} "
                             f"predecessors and itself red at once (S >= {indeg + 1})")
        seen.add(v)
    missing = [v for v in dag if dag.in_degree(v) > 0 and v not in seen]
    if missing:
        raise InvalidInputError(f"the schedule never computes {len(missing)} vertices, e.g. {missing[0]!r}")


class _Game:
    """Mutable game state of :func:`play` (red/blue sets, next-use pointers, policy)."""

    def __init__(self, dag: nx.DiGraph, order: Sequence, S: int, policy: str, record: bool):
        self.order, self.S, self.policy = order, S, policy
        self.preds = {v: tuple(dag.predecessors(v)) for v in set(order)}
        self.uses: dict = {}
        self.comps: dict = {}
        for t, v in enumerate(order):
            self.comps.setdefault(v, []).append(t)
            for u in self.preds[v]:
                self.uses.setdefault(u, []).append(t)
        self.use_ptr = dict.fromkeys(self.uses, 0)
        self.comp_ptr = dict.fromkeys(self.comps, 0)
        self.blue = {v for v in dag if dag.in_degree(v) == 0}
        self.sinks = {v for v in dag if dag.out_degree(v) == 0}
        self.red: set = set()
        self.heap: list = []          # belady: (-next_use, -clean, seq, v)
        self.key: dict = {}
        self.lru: OrderedDict = OrderedDict()
        self.seq = 0
        self.loads = self.stores = self.computes = self.peak = 0
        self.moves: list | None = [] if record else None

    def next_use(self, u) -> float:
        """Position of u's next use, or inf if it is dead (no use before its next compute)."""
        uses, p = self.uses.get(u, ()), self.use_ptr.get(u, 0)
        nu = uses[p] if p < len(uses) else _INF
        comps, q = self.comps.get(u, ()), self.comp_ptr.get(u, 0)
        nc = comps[q] if q < len(comps) else _INF
        return nu if nu < nc else _INF

    def move(self, op: str, v) -> None:
        if self.moves is not None:
            self.moves.append((op, v))

    def touch(self, v) -> None:
        """Record a use/compute of red v for the policy."""
        if self.policy == "lru":
            self.lru[v] = None
            self.lru.move_to_end(v)
        else:
            k = (self.next_use(v), v in self.blue)
            self.key[v] = k
            self.seq += 1
            heapq.heappush(self.heap, (-k[0], not k[1], self.seq, v))

    def drop(self, v) -> None:
        """Remove v's red pebble, storing it first if it is live (or an output) and not blue."""
        if v not in self.blue and (v in self.sinks or self.next_use(v) != _INF):
            self.blue.add(v)
            self.stores += 1
            self.move("store", v)
        self.red.discard(v)
        self.lru.pop(v, None)
        self.key.pop(v, None)
        self.move("evict", v)

    def make_room(self, pinned: set) -> None:
        if len(self.red) < self.S:
            return
        if self.policy == "lru":
            victim = next(v for v in self.lru if v not in pinned)
        else:
            skipped = []
            while True:
                neg_nu, not_clean, seq, v = heapq.heappop(self.heap)
                k = self.key.get(v)
                if k is None or (-neg_nu, not not_clean) != k:
                    continue  # stale entry
                if v in pinned:
                    skipped.append((neg_nu, not_clean, seq, v))
                    continue
                victim = v
                break
            for item in skipped:
                heapq.heappush(self.heap, item)
        self.drop(victim)

    def place_red(self, v, pinned: set) -> None:
        self.make_room(pinned)
        self.red.add(v)
        self.peak = max(self.peak, len(self.red))
        if len(self.red) > self.S:
            raise IllegalMoveError(f"placing a red pebble on {v!r} makes {len(self.red)} red "
                                   f"pebbles, more than S={self.S}")

    def step(self, t: int) -> None:
        v = self.order[t]
        preds = self.preds[v]
        pinned = set(preds)
        pinned.add(v)
        for u in preds:
            if u in self.red:
                continue
            if u not in self.blue:
                raise InvalidInputError(f"schedule position {t}: {v!r} needs {u!r}, which is not "
                                 "computed yet (the order is not topological)")
            self.place_red(u, pinned)
            self.loads += 1
            self.move("load", u)
            self.touch(u)
        if v not in self.red:
            self.place_red(v, pinned)
        missing = next((u for u in preds if u not in self.red), None)
        if missing is not None:  # the rule of a compute move, checked on every move
            raise IllegalMoveError(f"schedule position {t}: computing {v!r} while its predecessor "
                                   f"{missing!r} has no red pebble")
        self.computes += 1
        self.move("compute", v)
        for u in preds:
            self.use_ptr[u] += 1
        self.comp_ptr[v] += 1
        for u in preds + (v,):
            if u not in self.red:
                continue
            if self.next_use(u) == _INF:
                self.drop(u)
            else:
                self.touch(u)

    def flush(self) -> None:
        for v in list(self.red):
            self.drop(v)


def _flush_positions(flush_at, n: int) -> set[int]:
    """The positions ``0..n`` of ``flush_at`` as ints; anything else (a float, a position
    outside the schedule, not an iterable) is an InvalidInputError naming ``flush_at``, not
    a flush silently never made."""
    if isinstance(flush_at, (str, bytes)) or not hasattr(flush_at, "__iter__"):
        raise InvalidInputError(f"flush_at must be an iterable of schedule positions, "
                                f"got {flush_at!r}")
    return {limits.check_int("flush_at position", t, limits.Limit(0, n, f"the schedule has {n} computes"))
            for t in flush_at}


def play(dag: nx.DiGraph, schedule, S: int, policy: str = "belady", *,
         flush_at: Iterable[int] = (), record_moves: bool = False) -> PebbleResult:
    """Play the red-blue pebble game for a computation order and count loads and stores.

    Parameters
    ----------
    dag : networkx.DiGraph
        The computation DAG; its sources start blue, its sinks must end blue.
    schedule : sequence of vertices, or an object with ``.order`` (a TiledSchedule)
        Non-source vertices in the order they are computed; every non-source at least
        once (repeats are recomputations).
    S : int
        Red pebbles (fast-memory words).
    policy : {"belady", "lru"}
        Eviction policy (module docstring).
    flush_at : iterable of int
        Positions ``t`` before which fast memory is emptied (live values without a blue
        pebble are stored), e.g. a TiledSchedule's ``block_starts`` to model blocks that
        share nothing on chip.
    record_moves : bool
        Keep the move list in the result (for :func:`validate_moves`).

    Returns
    -------
    PebbleResult

    Raises
    ------
    ValueError
        For an unknown policy or vertex, a source in the order, a vertex never computed,
        an order that is not topological, or ``S`` too small for some vertex (named).
    IllegalMoveError
        When a move the player makes would break a rule (a compute without all
        predecessors red, more than ``S`` red pebbles, an output not blue at the end).

    Examples
    --------
    >>> from iobound import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> from dataflow import DirectTiling, direct_conv_dag, tiled_schedule
    >>> dag = direct_conv_dag(layer)
    >>> schedule = tiled_schedule(dag, layer, DirectTiling(x=3, y=3, z=2, alpha=1))
    >>> result = play(dag, schedule, S=64, policy="belady")
    >>> result.loads, result.stores, result.peak_red <= 64
    (889, 144, True)
    """
    if not isinstance(policy, str) or policy not in POLICIES:
        raise InvalidInputError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}")
    check_dag(dag)
    S = check_pebbles(S)
    record_moves = limits.check_flag("record_moves", record_moves)
    order = getattr(schedule, "order", schedule)
    if isinstance(order, (str, bytes)) or not isinstance(order, Iterable):
        raise InvalidInputError(f"schedule must be a sequence of vertices or a TiledSchedule, "
                                f"got {type(schedule).__name__} {schedule!r:.60}")
    order = list(order)
    _check_order(dag, order, S)
    game = _Game(dag, order, S, policy, record_moves)
    flush = _flush_positions(flush_at, len(order))
    for t in range(len(order)):
        if t in flush and t > 0:
            game.flush()
        game.step(t)
    game.flush()
    unstored = [v for v in game.sinks if v not in game.blue]
    if unstored:  # the end rule; outputs are stored when computed, so this never fires
        raise IllegalMoveError(f"the game ends with {len(unstored)} outputs without a blue "
                               f"pebble, e.g. {unstored[0]!r}")
    logger.debug("played %d computes with S=%d (%s): %d loads, %d stores",
                 game.computes, S, policy, game.loads, game.stores)
    return PebbleResult(loads=game.loads, stores=game.stores, total=game.loads + game.stores,
                        peak_red=game.peak, computes=game.computes, S=S, policy=policy,
                        moves=tuple(game.moves) if record_moves else None)
