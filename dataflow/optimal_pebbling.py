"""Exact minimum I/O of tiny DAGs: a CP-SAT model of the red-blue pebble game (checked
against brute force, :mod:`dataflow.brute_force_pebbling`, re-exported here).

Beyond the paper: for a DAG of a few dozen vertices the minimum number of loads plus
stores with ``S`` red pebbles can be computed exactly, which puts the lower bounds and the
heuristic schedules on one scale (``bound <= optimum <= Belady/LRU play``).

CP-SAT model (time-expanded, one step per computation). Step ``t = 1..T`` computes at
most one vertex; before its compute, a step may store values that were red, drop red
pebbles (free), and load values that are blue, in that order; a last step ``T + 1`` only
stores. Booleans per vertex and step: ``store``, ``keep`` (stays red), ``load``,
``compute``, and the state ``red``/``blue`` after the step. Constraints: a store needs
red and not yet blue, a load needs blue, ``red = keep + load + compute``; a compute needs
every predecessor kept or loaded in its step (so the predecessors and the result are red
at once, as the game requires); at most ``S`` red pebbles after every step; blue pebbles
are never removed; sources start blue, nothing starts red, every sink ends blue; idle
steps come last. Valid cuts tighten the relaxation (every used source loaded, every sink
stored, every non-source computed, at least once; their sum, the compulsory I/O, bounds
the objective directly), and the heuristic play's I/O is an upper bound. Two dominance
rules prune games that an equally cheap one replaces: a value is loaded only in a step
whose compute uses it (a load can always move later, to its use), and stored only in a
step where it leaves fast memory or in the last step (a store can always move to the
eviction). Objective: loads + stores.

Why one step per computation loses nothing: any game can be rewritten so that between
two computes it first stores, then evicts, then loads (dropping load/evict pairs with no
use between them); that never raises the red count at a compute and never adds I/O. So
the model is exact for games with at most ``T`` computes; ``T`` is the number of
non-sources plus ``recompute`` extra steps (default a quarter of them, at least 2).
"Optimal" therefore means optimal among games that recompute at most that often;
:func:`brute_force_pebbling` has no such limit (Dijkstra over all game states) and checks
the model on very tiny DAGs. Proofs get hard quickly: ~15 vertices prove in a second,
20-30 vertices with small ``S`` often not within 20 s (then ``proven_optimal`` is False
and ``lower_bound`` is the solver's bound).

Examples
--------
>>> import networkx as nx
>>> g = nx.DiGraph([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])  # a diamond
>>> res = optimal_pebbling(g, S=3, time_limit=10)
>>> res.io, res.proven_optimal, brute_force_pebbling(g, S=3)
(2, True, 2)
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import networkx as nx

from iobound import limits
from iobound.errors import InvalidInputError

from .brute_force_pebbling import brute_force_pebbling
from .pebble import play, validate_moves
from .pebble_moves import check_dag, check_pebbles, without_unused_moves
from .schedules import topological_schedule

__all__ = ["MAX_MODEL_VERTEX_STEPS", "OptimalPebbling", "brute_force_pebbling", "check_model_size",
           "optimal_pebbling"]

logger = logging.getLogger(__name__)

#: ``recompute`` of :func:`optimal_pebbling`: each extra step adds a variable per vertex.
RECOMPUTE = limits.Limit(0, 1 << 12, "extra compute steps: each adds a step of variables "
                                     "per vertex to the CP-SAT model")
#: ``workers`` of :func:`optimal_pebbling`.
WORKERS = limits.Limit(1, 1 << 10, "CP-SAT search workers")
#: Largest CP-SAT model :func:`optimal_pebbling` builds, in vertex-steps: vertices times
#: the ``T + 2`` states of the horizon. The model has about six Boolean variables and ten
#: constraints per vertex-step (plus one per edge and step), and building it in Python, before
#: the time limit applies, takes about 0.15 ms and 6 kB per vertex-step (measured: 34k
#: vertex-steps, a 190-vertex DAG, 5 s and 0.3 GB; 565k, 716 vertices, 87 s and 3.4 GB). At
#: 20k a model builds in about 3 s; that is some 120 vertices, and proofs of optimality
#: stop long before (tens of vertices, module docstring).
MAX_MODEL_VERTEX_STEPS = 20_000


@dataclass(frozen=True)
class OptimalPebbling:
    """Result of :func:`optimal_pebbling`.

    Attributes
    ----------
    io : int or None
        Loads + stores of the best game found (None when none was found in time).
    loads, stores : int or None
    proven_optimal : bool
        True when CP-SAT proved that no game within the horizon has less I/O.
        False is also returned, with ``io=None``, when no game was found in time.
    lower_bound : int
        The solver's proven lower bound for games within the horizon (at least the
        compulsory I/O: every used source loaded, every sink stored, once).
    heuristic_io : int
        The best heuristic play (Belady/LRU), an upper bound.
    horizon : int
        Compute steps the model allows (non-sources + ``recompute``).
    status : str
        CP-SAT status name (OPTIMAL, FEASIBLE, UNKNOWN, INFEASIBLE).
    wall_time : float
        Seconds spent in the solver.
    moves : tuple
        The game as ``(op, vertex)`` moves (checked with :func:`dataflow.validate_moves`),
        without moves that serve nothing (:func:`dataflow.without_unused_moves`: the model
        minimises I/O alone and may fill its spare compute steps with recomputes).

    Examples
    --------
    >>> import networkx as nx
    >>> g = nx.DiGraph([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])  # a diamond
    >>> res = optimal_pebbling(g, S=3, time_limit=10)
    >>> res.loads, res.stores, res.lower_bound <= res.io <= res.heuristic_io, res.status
    (1, 1, True, 'OPTIMAL')
    >>> validate_moves(g, res.moves, S=3).total == res.io
    True
    """

    io: int | None
    loads: int | None
    stores: int | None
    proven_optimal: bool
    lower_bound: int
    heuristic_io: int
    horizon: int
    status: str
    wall_time: float
    moves: tuple = ()


def _heuristic(dag: nx.DiGraph, S: int):
    order = topological_schedule(dag)
    games = [play(dag, order, S, p, record_moves=True) for p in ("belady", "lru")]
    return min(games, key=lambda r: r.total)


class _PebbleModel:
    """The CP-SAT model of the game over ``T`` compute steps (+1 final step): per step and
    vertex red/blue state and store/load/keep/compute decisions, with the game's rules."""

    def __init__(self, dag: nx.DiGraph, S: int, T: int) -> None:
        from ortools.sat.python import cp_model

        self.dag, self.S, self.T = dag, S, T
        self.nodes = list(dag.nodes)
        nv = len(self.nodes)
        self.idx = {v: k for k, v in enumerate(self.nodes)}
        self.is_src = [dag.in_degree(v) == 0 for v in self.nodes]
        self.preds = [[self.idx[u] for u in dag.predecessors(v)] for v in self.nodes]
        m = self.m = cp_model.CpModel()

        def bools():
            return [m.NewBoolVar("") for _ in range(nv)]

        self.red, self.blue = [bools() for _ in range(T + 2)], [bools() for _ in range(T + 2)]
        self.store, self.load, self.keep = ([None] + [bools() for _ in range(T + 1)] for _ in range(3))
        self.comp = [None] + [[m.NewBoolVar("") if not self.is_src[k] else None for k in range(nv)]
                              for _ in range(T)]
        for k in range(nv):
            m.Add(self.red[0][k] == 0)
            m.Add(self.blue[0][k] == int(self.is_src[k]))
            if dag.out_degree(self.nodes[k]) == 0:
                m.Add(self.blue[T + 1][k] == 1)
        for t in range(1, T + 2):
            self._step(t)

    def _step(self, t: int) -> None:
        """The rules of step ``t`` (the last, T + 1, only stores)."""
        m, final = self.m, t == self.T + 1
        red, blue, store, load, keep, comp = (self.red, self.blue, self.store, self.load,
                                              self.keep, self.comp)
        for k in range(len(self.nodes)):
            m.AddImplication(store[t][k], red[t - 1][k])
            m.AddImplication(store[t][k], blue[t - 1][k].Not())
            m.Add(blue[t][k] == blue[t - 1][k] + store[t][k])
            m.AddImplication(keep[t][k], red[t - 1][k])
            m.AddImplication(load[t][k], blue[t - 1][k])
            m.AddBoolOr([keep[t][k].Not(), load[t][k].Not()])
            c = None if final else comp[t][k]
            if not final:  # dominance: store a value only when it leaves fast memory
                m.AddBoolOr([store[t][k].Not(), keep[t][k].Not()])
            if c is None:
                m.Add(red[t][k] == keep[t][k] + load[t][k])
            else:  # red after the step: present before it, or just computed
                m.Add(red[t][k] == keep[t][k] + load[t][k] + c)
                for u in self.preds[k]:
                    m.Add(keep[t][u] + load[t][u] >= c)
        if final:
            m.Add(sum(load[t]) == 0)
        else:
            for k in range(len(self.nodes)):  # dominance: load a value in the step that uses it
                users = [comp[t][self.idx[w]] for w in self.dag.successors(self.nodes[k])]
                m.Add(load[t][k] <= sum(users))
            cs = [c for c in comp[t] if c is not None]
            m.Add(sum(cs) <= 1)
            if t > 1:  # idle steps only at the end
                m.Add(sum(cs) <= sum(c for c in comp[t - 1] if c is not None))
        m.Add(sum(red[t]) <= self.S)

    def minimise_io(self, at_most: int) -> int:
        """The objective (loads + stores, at most ``at_most``) with the compulsory work as
        cuts; returns the compulsory I/O."""
        m, T, compulsory = self.m, self.T, 0
        for k, v in enumerate(self.nodes):  # compulsory work, to tighten the relaxation
            if self.is_src[k] and self.dag.out_degree(v) > 0:
                compulsory += 1
                m.Add(sum(self.load[t][k] for t in range(1, T + 1)) >= 1)
            if not self.is_src[k]:
                m.Add(sum(self.comp[t][k] for t in range(1, T + 1)) >= 1)
            if self.dag.out_degree(v) == 0 and not self.is_src[k]:
                compulsory += 1
                m.Add(sum(self.store[t][k] for t in range(1, T + 2)) >= 1)
        total = sum(self.load[t][k] + self.store[t][k] for t in range(1, T + 2)
                    for k in range(len(self.nodes)))
        m.Minimize(total)
        # the sum of the cuts above, stated on the objective itself: without it, a solver with
        # few workers may find a game of compulsory I/O and still fail to prove it optimal
        m.Add(total >= compulsory)
        m.Add(total <= at_most)
        return compulsory


def _solve_keeping_ctrl_c(solver, model) -> int:
    """``solver.Solve(model)`` with Python's SIGINT handler back afterwards.

    While it runs, CP-SAT stops its search on Ctrl-C (``catch_sigint_signal``), but it
    leaves SIGINT at the C default when done: the next Ctrl-C would kill the process with
    no ``KeyboardInterrupt`` (no ``finally``, no partial results). Only the main thread
    can set handlers, and receives them: from another thread CP-SAT is kept off SIGINT
    (the solve then runs to its time limit; Ctrl-C reaches the main thread as before).
    """
    import signal
    import threading

    main = threading.current_thread() is threading.main_thread()
    handler = signal.getsignal(signal.SIGINT) if main else None
    if not main:  # no handler can be put back from here: CP-SAT must not take SIGINT
        solver.parameters.catch_sigint_signal = False
    try:
        return solver.Solve(model)
    finally:
        if handler is not None:
            signal.signal(signal.SIGINT, handler)


def check_model_size(vertices: int, horizon: int, limit: int = MAX_MODEL_VERTEX_STEPS) -> None:
    """InvalidInputError when the CP-SAT model of ``vertices`` over ``horizon`` compute steps
    would exceed ``limit`` vertex-steps (:data:`MAX_MODEL_VERTEX_STEPS`).

    >>> check_model_size(8336, 6000)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: the exact pebbling model of a DAG of 8,336 vertices over 6,002 steps has 50,032,672 vertex-steps, more than the limit 20,000 ...
    """
    cells = vertices * (horizon + 2)
    if cells > limit:
        raise InvalidInputError(
            f"the exact pebbling model of a DAG of {vertices:,} vertices over {horizon + 2:,} "
            f"steps has {cells:,} vertex-steps, more than the limit {limit:,} (the model is built "
            "before the time limit applies, at about 0.15 ms and 6 kB per vertex-step); use a "
            "DAG of a few dozen vertices, or play a schedule (dataflow.play) for an upper bound")


def _horizon(dag: nx.DiGraph, recompute: int | None) -> int:
    """The model's compute steps: one per non-source and ``recompute`` more (default a
    quarter of the non-sources, at least 2), the model's size checked
    (:func:`check_model_size`)."""
    non_sources = sum(1 for v in dag if dag.in_degree(v) > 0)
    extra = max(2, non_sources // 4) if recompute is None else \
        limits.check_int("recompute", recompute, RECOMPUTE)
    check_model_size(dag.number_of_nodes(), non_sources + extra)
    return non_sources + extra


def optimal_pebbling(dag: nx.DiGraph, S: int, time_limit: float = 30.0,
                     recompute: int | None = None, workers: int = 8) -> OptimalPebbling:
    """Minimum loads + stores of ``dag`` with ``S`` red pebbles, by CP-SAT.

    Parameters
    ----------
    dag : networkx.DiGraph
        A tiny DAG (a few dozen vertices; the model may have at most
        :data:`MAX_MODEL_VERTEX_STEPS` vertices x steps); sources start blue, sinks must end
        blue.
    S : int
        Red pebbles; at least the largest in-degree + 1.
    time_limit : float
        Solver time limit in seconds; ``proven_optimal`` says whether it sufficed.
    recompute : int, optional
        Extra compute steps allowed beyond one per non-source (default: a quarter of the
        non-sources, at least 2).
    workers : int
        CP-SAT search workers.

    Returns
    -------
    OptimalPebbling

    Raises
    ------
    InvalidInputError
        When ``S`` is too small for some vertex (from the heuristic play), or the model
        would be larger than :data:`MAX_MODEL_VERTEX_STEPS` (:func:`check_model_size`).

    Examples
    --------
    Four products summed into one output (15 vertices): CP-SAT proves 15 words, where
    the Belady heuristic moves 17:

    >>> from iobound import ConvLayer
    >>> from dataflow import direct_conv_dag
    >>> tiny = direct_conv_dag(ConvLayer(n=1, c_in=2, h_in=1, w_in=2, c_out=1, k_h=1, k_w=2))
    >>> opt = optimal_pebbling(tiny, S=3, time_limit=10)
    >>> opt.io, opt.proven_optimal, opt.heuristic_io
    (15, True, 17)
    """
    from ortools.sat.python import cp_model

    check_dag(dag)
    S = check_pebbles(S)
    limits.check_number("time_limit", time_limit, 0, low_open=True)
    workers = limits.check_int("workers", workers, WORKERS)
    T = _horizon(dag, recompute)
    best = _heuristic(dag, S)
    model = _PebbleModel(dag, S, T)
    compulsory = model.minimise_io(best.total)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_search_workers = workers
    t0 = time.perf_counter()
    status = _solve_keeping_ctrl_c(solver, model.m)
    wall = time.perf_counter() - t0
    name = solver.StatusName(status)
    # compulsory I/O is a proven bound even when the time limit stops the solver in presolve
    bound = max(compulsory, int(round(solver.BestObjectiveBound())))
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return OptimalPebbling(None, None, None, False, bound, best.total, T, name, wall)
    # the model minimises I/O alone: its spare compute steps may hold computes nothing uses
    moves = without_unused_moves(dag, _extract(solver, model))
    count = validate_moves(dag, moves, S)  # the model's game is a legal game
    return OptimalPebbling(io=count.total, loads=count.loads, stores=count.stores,
                           proven_optimal=status == cp_model.OPTIMAL,
                           lower_bound=bound,
                           heuristic_io=best.total, horizon=T, status=name, wall_time=wall,
                           moves=moves)


def _extract(solver, model: _PebbleModel) -> tuple:
    """The solution as moves: per step stores, evictions, loads, then the compute."""
    val = solver.Value
    nodes, T = model.nodes, model.T
    red, keep, load, store, comp = model.red, model.keep, model.load, model.store, model.comp
    moves = []
    for t in range(1, T + 2):
        moves += [("store", v) for k, v in enumerate(nodes) if val(store[t][k])]
        moves += [("evict", v) for k, v in enumerate(nodes)
                  if val(red[t - 1][k]) and not val(keep[t][k])]
        moves += [("load", v) for k, v in enumerate(nodes) if val(load[t][k])]
        if t <= T:
            moves += [("compute", v) for k, v in enumerate(nodes)
                      if comp[t][k] is not None and val(comp[t][k])]
    return tuple(moves)
