"""Run tiles for non-overlapping windows: exact I/O against played games, bounds and rectangles."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, strategies as st

from dataflow.dag_direct import direct_conv_dag
from dataflow.direct import DirectTiling
from dataflow.pebble import play
from dataflow.runs import (RUN_ORDERS, RunTiling, best_run_dataflow, check_run_tiling, run_footprint,
                           run_io, runs_apply, runs_refusal)
from dataflow.runs_schedule import run_schedule
from dataflow.stationary import stationary_io
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from iobound.report import bound_report


@st.composite
def run_cases(draw, padding=True):
    """A small layer whose windows do not overlap (extent <= stride), a run tiling and an order."""
    k_h, k_w = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    p = (draw(st.integers(0, 1)), draw(st.integers(0, 1))) if padding else (0, 0)
    layer = ConvLayer(n=draw(st.integers(1, 2)), c_in=draw(st.integers(1, 3)),
                      h_in=draw(st.integers(2, 6)), w_in=draw(st.integers(2, 6)),
                      c_out=draw(st.integers(1, 3)), k_h=k_h, k_w=k_w,
                      stride=(k_h + draw(st.integers(0, 1)), k_w + draw(st.integers(0, 1))),
                      padding=p)
    tiling = RunTiling(draw(st.integers(1, layer.h_out * layer.w_out)), draw(st.integers(1, layer.c_out)))
    return layer, tiling, draw(st.sampled_from(RUN_ORDERS))


@given(run_cases(padding=False))
def test_played_equals_formula_without_padding(case):
    """No padding, flushed blocks, S = footprint + 2: Belady moves exactly run_io words."""
    layer, t, order = case
    dag = direct_conv_dag(layer)
    sched = run_schedule(dag, layer, t, order)
    s = run_footprint(layer, t, order).total + 2
    assert play(dag, sched, s, flush_at=sched.block_starts).total == run_io(layer, t, order).total


@given(run_cases())
def test_played_at_most_formula_and_never_below_a_bound(case):
    """With padding the DAG drops padding-only outputs and weights: played <= formula; and no
    played game moves less than any reported bound at its S."""
    layer, t, order = case
    dag = direct_conv_dag(layer)
    sched = run_schedule(dag, layer, t, order)
    s = run_footprint(layer, t, order).total + 2
    played = play(dag, sched, s, flush_at=sched.block_starts).total
    assert played <= run_io(layer, t, order).total
    assert all(played >= b.value - 1e-9 for b in bound_report(layer, s).bounds.values())


@given(run_cases(), st.integers(1, 6))
def test_full_row_runs_are_the_rectangle_formula(case, rows):
    """Runs of whole output rows are rectangles of full width: the same exact I/O."""
    layer, t, order = case
    y = min(rows, layer.h_out)
    run = RunTiling(layer.w_out * y, t.z)
    rect = stationary_io(layer, DirectTiling(layer.w_out, y, t.z), order.removesuffix("-runs"))
    assert run_io(layer, run, order) == rect


def test_search_is_the_brute_force_minimum():
    """best_run_dataflow returns the least exact I/O over every order, m and z that fit."""
    layer = ConvLayer(1, 6, 5, 7, 9, 1, 1)
    for s in (40, 90, 200):
        best = best_run_dataflow(layer, s)
        brute = min(run_io(layer, RunTiling(m, z), o).total
                    for o in RUN_ORDERS for m, z in itertools.product(range(1, 36), range(1, 10))
                    if run_footprint(layer, RunTiling(m, z), o).total <= s)
        assert best.io.total == brute and best.footprint.total <= s


@given(st.integers(1, 300), st.integers(4, 60), st.integers(1, 300), st.sampled_from([1, 2]),
       st.integers(16, 20000))
def test_best_run_never_beats_a_bound(c_in, size, c_out, stride, s):
    """On mid-sized 1x1 layers (no DAG) the chosen run dataflow moves at least every bound at S + 2."""
    layer = ConvLayer(1, c_in, size, size, c_out, 1, 1, stride=stride)
    best = best_run_dataflow(layer, s)
    if best is None:
        return
    assert best.footprint.total <= s
    assert all(best.io.total >= b.value - 1e-9 for b in bound_report(layer, s + 2).bounds.values())


def test_runs_need_non_overlapping_windows():
    """Overlapping windows or groups: runs do not apply; bad tiles and orders are named."""
    assert not runs_apply(ConvLayer(1, 2, 6, 6, 2, 3, 3))
    assert not runs_apply(ConvLayer(1, 2, 6, 6, 2, 1, 1, groups=2))
    assert runs_apply(ConvLayer(1, 2, 6, 6, 2, 2, 2, stride=2))
    with pytest.raises(InvalidInputError, match="do not overlap.*has overlapping windows$"):
        check_run_tiling(ConvLayer(1, 2, 6, 6, 2, 3, 3), RunTiling(1, 1))
    with pytest.raises(InvalidInputError, match="need one group;.* has 2 groups$"):
        check_run_tiling(ConvLayer(1, 2, 6, 6, 2, 1, 1, groups=2), RunTiling(1, 1))
    assert runs_refusal(ConvLayer(1, 2, 6, 6, 2, 3, 3, groups=2)).endswith(
        "has overlapping windows and 2 groups")
    with pytest.raises(InvalidInputError, match="m=37 is larger"):
        run_io(ConvLayer(1, 2, 6, 6, 2, 1, 1), RunTiling(37, 1))
    with pytest.raises(InvalidInputError, match="unknown run order 'rows'"):
        run_io(ConvLayer(1, 2, 6, 6, 2, 1, 1), RunTiling(1, 1), "rows")
    with pytest.raises(InvalidInputError, match="run tile m=0 is below the minimum 1"):
        RunTiling(0, 1)
