"""The run and grouped dataflows check their arguments as the direct and Winograd ones do
(tests/dataflow/test_api_hostile_dataflow.py, test_tilings_checked.py): a layer that is no
ConvLayer, or a tiling of the wrong type, was an AttributeError ('str' object has no
attribute 'extent_h'; 'DirectTiling' object has no attribute 'm'), and a numpy integer
run length was refused though numpy integers work wherever ints do."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as d
from dataflow import grouped, runs
from dataflow.dag_direct import direct_conv_dag
from dataflow.runs_schedule import run_schedule
from iobound import ConvLayer
from iobound.errors import InvalidInputError

POINTWISE = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=2, k_h=1, k_w=1)
GROUPED = ConvLayer(n=1, c_in=4, h_in=4, w_in=4, c_out=4, k_h=3, k_w=3, padding=1, groups=2)
RT, DT = runs.RunTiling(4, 2), d.DirectTiling(2, 2, 1, 1)


def _run_calls():
    dag = direct_conv_dag(POINTWISE)
    return {
        "runs_refusal": lambda L, t: runs.runs_refusal(L),
        "runs_apply": lambda L, t: runs.runs_apply(L),
        "check_run_tiling": lambda L, t: runs.check_run_tiling(L, t),
        "run_io": lambda L, t: runs.run_io(L, t),
        "run_footprint": lambda L, t: runs.run_footprint(L, t, "weight-runs"),
        "best_run_dataflow": lambda L, t: runs.best_run_dataflow(L, 64),
        "run_schedule": lambda L, t: run_schedule(dag, L, t),
    }


def _grouped_calls():
    return {
        "group_sublayer": lambda L, t: grouped.group_sublayer(L),
        "check_group_tiling": lambda L, t: grouped.check_group_tiling(L, t),
        "grouped_io": lambda L, t: grouped.grouped_io(L, t),
        "grouped_footprint": lambda L, t: grouped.grouped_footprint(L, t, "output"),
        "best_grouped_dataflow": lambda L, t: grouped.best_grouped_dataflow(L, 256),
        "grouped_schedule": lambda L, t: grouped.grouped_schedule(L, t),
        "evaluate_grouped": lambda L, t: grouped.evaluate_grouped(L, 256, tiling=t),
    }


@pytest.mark.parametrize("bad", ["vgg16.conv1_1", None, np.int64(4), {"n": 1}])
@pytest.mark.parametrize("name", sorted(_run_calls()))
def test_run_functions_name_a_non_layer(name, bad):
    """``run_io('vgg16.conv1_1', RunTiling(1, 1))`` was an AttributeError about extent_h."""
    call = _run_calls()[name]
    call(POINTWISE, RT)   # valid with the layer
    with pytest.raises(InvalidInputError, match="layer must be a ConvLayer"):
        call(bad, RT)


@pytest.mark.parametrize("bad", ["x", None, np.int64(4), {"n": 1}])
@pytest.mark.parametrize("name", sorted(_grouped_calls()))
def test_grouped_functions_name_a_non_layer(name, bad):
    """``grouped_io('x', DirectTiling(1, 1, 1))`` was an AttributeError about w_out."""
    call = _grouped_calls()[name]
    call(GROUPED, DT)
    with pytest.raises(InvalidInputError, match="layer must be a ConvLayer"):
        call(bad, DT)


@pytest.mark.parametrize("bad", [DT, d.WinogradTiling(2, 2, 2, 1), None, (4, 2), {"m": 4, "z": 2}])
@pytest.mark.parametrize("name", ["check_run_tiling", "run_io", "run_footprint", "run_schedule"])
def test_run_functions_refuse_what_is_no_run_tiling(name, bad):
    """``run_io(L, DirectTiling(1, 1, 1))`` was "'DirectTiling' object has no attribute 'm'"."""
    with pytest.raises(InvalidInputError, match="tiling must be a RunTiling"):
        _run_calls()[name](POINTWISE, bad)


def test_grouped_tiling_of_another_type_is_named_with_its_type():
    with pytest.raises(InvalidInputError, match="needs a DirectTiling, got tuple \\(2, 2, 1\\)"):
        grouped.grouped_io(GROUPED, (2, 2, 1))


@pytest.mark.parametrize("kind", [np.int64, np.int32, np.uint16])
def test_run_tiling_takes_numpy_integers(kind):
    """``RunTiling(np.int64(4), 2)`` was refused ('must be an integer >= 1, got np.int64(4)');
    it is stored as an int and costs what RunTiling(4, 2) costs."""
    t = runs.RunTiling(kind(4), kind(2))
    assert t == RT and type(t.m) is int and type(t.z) is int
    assert runs.run_io(POINTWISE, t) == runs.run_io(POINTWISE, RT)


@pytest.mark.parametrize("m, z, match", [
    (0, 1, "run tile m=0 is below the minimum 1"),
    (1, -2, "run tile z=-2 is below the minimum 1"),
    (2.0, 1, "run tile m must be an integer, got 2.0"),
    (True, 1, "run tile m must be an integer, got True"),
    ("4", 1, "run tile m must be an integer"),
    (1, 10**30, "run tile z=.* is above the limit"),
])
def test_run_tiling_refuses_what_is_no_size(m, z, match):
    with pytest.raises(InvalidInputError, match=match):
        runs.RunTiling(m, z)


@pytest.mark.parametrize("s", ["64", 0, 2.5, None])
def test_best_run_dataflow_checks_the_fast_memory(s):
    """As best_direct_dataflow: a fast memory that is no word count is named."""
    with pytest.raises(InvalidInputError, match="fast_memory"):
        runs.best_run_dataflow(POINTWISE, s)
