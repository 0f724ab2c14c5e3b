"""The model-based strategy's bookkeeping (:mod:`search.strategies.model_based`): when it
fits, what it fits on, when the endgame starts, which spaces it learns on.

References: the module doc's rules, counted on small grids: the first model comes with
the first ask after ``init_random`` configurations were asked; on the plan cadence a fit
follows every further ``plan_size`` measurements told (counted in whole plans, however
many arrive at once); the cost model fits the strategy's own observations plus the hints
no better than its best *finite* cost (none while it has no finite cost); the endgame
takes the batches that reach past ``(1 - endgame) * horizon`` configurations, on the
every-round cadence only; ``learn_on`` takes only a space of the same configurations.
"""

from __future__ import annotations

import numpy as np
import pytest

from iobound.errors import InvalidInputError
from search.measure.base import MeasureRecord
from search.grid_space import GridSpace
from search.strategies.model_based import ModelBasedOptions, ModelBasedStrategy

GRID = GridSpace({"a": list(range(6)), "b": list(range(5)), "c": list(range(4))})


def _time(i: int) -> float:
    c = GRID.get(i)
    return 1.0 + abs(c["a"] - 4) + 0.5 * abs(c["b"] - 1) + 0.25 * c["c"]


def _ok(indices):
    return [MeasureRecord.ok(GRID.get(i), time_ms=_time(i)) for i in indices]


def _failed(indices):
    return [MeasureRecord.failed(GRID.get(i), "runtime_error", "boom") for i in indices]


def _strategy(seed=0, **options):
    return ModelBasedStrategy(GRID, ModelBasedOptions(**options), rng=np.random.default_rng(seed))


@pytest.mark.parametrize("init_random", [2, 4, 7])
def test_the_first_model_comes_once_init_random_configurations_were_asked(init_random):
    s = _strategy(init_random=init_random, batch_size=init_random)
    got = s.ask(init_random)
    s.tell(got, _ok(got))
    assert s.stats()["fits"] == 0
    s.ask(3)
    assert s.stats()["fits"] == 1


def test_the_plan_cadence_fits_once_per_plan_of_measurements_told():
    """plan_size 4: 8 told at once are two plans, so the next fit waits for 12 told."""
    s = _strategy(plan_size=4, init_random=4, epsilon=0.0)
    fits = []
    for told in (8, 2, 2, 4, 3, 1):
        got = s.ask(told)
        s.tell(got, _ok(got))
        s.ask(0)  # an empty ask fits nothing: the count is per measurement, not per ask
        got = s.ask(1)
        s.tell(got, _ok(got))
        fits.append(s.stats()["fits"])
    # told at each ask: 0, 8 (fit: 2 plans) | 9, 11 | 12 (fit), 14 | 15, 19 (fit: 4 plans)
    # | 20 (fit), 23 | 24 (fit), 25
    assert fits == [1, 1, 2, 3, 4, 5]


def test_without_a_finite_cost_of_its_own_the_model_learns_no_hint():
    s = _strategy()
    s.tell([0, 1], _failed([0, 1]))
    s.hint([5, 6, 7], _failed([5]) + _ok([6, 7]))
    assert set(s.training_set().cost) == {0, 1}
    s.tell([2], _ok([2]))
    floor = _time(2)
    want = {0, 1, 2} | {i for i in (5, 6, 7) if (_time(i) if i != 5 else np.inf) >= floor}
    assert set(s.training_set().cost) == want


@pytest.mark.parametrize("horizon, endgame, batch", [(20, 0.25, 4), (40, 0.15, 4), (30, 0.5, 3)])
def test_the_endgame_takes_the_batches_that_reach_past_its_threshold(horizon, endgame, batch):
    s = _strategy(endgame=endgame, batch_size=batch)
    s.set_horizon(horizon)
    asked = 0
    while asked + batch <= horizon:
        swept_before = s.stats()["swept"]
        got = s.ask(batch)
        s.tell(got, _ok(got))
        in_endgame = asked + batch > (1 - endgame) * horizon
        assert (s.stats()["swept"] > swept_before) == in_endgame, asked
        asked += batch


def test_the_plan_cadence_has_no_endgame():
    s = _strategy(plan_size=4, init_random=4, endgame=0.5)
    s.set_horizon(24)
    for _ in range(6):
        got = s.ask(4)
        s.tell(got, _ok(got))
    assert s.stats()["swept"] == 0


def test_learn_on_refuses_a_space_of_other_parameters_of_the_same_size():
    s = _strategy()
    renamed = GridSpace({"x": list(range(6)), "b": list(range(5)), "c": list(range(4))})
    assert len(renamed) == len(GRID)
    with pytest.raises(InvalidInputError, match="same configurations"):
        s.learn_on(renamed)
    with pytest.raises(InvalidInputError, match="same configurations"):
        s.learn_on(GridSpace({"a": list(range(6)), "b": list(range(5))}))
    same = GridSpace({"a": list(range(6)), "b": list(range(5)), "c": list(range(4))})
    s.learn_on(same)
    assert s.space is same


class Proposals:
    """A stand-in optimizer: proposes the lowest unexcluded indices, recording each size
    it is asked for."""

    def __init__(self):
        self.sizes = []

    def propose(self, model, space, n, exclude, rng, best=()):
        self.sizes.append(n)
        return [i for i in range(len(space)) if i not in exclude][:n]


@pytest.mark.parametrize("epsilon, want", [(0.0, [4, 4]), (1.0, [0, 0])])
def test_the_random_share_of_a_round_is_left_out_of_the_optimizers_batch(epsilon, want):
    """Every round: Binomial(n, epsilon) of the n are random, the optimizer proposes the rest."""
    s = _strategy(epsilon=epsilon, init_random=4, endgame=0.0)
    s.optimizer = spy = Proposals()
    for _ in range(3):
        got = s.ask(4)
        s.tell(got, _ok(got))
    assert spy.sizes == want


def test_a_batch_of_one_is_the_models_whatever_epsilon():
    """A one-configuration round (a sequential run, or one worker) is always the model's
    pick: a random share of one would make every such round a coin toss."""
    s = _strategy(epsilon=1.0, init_random=4, endgame=0.0)
    s.optimizer = spy = Proposals()
    got = s.ask(4)
    s.tell(got, _ok(got))
    for _ in range(3):
        got = s.ask(1)
        s.tell(got, _ok(got))
    assert spy.sizes == [1, 1, 1]


def test_the_last_epsilon_share_of_a_plan_is_left_to_random_picks():
    """plan_size 8, epsilon 0.25: the plan keeps its first 6 proposals, then random ones."""
    s = _strategy(plan_size=8, init_random=8, epsilon=0.25)
    first = s.ask(8)
    s.tell(first, _ok(first))
    s.optimizer = Proposals()
    plan = [i for i in range(len(GRID)) if i not in first][:8]
    got = s.ask(8)
    assert got[:6] == plan[:6] and not set(got[6:]) & set(plan[6:])


def test_a_round_counts_as_an_improvement_by_its_best_cost():
    s = _strategy()
    rounds = []
    for batch in ([0, 1], [2, 3], [4, 5]):
        times = {0: 5.0, 1: 9.0, 2: 4.0, 3: 20.0, 4: 6.0, 5: 4.5}
        s.tell(batch, [MeasureRecord.ok(GRID.get(i), time_ms=times[i]) for i in batch])
        rounds.append(s.stalled.rounds)
    assert rounds == [0, 0, 1]


class FromTheTop(Proposals):
    """Proposes the highest unexcluded indices."""

    def propose(self, model, space, n, exclude, rng, best=()):
        self.sizes.append(n)
        return [i for i in reversed(range(len(space))) if i not in exclude][:n]


LINE = GridSpace({"a": list(range(40))})


def _endgame_on_a_line(optimizer, check):
    """Batches of 4 on a line whose optimum is 10, horizon 24, endgame 0.5: ``check(got,
    asked, best)`` for each endgame batch (the best measured so far nearest 10)."""
    s = ModelBasedStrategy(LINE, ModelBasedOptions(endgame=0.5, init_random=4, epsilon=0.0),
                           rng=np.random.default_rng(1))
    s.optimizer = optimizer
    s.set_horizon(24)
    asked = []
    while len(asked) < 24:
        endgame = len(asked) + 4 > 12
        best = min(asked, key=lambda i: abs(i - 10), default=None)
        got = s.ask(4)
        if endgame:
            check(got, asked, best)
        asked += got
        s.tell(got, [MeasureRecord.ok(LINE.get(i), time_ms=1.0 + abs(i - 10)) for i in got])
    return s


def test_an_endgame_batch_is_the_sweep_then_the_optimizers_picks():
    """On a line the spread elites are the best alone (every two points differ in one
    parameter), so the sweep has at most 2 unmeasured neighbours for a batch of 4: the
    optimizer proposes the rest, and only the swept ones count as swept."""
    swept = []

    def check(got, asked, best):
        near = [j for j in LINE.neighbours(best) if j not in asked]
        m = len(near)
        top = [i for i in reversed(range(len(LINE))) if i not in asked][:4 - m]
        assert set(got[:m]) == set(near) and got[m:] == top
        swept.append(m)
    s = _endgame_on_a_line(FromTheTop(), check)
    assert sum(swept) > 0 and s.stats()["swept"] == sum(swept)


class Nearest(Proposals):
    """Proposes the unexcluded indices nearest the best measured one (as a walk from it
    would): the very neighbours an endgame sweep takes, unless told to exclude them."""

    def propose(self, model, space, n, exclude, rng, best=()):
        self.sizes.append(n)
        return sorted((i for i in range(len(space)) if i not in exclude),
                      key=lambda i: (abs(i - best[0]), i))[:n]


def test_a_short_sweep_is_completed_by_other_configurations_than_its_own():
    """When the sweep has fewer candidates than the batch, the optimizer is told to avoid
    them too: the batch is the sweep's neighbours and the optimizer's next-nearest ones,
    not the same neighbours twice with random configurations filling the gap."""
    short = []

    def check(got, asked, best):
        near = [j for j in LINE.neighbours(best) if j not in asked]
        rest = sorted((i for i in range(len(LINE)) if i not in asked and i not in near),
                      key=lambda i: (abs(i - best), i))[:4 - len(near)]
        assert set(got) == set(near) | set(rest) and len(got) == 4
        short.append(len(near) < 4)
    _endgame_on_a_line(Nearest(), check)
    assert any(short)


class Recording(Proposals):
    """Also records the ``best`` it is given."""

    def __init__(self):
        super().__init__()
        self.bests = []

    def propose(self, model, space, n, exclude, rng, best=()):
        self.bests.append(list(best))
        return super().propose(model, space, n, exclude, rng, best)


def test_the_optimizer_starts_from_the_best_measured_and_each_fit_has_its_own_seed(monkeypatch):
    """The walks start from the best measured configurations (``best``); every refit seeds
    the model anew, so that a subsampling model does not draw the same rows each time."""
    import search.strategies.model_refit as mb
    seeds = []
    fit = mb.train_model

    def spy(space, seen, options, seed, min_ok=2):
        seeds.append(seed)
        return fit(space, seen, options, seed, min_ok)
    monkeypatch.setattr(mb, "train_model", spy)
    s = _strategy(init_random=4, endgame=0.0)
    s.optimizer = spy_opt = Recording()
    wanted = []
    for _ in range(4):
        wanted.append(s.seen.best())
        got = s.ask(4)
        s.tell(got, _ok(got))
    assert spy_opt.bests == wanted[1:] and all(spy_opt.bests)
    assert len(seeds) == 3 and len(set(seeds)) == 3


def test_the_stall_share_is_taken_out_of_the_optimizers_batch():
    """On a flat landscape every round stalls: the stall source fills part of a batch and
    the optimizer is asked only for the rest (epsilon 0: no random share); the source may
    have fewer candidates than its share."""
    from search.strategies.stall import StallOptions
    s = _strategy(init_random=4, epsilon=0.0, endgame=0.0,
                  stall=StallOptions(rate=0.5, cap=0.5, source="sweep"))
    s.optimizer = spy = Proposals()
    for _ in range(8):
        got = s.ask(4)
        s.tell(got, [MeasureRecord.ok(GRID.get(i), time_ms=1.0) for i in got])
    assert min(spy.sizes) < 4 and s.stats()["explored"] > 0
    assert 0 < s.stats()["explored"] <= sum(4 - n for n in spy.sizes)


class ModelSpy(Proposals):
    """Records the model each proposal came from."""

    def __init__(self):
        super().__init__()
        self.models = []

    def propose(self, model, space, n, exclude, rng, best=()):
        self.models.append(model)
        return super().propose(model, space, n, exclude, rng, best)


@pytest.mark.parametrize("until, growth", [(8, 0.5), (12, 0.25), (0, 1.0)])
def test_past_refit_all_until_a_round_refits_only_once_the_training_set_grew(until, growth):
    """Batches of 4 on GRID (120): every round refits while the last fit learnt from at
    most ``until``; after, only once the training set is ``1 + growth`` times the last
    fit's; every round between proposes from the last model all the same."""
    s = _strategy(init_random=4, epsilon=0.0, endgame=0.0, refit_all_until=until,
                  refit_growth=growth)
    s.optimizer = spy = ModelSpy()
    fitted_at, want = None, []
    for _ in range(20):
        told = len(s.seen)
        if told >= 4 and (fitted_at is None or fitted_at <= until
                          or told >= fitted_at * (1 + growth)):
            fitted_at = told
        if told >= 4:
            want.append(fitted_at)
        got = s.ask(4)
        s.tell(got, _ok(got))
    assert s.stats()["fits"] == len(set(want))
    # a proposal per round after the first; the same model object while no refit
    changes = [i for i in range(1, len(spy.models)) if spy.models[i] is not spy.models[i - 1]]
    assert len(spy.models) == len(want)
    assert changes == [i for i in range(1, len(want)) if want[i] != want[i - 1]]


def test_up_to_refit_all_until_the_run_is_the_one_that_refits_every_round():
    """The cadence changes nothing for short runs: the asks of a run on GRID with
    refit_all_until 64 are those of a run that refits every round up to the round after
    its last fit past 64 (at 68 told); the rounds after it fit less."""
    def run(**options):
        s = _strategy(seed=3, **options)
        asked = []
        while len(asked) < 84:
            got = s.ask(4)
            s.tell(got, _ok(got))
            asked += got
        return asked, s.stats()["fits"]
    every, every_fits = run(refit_growth=0.0)
    lazy, lazy_fits = run(refit_all_until=64, refit_growth=0.5)
    assert lazy[:72] == every[:72]
    assert (lazy_fits, every_fits) == (17, 20)


class VersionedGrid(GridSpace):
    """GRID whose features change when ``features_version`` moves (as gated rank columns do)."""

    features_version = 0


def test_a_change_of_the_spaces_features_refits_at_once():
    """Past refit_all_until, rounds between refits reuse the last model, unless the
    space's features changed since it was fitted: a model of the old columns is refitted."""
    space = VersionedGrid({"a": list(range(6)), "b": list(range(5)), "c": list(range(4))})
    s = ModelBasedStrategy(space, ModelBasedOptions(init_random=4, epsilon=0.0, endgame=0.0,
                                                    refit_all_until=0, refit_growth=1.0),
                           rng=np.random.default_rng(0))
    for _ in range(3):  # fits on 4 and on 8 told; 12 told now
        got = s.ask(4)
        s.tell(got, _ok(got))
    assert s.stats()["fits"] == 2
    s.ask(1)
    assert s.stats()["fits"] == 2  # 12 told, fitted on 8: not doubled, no refit
    space.features_version += 1
    s.ask(1)
    assert s.stats()["fits"] == 3
