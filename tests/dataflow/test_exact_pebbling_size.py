"""The exact pebbling solvers refuse DAGs too large for them, at once, naming the DAG's
size and the limit: CP-SAT spent over 90 s and 3.5 GB building the model of an 8,336-vertex
DAG before its time limit applied (175 vertices: 7 s, 0.5 GB), and brute force spent a
minute and gigabytes before its state cap stopped it."""

from __future__ import annotations

import time

import networkx as nx
import pytest
from hypothesis import given, strategies as st

import dataflow as d
from dataflow.brute_force_pebbling import MAX_BRUTE_FORCE_VERTICES
from dataflow.optimal_pebbling import MAX_MODEL_VERTEX_STEPS, check_model_size
from iobound import ConvLayer
from iobound.errors import InvalidInputError

SWEEP = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)  # 8,336 vertices


def test_optimal_pebbling_refuses_a_dag_too_large_to_model_at_once():
    """The sweep's DAG is refused before any model is built, naming its size and the limit."""
    dag = d.direct_conv_dag(SWEEP)
    t0 = time.perf_counter()
    with pytest.raises(InvalidInputError, match=r"8,336 vertices .* more than the limit 20,000"):
        d.optimal_pebbling(dag, S=64, time_limit=5)
    assert time.perf_counter() - t0 < 5


def test_a_dag_of_175_vertices_is_refused_too():
    """175 vertices took 7 s and 0.5 GB to model; a DAG of that size is over the limit."""
    dag = d.direct_conv_dag(ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=1, k_h=3, k_w=3))
    assert 150 < dag.number_of_nodes() < 200
    with pytest.raises(InvalidInputError, match="vertex-steps, more than the limit"):
        d.optimal_pebbling(dag, S=64, time_limit=5)


def test_recompute_steps_count_towards_the_model_size():
    """A small DAG with a horizon of thousands of steps is as large a model."""
    chain = nx.path_graph(20, create_using=nx.DiGraph)
    with pytest.raises(InvalidInputError, match="20 vertices over 4,117 steps"):
        d.optimal_pebbling(chain, S=2, time_limit=5, recompute=4096)


@given(st.integers(1, 2000), st.integers(0, 2000))
def test_model_size_limit_is_vertices_times_steps(vertices, horizon):
    """check_model_size refuses exactly the models over MAX_MODEL_VERTEX_STEPS vertex-steps."""
    if vertices * (horizon + 2) > MAX_MODEL_VERTEX_STEPS:
        with pytest.raises(InvalidInputError, match=f"{vertices:,} vertices"):
            check_model_size(vertices, horizon)
    else:
        check_model_size(vertices, horizon)


def test_brute_force_refuses_large_dags_at_once():
    """Brute force spent a minute and gigabytes on large DAGs before its state cap stopped it."""
    with pytest.raises(InvalidInputError, match=f"at most {MAX_BRUTE_FORCE_VERTICES} vertices, got 8,336"):
        d.brute_force_pebbling(d.direct_conv_dag(SWEEP), S=64)
    assert d.brute_force_pebbling(nx.path_graph(MAX_BRUTE_FORCE_VERTICES, create_using=nx.DiGraph), 2) == 2
