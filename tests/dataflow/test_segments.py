"""Useful events and chain segments of played direct-convolution games, against the move list.

Without recomputation every vertex is computed once, so its useful event must be that one
compute move (the flow back from the outputs has to pass through spilled and reloaded
values); with a hand-written recomputation the useful compute is the one before the
output's first store. Segments are cut after every ``Y`` loads only: all but the last hold
exactly ``Y`` loads, and loads and stores add up to the game's.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from dataflow.dag_direct import direct_conv_dag
from dataflow.pebble import play, validate_moves
from dataflow.schedules import topological_schedule
from dataflow.segments import chain_segments, useful_events
from iobound.layer import ConvLayer


@st.composite
def played(draw):
    """A small direct layer, a random order played with few pebbles (spills happen)."""
    layer = ConvLayer(1, draw(st.integers(1, 3)), draw(st.integers(2, 4)), draw(st.integers(2, 4)),
                      draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    dag = direct_conv_dag(layer)
    order = topological_schedule(dag, np.random.default_rng(draw(st.integers(0, 2**16))))
    s = draw(st.integers(3, 10))
    res = play(dag, order, s, draw(st.sampled_from(["belady", "lru"])), record_moves=True)
    return dag, res, s


@settings(deadline=None, max_examples=40)
@given(played())
def test_useful_event_is_the_only_compute_without_recomputation(case):
    """Every non-source's useful event is its single compute move."""
    dag, res, _ = case
    computes = {v: k for k, (op, v) in enumerate(res.moves) if op == "compute"}
    assert useful_events(dag, res.moves) == computes


@settings(deadline=None, max_examples=40)
@given(played(), st.integers(1, 6))
def test_segments_are_cut_by_loads_only(case, y):
    """All segments but the last have Y loads; per-segment loads, stores and fresh runs add up."""
    dag, res, s = case
    segs = chain_segments(dag, res.moves, Y=y)
    assert len(segs) == res.loads // y + 1
    assert [g.loads for g in segs[:-1]] == [y] * (len(segs) - 1) and segs[-1].loads < y
    assert sum(g.loads for g in segs) == res.loads and sum(g.stores for g in segs) == res.stores
    assert sum(g.fresh for g in segs) == sum(1 for v in dag if dag.out_degree(v) == 0)


def test_the_first_store_decides_the_useful_compute():
    """A 1x1 layer whose output is computed and stored twice: the first compute is useful."""
    dag = direct_conv_dag(ConvLayer(1, 1, 1, 1, 1, 1, 1))
    (out,) = [v for v in dag if dag.out_degree(v) == 0]
    x, w = sorted(dag.predecessors(out))
    moves = [("load", x), ("load", w), ("compute", out), ("store", out),
             ("compute", out), ("store", out)]
    validate_moves(dag, moves, S=3)
    assert useful_events(dag, moves) == {out: 2}


def test_stores_between_loads_do_not_cut():
    """A 2x2 1x1 layer with one channel: 5 loads interleaved with 4 output stores; Y=2
    gives segments of 2, 2 and 1 loads and the 4 stores spread over them."""
    layer = ConvLayer(1, 1, 2, 2, 1, 1, 1)
    dag = direct_conv_dag(layer)
    res = play(dag, topological_schedule(dag), 3, record_moves=True)
    assert (res.loads, res.stores) == (5, 4)
    segs = chain_segments(dag, res.moves, Y=2)
    assert [g.loads for g in segs] == [2, 2, 1] and sum(g.stores for g in segs) == 4
