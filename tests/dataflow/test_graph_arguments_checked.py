"""The DAG functions refuse bad arguments with an InvalidInputError that names them:
direct_chain refuses indices outside the layer (it returned chains of vertices that do not
exist), and a None, a dict or another layer's DAG is named rather than a TypeError or
AttributeError from inside (or a plain ValueError)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dataflow as d
from iobound import ConvLayer
from iobound.errors import InvalidInputError

SWEEP = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)  # 8,336 vertices
SMALL = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=2, k_h=3, k_w=3)


@settings(max_examples=50)
@given(st.integers(-3, 3), st.integers(-3, 6), st.integers(-3, 8), st.integers(-3, 8))
def test_direct_chain_takes_only_outputs_of_the_layer(b, co, oh, ow):
    """An index outside the layer is refused naming it; an index inside gives a chain of
    vertices of the DAG."""
    inside = 0 <= b < SWEEP.n and 0 <= co < SWEEP.c_out and 0 <= oh < SWEEP.h_out and 0 <= ow < SWEEP.w_out
    if inside:
        dag = _sweep_dag()
        assert all(v in dag for _, v in d.direct_chain(SWEEP, b, co, oh, ow))
    else:
        with pytest.raises(InvalidInputError, match=r"^(b|co|oh|ow)="):
            d.direct_chain(SWEEP, b, co, oh, ow)


_DAGS: dict = {}


def _sweep_dag() -> nx.DiGraph:
    if "sweep" not in _DAGS:
        _DAGS["sweep"] = d.direct_conv_dag(SWEEP)
    return _DAGS["sweep"]


@pytest.mark.parametrize("value", [None, "0", True, 0.0, 1.5])
def test_direct_chain_indices_must_be_integers(value):
    """None, '0' and True were put into vertex keys as they were."""
    for k in range(4):
        args = [0, 0, 0, 0]
        args[k] = value
        with pytest.raises(InvalidInputError, match="must be an integer"):
            d.direct_chain(SWEEP, *args)


def _small():
    dag = d.direct_conv_dag(SMALL)
    return dag, d.topological_schedule(dag)


@pytest.mark.parametrize("name, call, fragment", [
    ("play", lambda g: d.play(g, None, S=64), "schedule must be"),
    ("play", lambda g: d.play(g, 5, S=64), "schedule must be"),
    ("play", lambda g: d.play(g, d.topological_schedule(g), S=64, record_moves="yes"),
     "record_moves must be True or False"),
    ("validate_moves", lambda g: d.validate_moves(g, None, 64), "moves must be"),
    ("topological_schedule", lambda g: d.topological_schedule(g, 5), "rng must be"),
    ("topological_schedule", lambda g: d.topological_schedule(g, np.random.RandomState(0)), "rng must be"),
    ("check_multistep_partition", lambda g: d.check_multistep_partition(None), "dag must be"),
    ("check_multistep_partition", lambda g: d.check_multistep_partition(g, max_violations=-1),
     "max_violations=-1"),
    ("step_parts", lambda g: d.step_parts(None), "dag must be"),
    ("evaluate_dag", lambda g: d.evaluate_dag(g, {}), "has no value in sources"),
    ("evaluate_dag", lambda g: d.evaluate_dag(g, None), "sources must be a mapping"),
    ("evaluate_dag", lambda g: d.evaluate_dag(None, {}), "dag must be"),
    ("tiled_schedule", lambda g: d.tiled_schedule(g, SWEEP, d.DirectTiling(2, 2, 2)),
     "the DAG was built from the layer n1 2x4x4"),
    ("tiled_schedule", lambda g: d.tiled_schedule(None, SMALL, d.DirectTiling(2, 2, 2)), "dag must be"),
    ("tiled_schedule", lambda g: d.tiled_schedule(g, SMALL, d.DirectTiling(3, 2, 2)),
     "tile x=3 is larger than w_out=2"),
])
def test_dag_functions_name_bad_arguments(name, call, fragment):
    """Each was a TypeError, an AttributeError or a plain ValueError from inside."""
    dag, _ = _small()
    with pytest.raises(InvalidInputError, match=fragment):
        call(dag)


def test_valid_dag_calls_are_unchanged():
    """The same functions with good arguments: a game, a partition, values."""
    dag, order = _small()
    assert d.play(dag, order, S=64).total == d.validate_moves(
        dag, d.play(dag, order, S=64, record_moves=True).moves, 64).total
    assert d.check_multistep_partition(dag).ok and len(d.step_parts(dag)) == 2
    src = {v: 1.0 for v in dag if dag.in_degree(v) == 0}
    assert d.evaluate_dag(dag, src)[("out", 0, 0, 0, 0)] == 2 * 9
    sched = d.tiled_schedule(dag, SMALL.replace(name="renamed"), d.DirectTiling(2, 2, 2))
    assert len(sched.order) == sum(1 for v in dag if dag.in_degree(v) > 0)
