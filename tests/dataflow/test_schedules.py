"""Topological and tiled computation orders."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, strategies as st

from dataflow.dag_direct import direct_conv_dag
from dataflow.dag_winograd import winograd_conv_dag
from dataflow.direct import DirectTiling
from dataflow.pebble import play
from dataflow.schedules import tiled_schedule, topological_schedule
from dataflow.winograd import WinogradTiling
from iobound import ConvLayer


def _is_topological(dag: nx.DiGraph, order) -> bool:
    done = {v for v in dag if dag.in_degree(v) == 0}
    for v in order:
        if not all(u in done for u in dag.predecessors(v)):
            return False
        done.add(v)
    return True


@given(st.integers(0, 2**32 - 1))
def test_random_topological_orders_are_valid_permutations(seed):
    """A random topological order lists every non-source once, after its predecessors."""
    dag = direct_conv_dag(ConvLayer(n=1, c_in=2, h_in=4, w_in=3, c_out=2, k_h=2, k_w=2, padding=1))
    order = topological_schedule(dag, np.random.default_rng(seed))
    assert sorted(order) == sorted(v for v in dag if dag.in_degree(v) > 0)
    assert _is_topological(dag, order)


def test_random_orders_differ_between_seeds():
    """Two seeds give two different orders (the rng is used)."""
    dag = direct_conv_dag(ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=2, k_h=2, k_w=2))
    a, b = (topological_schedule(dag, np.random.default_rng(s)) for s in (1, 2))
    assert a != b


@given(st.integers(1, 2), st.integers(1, 4), st.integers(1, 3), st.integers(1, 3))
def test_direct_tiled_order_is_a_topological_permutation(x, y, z, alpha):
    """The direct tiled order computes every vertex once, in a valid order, block by block
    (x at most w_out = 2: a wider tile is refused)."""
    layer = ConvLayer(n=2, c_in=3, h_in=5, w_in=4, c_out=3, k_h=2, k_w=3, stride=(1, 2), padding=1)
    dag = direct_conv_dag(layer)
    sched = tiled_schedule(dag, layer, DirectTiling(x=x, y=y, z=z, alpha=alpha))
    assert sorted(sched.order) == sorted(v for v in dag if dag.in_degree(v) > 0)
    assert _is_topological(dag, sched.order)
    blocks = layer.n * -(-layer.h_out // y) * -(-layer.w_out // x) * -(-layer.c_out // z)
    assert len(sched.block_starts) == blocks
    first = sched.order[sched.block_starts[1]:sched.block_starts[2] if blocks > 2 else None]
    outs = {v for v in first if v[0] == "out"}
    assert 0 < len(outs) <= x * y * z


def test_direct_chunks_interleave_outputs():
    """With alpha = 1, the block's outputs all advance channel 0 before any takes channel 1."""
    layer = ConvLayer(n=1, c_in=2, h_in=2, w_in=3, c_out=1, k_h=1, k_w=1)
    dag = direct_conv_dag(layer)
    order = tiled_schedule(dag, layer, DirectTiling(x=3, y=2, z=1, alpha=1)).order
    channels = [v[5] if v[0] == "prod" else 1 for v in order]
    assert channels == sorted(channels)


@pytest.mark.parametrize("e, x, y, z", [(2, 2, 2, 1), (2, 4, 2, 2), (3, 3, 3, 1), (1, 2, 1, 2)])
def test_winograd_tiled_order_plays_and_recomputes_shared_transforms(e, x, y, z):
    """The Winograd tiled order covers the DAG, plays legally, and recomputes across blocks."""
    layer = ConvLayer(n=1, c_in=2, h_in=5, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
    dag = winograd_conv_dag(layer, e)
    sched = tiled_schedule(dag, layer, WinogradTiling(e=e, x=x, y=y, z=z))
    assert set(sched.order) == {v for v in dag if dag.in_degree(v) > 0}
    assert _is_topological(dag, sched.order)
    res = play(dag, sched, max(d for _, d in dag.in_degree()) + 4, flush_at=sched.block_starts)
    assert res.computes == len(sched.order) > sum(1 for v in dag if dag.in_degree(v) > 0)


def test_tiling_must_match_the_dag():
    """A Winograd tiling on a direct DAG raises ValueError."""
    layer = ConvLayer(n=1, c_in=1, h_in=4, w_in=4, c_out=1, k_h=3, k_w=3)
    with pytest.raises(ValueError, match="Winograd DAG"):
        tiled_schedule(direct_conv_dag(layer), layer, WinogradTiling(e=2, x=2, y=2, z=1))
