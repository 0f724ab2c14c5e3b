"""Exact minimum I/O by CP-SAT: checked against brute force, and bound <= optimum <= heuristics."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dataflow.dag_direct import direct_conv_dag
from dataflow.dag_winograd import winograd_conv_dag
from dataflow.optimal_pebbling import brute_force_pebbling, optimal_pebbling
from dataflow.pebble import play, validate_moves
from dataflow.schedules import topological_schedule
from iobound import ConvLayer
from iobound.errors import InvalidInputError
from iobound.report import bound_report


def matmul_dag(m: int, k: int, n: int) -> nx.DiGraph:
    """C = A B as products and accumulation chains (the direct convolution's shape)."""
    g = nx.DiGraph()
    for i in range(m):
        for j in range(n):
            prev = None
            for t in range(k):
                p = ("p", i, j, t)
                g.add_edges_from([(("a", i, t), p), (("b", t, j), p)])
                if prev is not None:
                    s = ("s", i, j, t)
                    g.add_edges_from([(prev, s), (p, s)])
                    p = s
                prev = p
    return g


TINY = {
    "chain": nx.path_graph(5, create_using=nx.DiGraph),
    "diamond": nx.DiGraph([(0, 1), (0, 2), (1, 3), (2, 3)]),
    "matmul 1x2x2": matmul_dag(1, 2, 2),
}


@pytest.mark.parametrize("name, S", [("chain", 2), ("chain", 3), ("diamond", 3), ("diamond", 4),
                                     ("matmul 1x2x2", 3), ("matmul 1x2x2", 4), ("matmul 1x2x2", 5)])
def test_cpsat_equals_brute_force_on_tiny_dags(name, S):
    """CP-SAT proves the same minimum as Dijkstra over all game states."""
    dag = TINY[name]
    res = optimal_pebbling(dag, S, time_limit=30)
    assert res.proven_optimal and res.io == brute_force_pebbling(dag, S)


def test_matmul_optimum_needs_fewer_io_than_naive_orders():
    """At S=3 the 1x2x2 product's optimum (13) is below the topological-order heuristic."""
    res = optimal_pebbling(TINY["matmul 1x2x2"], 3, time_limit=30)
    assert res.io == 13 and res.heuristic_io > res.io


@st.composite
def tiny_dags(draw):
    """Random DAGs of 3-8 vertices with in-degree <= 2."""
    n = draw(st.integers(3, 8))
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for v in range(1, n):
        if draw(st.booleans()) or v == n - 1:
            for u in draw(st.lists(st.integers(0, v - 1), min_size=1, max_size=min(2, v), unique=True)):
                g.add_edge(u, v)
    return g


@given(tiny_dags(), st.integers(0, 2))
def test_cpsat_equals_brute_force_on_random_dags(dag, extra):
    """On random tiny DAGs the CP-SAT optimum is the brute-force optimum."""
    S = max(d for _, d in dag.in_degree()) + 1 + extra
    res = optimal_pebbling(dag, S, time_limit=30)
    assert res.proven_optimal and res.io == brute_force_pebbling(dag, S)


def test_solution_is_a_legal_game():
    """The returned moves pass the validator with the reported loads and stores."""
    res = optimal_pebbling(TINY["matmul 1x2x2"], 4, time_limit=30)
    count = validate_moves(TINY["matmul 1x2x2"], res.moves, 4)
    assert (count.loads, count.stores) == (res.loads, res.stores) and res.io == count.total


CONV_CASES = [
    ("direct", ConvLayer(n=1, c_in=2, h_in=1, w_in=2, c_out=1, k_h=1, k_w=2), None, 3),
    ("direct", ConvLayer(n=1, c_in=2, h_in=1, w_in=2, c_out=1, k_h=1, k_w=2), None, 4),
    ("direct", ConvLayer(n=1, c_in=1, h_in=2, w_in=3, c_out=1, k_h=1, k_w=2), None, 6),
    ("direct", ConvLayer(n=1, c_in=2, h_in=1, w_in=2, c_out=2, k_h=1, k_w=2, groups=2), None, 3),
    ("winograd", ConvLayer(n=1, c_in=1, h_in=1, w_in=3, c_out=1, k_h=1, k_w=1), 2, 4),
    ("winograd", ConvLayer(n=1, c_in=1, h_in=1, w_in=3, c_out=1, k_h=1, k_w=1), 2, 6),
]


@pytest.mark.parametrize("algorithm, layer, e, S", CONV_CASES)
def test_bound_le_optimum_le_heuristics(algorithm, layer, e, S):
    """Every iobound bound <= the proven optimum <= Belady and LRU plays of random orders."""
    dag = direct_conv_dag(layer) if algorithm == "direct" else winograd_conv_dag(layer, e)
    res = optimal_pebbling(dag, S, time_limit=30)
    assert res.proven_optimal
    for b in bound_report(layer, S, algorithm, e).bounds.values():
        assert b.value <= res.io + 1e-9, (b.method, b.value, res.io)
    rng = np.random.default_rng(0)
    for _ in range(3):
        order = topological_schedule(dag, rng)
        for policy in ("belady", "lru"):
            assert res.io <= play(dag, order, S, policy).total


def _compulsory(dag: nx.DiGraph) -> int:
    """Used sources (each loaded once) plus sinks (each stored once)."""
    return sum(1 for v in dag if (dag.in_degree(v) == 0) != (dag.out_degree(v) == 0))


def test_time_limit_reports_unproven():
    """A 32-vertex DAG at S=3 is not proven in 1 s; the flag says so and bounds bracket the result.

    Even then the solver's bound is at least the compulsory I/O (stated on the objective).
    """
    dag = matmul_dag(2, 3, 2)
    res = optimal_pebbling(dag, 3, time_limit=1)
    assert not res.proven_optimal
    assert _compulsory(dag) <= res.lower_bound <= res.heuristic_io
    assert res.io is None or res.lower_bound <= res.io <= res.heuristic_io


def test_compulsory_optimum_is_proven_with_one_worker():
    """A game of compulsory I/O is proven optimal by a single CP-SAT worker (no portfolio)."""
    dag = direct_conv_dag(ConvLayer(n=1, c_in=1, h_in=2, w_in=3, c_out=1, k_h=1, k_w=2))
    res = optimal_pebbling(dag, 6, time_limit=30, workers=1)
    assert res.proven_optimal and res.io == _compulsory(dag) == 12 < res.heuristic_io


def test_brute_force_refuses_large_state_spaces():
    """Brute force stops with ValueError past max_states."""
    with pytest.raises(ValueError, match="states"):
        brute_force_pebbling(matmul_dag(2, 2, 2), 3, max_states=1000)


def test_ctrl_c_after_an_exact_solve_raises_keyboard_interrupt():
    """CP-SAT leaves SIGINT at the C default after a solve; optimal_pebbling puts Python's
    handler back, so a later Ctrl-C is a KeyboardInterrupt, not a killed process."""
    import subprocess
    import sys
    # Python's own handler first: a child of a shell's background job inherits SIGINT ignored
    code = ("import os, signal, time\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "import networkx as nx\n"
            "from dataflow.optimal_pebbling import optimal_pebbling\n"
            "optimal_pebbling(nx.DiGraph([(0, 2), (1, 2)]), 3, time_limit=5, workers=1)\n"
            "try:\n"
            "    os.kill(os.getpid(), signal.SIGINT)\n"
            "    time.sleep(2)\n"
            "    print('ignored')\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert (out.returncode, out.stdout.strip()) == (0, "interrupted"), out.stderr[-500:]


BAD_S = (st.floats() | st.text(max_size=3) | st.none() | st.booleans()
         | st.integers(max_value=0) | st.integers(min_value=2**40 + 1))


@settings(max_examples=40)
@given(BAD_S)
def test_pebbles_must_be_a_limited_integer(S):
    """Any S that is not a positive integer within FAST_MEMORY_WORDS is refused (2.5,
    NaN and inf were silently played by the brute force; 10**30 was an OR-Tools TypeError)."""
    g = nx.DiGraph([("a", "b"), ("b", "c")])
    with pytest.raises(InvalidInputError, match=r"^S( must be an integer|=-?\d+ is (below|above))"):
        brute_force_pebbling(g, S)
    with pytest.raises(InvalidInputError, match=r"^S( must be an integer|=-?\d+ is (below|above))"):
        optimal_pebbling(g, S, time_limit=1)


@pytest.mark.parametrize("kwargs, fragment", [
    ({"time_limit": float("nan")}, "time_limit must be a finite number > 0"),
    ({"time_limit": float("inf")}, "time_limit must be a finite number > 0"),
    ({"time_limit": "5"}, "time_limit must be a finite number > 0"),
    ({"recompute": -1}, "recompute=-1 is below"), ({"workers": 0}, "workers=0 is below"),
])
def test_solver_options_are_checked(kwargs, fragment):
    """time_limit NaN was silently accepted (MODEL_INVALID, no answer)."""
    with pytest.raises(InvalidInputError, match=fragment):
        optimal_pebbling(nx.DiGraph([("a", "b")]), 2, **kwargs)


def test_cyclic_graph_and_bad_max_states_are_refused():
    """A cycle was NetworkXUnfeasible (optimal) or 'no game exists' (brute force); a NaN
    max_states switched the state cap off."""
    cyclic = nx.DiGraph([("s", "a"), ("a", "b"), ("b", "a"), ("b", "t")])
    for call in (brute_force_pebbling, optimal_pebbling):
        with pytest.raises(InvalidInputError, match="cycle"):
            call(cyclic, 3)
    with pytest.raises(InvalidInputError, match="max_states must be an integer"):
        brute_force_pebbling(nx.DiGraph([("a", "b")]), 2, max_states=float("nan"))
