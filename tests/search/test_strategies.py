"""Contract tests looped over every registered strategy."""

import numpy as np
import pytest

from search.strategies import make_options, make_strategy, strategy_names
from search.tuner import tune

FAST = {"explorer": {"optimizer": {"n_walkers": 16, "max_steps": 15}, "model": {"n_estimators": 40}},
        "sa": {"plan_size": 16, "init_random": 16, "optimizer": {"n_iter": 60, "n_chains": 32},
               "model": {"n_estimators": 40}}}


@pytest.mark.parametrize("name", strategy_names())
def test_asks_are_distinct_valid_and_new(name, synth_space, synth_measurer):
    """Every ask gives distinct in-range indices never asked before."""
    s = make_strategy(name, synth_space, FAST.get(name), np.random.default_rng(0))
    asked = set()
    for _ in range(6):
        got = s.ask(8)
        assert len(got) == len(set(got)) and not set(got) & asked
        assert all(0 <= i < len(synth_space) for i in got)
        asked.update(got)
        s.tell(got, synth_measurer.measure([synth_space.get(i) for i in got]))


@pytest.mark.parametrize("name", strategy_names())
def test_whole_space_budget_finds_optimum(name, synth_space, synth_measurer, synth_optimum):
    """Given the whole space as budget, every strategy measures everything and finds the optimum."""
    res = tune(synth_space, synth_measurer, name, budget=len(synth_space), seed=1,
               options=FAST.get(name))
    assert res.evaluations == len(synth_space)
    assert len({t.index for t in res.trials}) == len(synth_space)
    assert res.best.record.time_ms == synth_optimum


@pytest.mark.parametrize("name", strategy_names())
def test_same_seed_same_run(name, synth_space, synth_measurer):
    """A strategy is reproducible for a seed."""
    a = tune(synth_space, synth_measurer, name, budget=30, seed=4, options=FAST.get(name))
    b = tune(synth_space, synth_measurer, name, budget=30, seed=4, options=FAST.get(name))
    assert [t.index for t in a.trials] == [t.index for t in b.trials]


def test_unknown_strategy_lists_allowed():
    """The registry rejects unknown names, listing the allowed ones."""
    with pytest.raises(ValueError, match="explorer, ga, gga, grid, random, sa"):
        make_options("tabu")


def test_unknown_nested_option_rejected():
    """Nested option dicts are checked too."""
    with pytest.raises(ValueError, match="n_walkers"):
        make_options("explorer", {"optimizer": {"walkers": 3}})


def test_model_guided_beats_random_on_average(synth_space, synth_measurer, synth_optimum):
    """Over seeds, the explorer's best at budget 24 is at least as good as random's."""
    def mean_best(name):
        return np.mean([tune(synth_space, synth_measurer, name, budget=24, seed=s,
                             options=FAST.get(name)).best.record.time_ms for s in range(6)])
    assert mean_best("explorer") <= mean_best("random")


@pytest.mark.parametrize("optimizer", [{"n_walkers": 8, "max_steps": 10}, None])
@pytest.mark.parametrize("plan_size", [None, 12])
def test_model_based_takes_either_optimizer_and_cadence(optimizer, plan_size, synth_space,
                                                        synth_measurer):
    """The one model-based strategy runs with walks or annealing, every round or on a plan."""
    from search.optimizers import AnnealOptions, WalkOptions
    from search.strategies.model_based import ModelBasedOptions, ModelBasedStrategy

    opt = WalkOptions(**optimizer) if optimizer else AnnealOptions(n_chains=8, n_iter=20)
    options = ModelBasedOptions(plan_size=plan_size, optimizer=opt, batch_size=6)
    s = ModelBasedStrategy(synth_space, options, np.random.default_rng(0))
    res = tune(synth_space, synth_measurer, s, budget=40)
    assert res.evaluations == 40 and len({t.index for t in res.trials}) == 40
    assert s.stats()["fits"] == (3 if plan_size else 6)  # at 12, 24, 36 told; or rounds 2..7 of 7
