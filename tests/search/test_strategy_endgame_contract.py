"""Gaps found by mutation testing of the strategies and records.

The strategy contract (distinct, valid, never asked before) also holds in the explorer's
endgame, which only a strategy told its horizon enters (``test_contracts`` never sets
one); the GA's tournament takes the best of its picks; a failure is never the best,
whatever numbers its record carries; a record resumed from the log is not also counted
as reused from the database.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, example, given, settings, strategies as st

from search.measure.base import MeasureRecord, Status
from search.grid_space import GridSpace
from search.strategies import make_options, make_strategy
from search.strategies.ga import GAOptions, GeneticStrategy
from search.tune_ledger import Ledger

grids = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(
    lambda dims: GridSpace({f"p{k}": list(range(d)) for k, d in enumerate(dims)}))


def _cost(config: dict) -> MeasureRecord:
    v = list(config.values())
    if sum(v) % 5 == 4:
        return MeasureRecord.failed(config, Status.RUNTIME_ERROR, "synthetic failure")
    return MeasureRecord.ok(config, time_ms=1.0 + sum((x - 1) ** 2 for x in v))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(space=grids, seed=st.integers(0, 2**32 - 1), batch=st.integers(1, 5),
       endgame=st.sampled_from([0.3, 0.6, 0.9]), spread=st.integers(1, 2))
@example(space=GridSpace({"p0": [0, 1], "p1": [0, 1]}), seed=0, batch=2, endgame=0.3, spread=2)
def test_explorer_endgame_asks_are_distinct_valid_and_new(space, seed, batch, endgame, spread):
    options = make_options("explorer", {"init_random": 2, "batch_size": batch,
                                        "endgame": endgame, "endgame_spread": spread,
                                        "endgame_elite": 2,
                                        "optimizer": {"n_walkers": 4, "max_steps": 4},
                                        "model": {"n_estimators": 5}})
    strat = make_strategy("explorer", space, options, np.random.default_rng(seed))
    strat.set_horizon(len(space))
    asked: set[int] = set()
    while len(asked) < len(space):
        n = min(batch, len(space) - len(asked))
        got = [int(i) for i in strat.ask(n)]
        assert len(got) <= n and len(set(got)) == len(got)
        assert all(0 <= i < len(space) for i in got) and not set(got) & asked
        if not got:
            break
        asked.update(got)
        strat.tell(got, [_cost(space.get(i)) for i in got])


def test_ga_tournament_over_the_whole_population_takes_the_best():
    space = GridSpace({"a": list(range(10))})
    ga = GeneticStrategy(space, GAOptions(population=4, tournament=4), np.random.default_rng(0))
    pop = [7, 3, 9, 1]  # best first
    assert {ga._select(pop) for _ in range(20)} == {7}


def test_a_failure_is_never_cheaper_than_infinity_whatever_it_carries():
    rec = MeasureRecord({"a": 1}, Status.COMPILE_ERROR, surrogate_cost=2.0)
    assert rec.cost == math.inf
    led = Ledger()
    led.add_trial(1, {"a": 1}, rec)
    assert led.best is None


def test_a_resumed_record_is_not_also_reused():
    rec = MeasureRecord.ok({"a": 4}, time_ms=3.0)
    led = Ledger({4: rec}, reusable={4: rec, 7: MeasureRecord.ok({"a": 7}, time_ms=1.0)})
    led.add_trial(4, {"a": 4}, rec)
    assert led.trials[0].resumed and not led.trials[0].reused
    assert led.take([4, 7], budget=5) == ([7], [])


def test_the_model_is_trained_once_min_ok_measurements_succeeded():
    from search.cost_model import XGBOptions
    from search.strategies.base import Observations
    from search.strategies.model_based import train_model
    space = GridSpace({"a": list(range(6))})
    seen = Observations()
    seen.add([0, 3], [MeasureRecord.ok({"a": 0}, time_ms=2.0), MeasureRecord.ok({"a": 3}, time_ms=1.0)])
    assert train_model(space, seen, XGBOptions(n_estimators=3), 0, min_ok=2) is not None
    seen.add([1], [MeasureRecord.failed({"a": 1}, Status.RUNTIME_ERROR, "no")])
    assert train_model(space, seen, XGBOptions(n_estimators=3), 0, min_ok=3) is None


def test_an_emulator_build_failure_is_a_compile_error_record(monkeypatch):
    import kernels.verify
    from iobound.layer import ConvLayer
    from kernels.emulator import EmulatorBuildError
    from search.measure.emulate import EmulateMeasurer

    def broken(*args, **kwargs):
        raise EmulatorBuildError("g++ failed", "error: something")

    monkeypatch.setattr(kernels.verify, "emulate_and_check", broken)
    layer = ConvLayer(n=1, c_in=3, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    (rec,) = EmulateMeasurer(layer).measure([dict(x=3, y=3, z=2, alpha=2, tx=3, ty=1, tz=2)])
    assert rec.status is Status.COMPILE_ERROR and rec.cost == math.inf


@settings(max_examples=60, deadline=None)
@given(size=st.integers(1, 8), data=st.data())
def test_propose_tops_up_a_short_search_with_distinct_new_indices(size, data):
    """propose() returns min(n, what is left) distinct unexcluded indices even when the
    optimizer's own search comes back short."""
    from search.optimizers.base import ModelOptimizer
    from search.optimizers.walk import WalkOptions

    exclude = set(data.draw(st.lists(st.integers(0, size - 1), max_size=size)))
    left = [i for i in range(size) if i not in exclude]
    found = data.draw(st.lists(st.sampled_from(left), unique=True) if left else st.just([]))
    n = data.draw(st.integers(1, size + 2))

    class Short(ModelOptimizer):
        Options = WalkOptions

        def search(self, model, space, n, exclude, rng, best=()):
            return list(found)

    space = GridSpace({"a": list(range(size))})
    got = Short().propose(None, space, n, exclude, np.random.default_rng(0))
    assert len(got) == len(set(got)) == min(n, len(left))
    assert not set(got) & exclude and all(0 <= i < size for i in got)


class _Bowl:
    """A perfect model of a bowl around (12, 12)."""

    def predict(self, X):
        return (X[:, 0] - 12) ** 2 + (X[:, 1] - 12) ** 2


def _walk(patience):
    from search.optimizers.walk import WalkOptimizer, WalkOptions
    return WalkOptimizer(WalkOptions(n_walkers=1, best_starts=1.0, neighbours_per_step=28,
                                     patience=patience, max_steps=60, threshold=-1.0))


def test_a_walker_descends_to_the_optimum_of_a_perfect_model():
    space = GridSpace({"x": list(range(15)), "y": list(range(15))})
    start = space.index({"x": 0, "y": 0})
    got = _walk(3).search(_Bowl(), space, 1, set(), np.random.default_rng(0), best=[start])
    assert space.get(got[0]) == {"x": 12, "y": 12}


def test_a_walker_that_cannot_improve_stops_after_patience_steps():
    space = GridSpace({"x": list(range(15)), "y": list(range(15))})
    top = space.index({"x": 12, "y": 12})
    for patience in (1, 3):
        opt = _walk(patience)
        opt.search(_Bowl(), space, 1, set(), np.random.default_rng(0), best=[top])
        assert opt.last_steps == patience


def test_a_diverse_batch_topped_up_repeats_no_configuration():
    from search.optimizers.walk import WalkOptimizer
    line = GridSpace({"a": list(range(5))})  # every configuration a neighbour of every other
    got = WalkOptimizer._diverse(line, [3, 1, 4, 0, 2], 3)
    assert got == [3, 1, 4]


def test_observations_best_leaves_out_failures():
    from search.strategies.base import Observations
    seen = Observations()
    seen.add([0, 1, 2], [MeasureRecord.failed({"a": 0}, Status.TIMEOUT, "slow"),
                         MeasureRecord.ok({"a": 1}, time_ms=2.0), MeasureRecord.ok({"a": 2}, time_ms=1.0)])
    assert seen.best() == [2, 1]


def test_targets_of_a_non_positive_cost_are_finite():
    from search.cost_model import make_targets
    y = make_targets(np.array([0.0, 2.0, np.inf]))
    assert np.isfinite(y).all() and y[0] == y[2] > y[1]
