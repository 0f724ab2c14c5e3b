"""Every played schedule moves at least as many words as every lower bound iobound reports.

If one of these fails, a *bound* is wrong (or the DAG convention it assumes differs): report
the counterexample, never weaken the test.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, strategies as st

from dataflow.dag_direct import direct_conv_dag
from dataflow.dag_winograd import winograd_conv_dag
from dataflow.direct import DirectTiling
from dataflow.pebble import play
from dataflow.schedules import tiled_schedule, topological_schedule
from iobound import ConvLayer
from iobound.report import bound_report
from layer_cases import small_direct_cases, small_grouped_cases, winograd_cases


@st.composite
def direct_cases(draw):
    """A small direct layer, a tiling of it, S >= 3 and an rng seed."""
    layer, tiling = draw(small_direct_cases())
    return layer, tiling, draw(st.integers(3, 80)), draw(st.integers(0, 2**32 - 1))


def _check(dag, layer, S, schedules, algorithm, e=None):
    bounds = bound_report(layer, S, algorithm, e).bounds
    for name, order, flush in schedules:
        for policy in ("belady", "lru"):
            got = play(dag, order, S, policy, flush_at=flush).total
            for method, b in bounds.items():
                assert got >= b.value - 1e-9, (
                    f"{method} bound {b.value} > played I/O {got}: {layer.short()}, S={S}, "
                    f"schedule={name}, policy={policy}")


def _check_direct(case) -> None:
    """Random topological, tiled and tiled-flushed orders of a direct case against every bound."""
    layer, tiling, S, seed = case
    dag = direct_conv_dag(layer)
    tiled = tiled_schedule(dag, layer, tiling)
    _check(dag, layer, S, [
        ("random topological", topological_schedule(dag, np.random.default_rng(seed)), ()),
        (f"tiled {tiling}", tiled.order, ()),
        (f"tiled {tiling} flushed", tiled.order, tiled.block_starts),
    ], "direct")


@given(direct_cases())
def test_direct_schedules_respect_every_bound(case):
    """Random topological and tiled direct schedules, Belady and LRU, move >= every bound."""
    _check_direct(case)


@given(small_grouped_cases(), st.integers(3, 80), st.integers(0, 2**32 - 1))
def test_grouped_schedules_respect_every_bound(case, s, seed):
    """The same on grouped and depthwise layers (the bounds use the grouped DAG's counts)."""
    _check_direct((*case, s, seed))


@given(winograd_cases())
def test_winograd_schedules_respect_every_bound(case):
    """Random topological and tiled Winograd schedules, Belady and LRU, move >= every bound."""
    layer, tiling, extra, seed = case
    dag = winograd_conv_dag(layer, tiling.e)
    S = max(d for _, d in dag.in_degree()) + 1 + extra
    tiled = tiled_schedule(dag, layer, tiling)
    _check(dag, layer, S, [
        ("random topological", topological_schedule(dag, np.random.default_rng(seed)), ()),
        (f"tiled {tiling}", tiled.order, ()),
        (f"tiled {tiling} flushed", tiled.order, tiled.block_starts),
    ], "winograd", tiling.e)


def test_bounds_above_compulsory_hold_for_played_games():
    """Where the x_partition bound exceeds compulsory I/O (small S), played games still move more.

    The hypothesis cases above are small, so compulsory I/O is usually the largest bound;
    this layer (1920 vertices) at S = 3, 4, 6 makes x_partition the binding one.
    """
    layer = ConvLayer(n=1, c_in=4, h_in=4, w_in=4, c_out=16, k_h=1, k_w=1)
    dag = direct_conv_dag(layer)
    tiled = tiled_schedule(dag, layer, DirectTiling(x=4, y=1, z=2, alpha=1))
    random = topological_schedule(dag, np.random.default_rng(0))
    for S in (3, 4, 6):
        rep = bound_report(layer, S, "direct")
        assert rep.best_method == "x_partition" and rep.best > rep.bounds["compulsory"].value
        _check(dag, layer, S, [("tiled", tiled.order, ()), ("random topological", random, ())],
               "direct")


@st.composite
def chain_binding_cases(draw):
    """Layers with many input channels (long chains) at small S, where x_partition_chain binds."""
    k = draw(st.integers(1, 3))
    layer = ConvLayer(n=1, c_in=draw(st.integers(8, 24)), h_in=k - 1 + draw(st.integers(1, 3)),
                      w_in=k - 1 + draw(st.integers(1, 3)), c_out=draw(st.integers(2, 6)),
                      k_h=k, k_w=k, stride=draw(st.integers(1, 2)) if k > 1 else 1)
    tiling = DirectTiling(x=draw(st.integers(1, layer.w_out)), y=draw(st.integers(1, layer.h_out)),
                          z=draw(st.integers(1, layer.c_out)), alpha=1)
    return layer, tiling, draw(st.integers(9, 30)), draw(st.integers(0, 2**32 - 1))


@given(chain_binding_cases())
def test_chain_bound_where_it_binds(case):
    """x_partition_chain (constant 2) against random topological and tiled orders, both policies."""
    _check_direct(case)


def test_chain_bound_binds_on_a_long_chain_layer():
    """The case the test above is about exists: the chain bound is the best one, above
    x_partition and compulsory, and a tiled Belady game still moves more."""
    layer = ConvLayer(n=1, c_in=24, h_in=3, w_in=3, c_out=6, k_h=1, k_w=1)
    rep = bound_report(layer, 12, "direct")
    assert rep.best_method == "x_partition_chain"
    assert rep.best > 1.2 * max(rep.bounds["x_partition"].value, rep.bounds["compulsory"].value)
    dag = direct_conv_dag(layer)
    order = tiled_schedule(dag, layer, DirectTiling(x=1, y=1, z=6, alpha=1)).order
    assert play(dag, order, 12, "belady").total >= rep.best
