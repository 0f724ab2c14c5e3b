"""Tests found missing by a mutation pass over the measurers (search/measure/): each pins
one behaviour that a plausible one-line bug could break while every other test still
passed. Nothing here compiles or emulates: the emulator's check and the GPU's result are
stand-ins."""

from __future__ import annotations

import math
import statistics
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iobound.devices import get_device
from iobound.layer import ConvLayer
from kernels.status import Status
from search.measure.base import MeasureRecord

LAYER = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
CFG = dict(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1)


# -- model: a config no SM can hold is invalid, never an estimate ---------------------

def test_model_refuses_a_config_of_which_no_block_fits_on_an_sm():
    """A device whose per-block shared memory is its whole SM's (no room for the 1 KiB
    the system reserves per block from compute capability 8.0): a config within the
    per-block limit passes check_config, yet no block is resident (Occupancy Calculator);
    its estimate is meaningless, so the record is ``invalid``."""
    from kernels.config import DirectConfig, check_config, shared_memory_bytes
    from kernels.limits import resident_blocks_per_sm, shared_allocation
    from search.measure.model import ModelMeasurer

    smem = shared_memory_bytes(LAYER, DirectConfig(**CFG))
    room = int(shared_allocation(get_device("a100"), smem)) - 1024  # the config's own units
    dev = replace(get_device("a100"), shared_mem_per_sm_bytes=room, shared_mem_per_block_bytes=room)
    assert check_config(LAYER, DirectConfig(**CFG), dev) == []
    assert int(resident_blocks_per_sm(dev, 9, smem, 32)) == 0
    rec, = ModelMeasurer(LAYER, dev).measure([CFG])
    assert rec.status is Status.INVALID and "fits on an SM" in rec.error and rec.time_ms is None


# -- replay: the recorded time is Kernel Tuner's objective, not the median -----------

@given(times=st.lists(st.floats(0.1, 100.0), min_size=2, max_size=7))
def test_replay_time_is_the_recorded_time_not_the_median_of_times(times):
    """Kernel Tuner records ``time`` (its objective: the mean of ``times``); a replayed
    record's time_ms is that number, with ``costs`` the recorded ``times``."""
    from search.kt_cache import KtCache
    from search.measure.replay import ReplayMeasurer

    recorded = statistics.fmean(times) + 1.0  # unlike any median of the times
    m = ReplayMeasurer(KtCache(tune_params={"a": [1]},
                               entries=[{"a": 1, "time": recorded, "times": times}]))
    rec, = m.measure([{"a": 1}])
    assert rec.is_ok and rec.time_ms == recorded and rec.costs == tuple(times)


# -- emulate: every failure its own status ---------------------------------------------

def _fake_check(**changes):
    """An EmulationCheck of a passing run, with ``changes``."""
    from kernels.verify import EmulationCheck
    fields = dict(ok=True, numerics_ok=True, max_abs_err=0.0, max_rel_err=0.0, worst_ratio=0.0,
                  global_loads=100, global_stores=18, expected_loads=100, expected_stores=18,
                  traffic_matches=True, flops=10, expected_flops=10, flops_matches=True,
                  onchip_words=50, lower_bound=None, above_lower_bound=True, seconds=0.0)
    return EmulationCheck(**{**fields, **changes})


def test_emulate_traffic_other_than_the_formula_is_a_wrong_result(monkeypatch):
    """The emulate measurer's second check: right numbers from the wrong traffic (the
    kernel does not implement the dataflow it is scored by) is ``wrong_result``."""
    from kernels import verify
    from search.measure.emulate import EmulateMeasurer

    monkeypatch.setattr(verify, "emulate_and_check", lambda *a, **k: _fake_check(
        ok=False, global_loads=101, traffic_matches=False))
    rec, = EmulateMeasurer(LAYER).measure([CFG])
    assert rec.status is Status.WRONG_RESULT and "differs from the formula" in rec.error
    monkeypatch.setattr(verify, "emulate_and_check", lambda *a, **k: _fake_check())
    ok, = EmulateMeasurer(LAYER).measure([CFG])
    assert ok.is_ok and ok.surrogate_cost == 118.0


@pytest.mark.parametrize("timed_out, status", [(True, Status.TIMEOUT), (False, Status.COMPILE_ERROR)])
def test_emulate_build_timeout_is_a_timeout_record(monkeypatch, timed_out, status):
    """g++ running past its time limit rejected nothing: ``timeout``, not ``compile_error``
    (which a tuner takes as the kernel's fault)."""
    from kernels import verify
    from kernels.emulator import EmulatorBuildError
    from search.measure.emulate import EmulateMeasurer

    def build_fails(*a, **k):
        raise EmulatorBuildError("g++ failed", "log text", timed_out=timed_out)

    monkeypatch.setattr(verify, "emulate_and_check", build_fails)
    rec, = EmulateMeasurer(LAYER).measure([CFG])
    assert rec.status is status and rec.time_ms is None


# -- cuda: a GPU failure is a failed record --------------------------------------------

@pytest.mark.parametrize("status", [s for s in Status if not s.is_ok])
def test_cuda_record_of_every_failed_result_is_failed(status):
    """record_from_result keeps every failure status (a runtime error or a timeout made
    an ``ok`` record with no time, which a tuner could take as a success)."""
    from kernels.gpu import MeasureResult
    from search.measure.cuda import record_from_result

    rec = record_from_result(CFG, MeasureResult(status=status, error="why", compile_seconds=1.0))
    assert rec.status is status and not rec.is_ok and rec.error == "why"
    assert rec.cost == math.inf and rec.extra["compile_seconds"] == 1.0


# -- records: a failure costs infinity, whatever it carries ----------------------------

@pytest.mark.parametrize("status", [s for s in Status if not s.is_ok])
def test_a_failed_record_costs_infinity_even_with_a_surrogate_cost(status):
    """:attr:`MeasureRecord.cost` is ``inf`` for failures: a failed record read from a log
    with a surrogate cost (an emulated traffic count, say) never outranks an ``ok`` one."""
    rec = MeasureRecord.from_dict({"config": CFG, "status": status.value, "surrogate_cost": 5.0})
    assert rec.cost == math.inf
    assert MeasureRecord(CFG, status, surrogate_cost=5.0).cost == math.inf
