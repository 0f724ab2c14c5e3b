"""The model optimizers' documented rules, on hand-made cost models over a line of 40 values
whose outcome follows from the rule by hand (no trained model): where walkers start, when
they stop (threshold, patience, max_steps), how ties and diverse batches are ordered, how
annealing cools and stops early, and what the neighbour and score memos remember."""

from __future__ import annotations

import numpy as np
import pytest

from search.optimizers import AnnealOptimizer, AnnealOptions, WalkOptimizer, WalkOptions, make_optimizer
from search.optimizers.base import NeighbourMemo, PredictionMemo, score_memo
from search.grid_space import GridSpace

LINE = GridSpace({"a": list(range(40))})


class Table:
    """A cost model: ``f(first knob)``, each call's row count kept in ``calls``."""

    def __init__(self, f):
        self.f, self.calls = f, []

    def predict(self, X):
        self.calls.append(len(X))
        return np.array([self.f(a) for a in X[:, 0]], dtype=float)


def _walk(**kw):
    return WalkOptimizer(WalkOptions(**kw))


@pytest.mark.parametrize("options", [WalkOptions(n_walkers=4), AnnealOptions(n_chains=4, n_iter=5)])
def test_nothing_to_propose_is_an_empty_batch(options):
    model = Table(lambda a: a)
    rng = np.random.default_rng(0)
    assert make_optimizer(options).propose(model, LINE, 0, set(), rng) == []
    assert make_optimizer(options).propose(model, LINE, 3, set(range(40)), rng) == []


def test_default_threshold_is_the_prediction_of_the_best_measured():
    """best = [9, 0]: the threshold is f(9) = 4; a walker starting at 9 is not below it,
    walks to 8 (3 < 4) and stops there after one step."""
    opt = _walk(n_walkers=1, best_starts=1.0, neighbours_per_step=2)
    got = opt.propose(Table(lambda a: abs(a - 5)), LINE, 1, {0, 9}, np.random.default_rng(0),
                      best=[9, 0])
    assert got == [8] and opt.last_steps == 1


def test_a_walker_stops_below_the_threshold_not_at_it():
    """threshold 4 from a = 0 (cost 5): a = 1 costs 4 (not below), a = 2 costs 3: two steps."""
    opt = _walk(n_walkers=1, best_starts=1.0, neighbours_per_step=2, threshold=4.0)
    got = opt.propose(Table(lambda a: abs(a - 5)), LINE, 1, {0}, np.random.default_rng(0), best=[0])
    assert got == [2] and opt.last_steps == 2


def test_on_a_flat_model_walkers_stop_after_patience_steps():
    """Equal predictions are no improvement: no move, so every walker stops at ``patience``."""
    opt = _walk(n_walkers=4, patience=3, max_steps=50)
    opt.propose(Table(lambda a: 0.0), LINE, 2, set(), np.random.default_rng(1))
    assert opt.last_steps == 3


def test_on_a_flat_model_the_batch_is_the_walkers_start_points_best_first():
    """best_starts 1: the walkers start at best[:3]; on equal predictions they never move and
    their end points come first."""
    best = [10, 20, 25, 3, 7]
    got = _walk(n_walkers=3, best_starts=1.0, patience=2).propose(
        Table(lambda a: 0.0), LINE, 3, set(), np.random.default_rng(2), best=best)
    assert set(got) == {10, 20, 25}


def test_at_least_n_walkers_and_no_step_when_max_steps_is_zero():
    model = Table(lambda a: a)
    opt = _walk(n_walkers=2, max_steps=0)
    got = opt.propose(model, LINE, 7, set(), np.random.default_rng(3))
    assert model.calls == [7] and opt.last_steps == 0 and len(set(got)) == 7


def test_patience_counts_consecutive_steps_without_improvement():
    """One walker climbing f = -a from 0, one random neighbour a step (up: a move; down: no
    improvement). Stopping after 3 failures in a row gives about 6.3 moves on average
    (expected successes before the first run of 3 failures); after any 3 failures, 3."""
    ends = []
    for seed in range(40):
        got = _walk(n_walkers=1, best_starts=1.0, neighbours_per_step=1, patience=3,
                    max_steps=500, threshold=-1e9).propose(
            Table(lambda a: -a), LINE, 1, {0}, np.random.default_rng(seed), best=[0])
        ends.append(got[0])
    assert np.mean(ends) > 4.5


def test_a_diverse_batch_holds_no_two_neighbours_and_starts_with_the_best():
    grid = GridSpace({"a": list(range(12)), "b": list(range(12))})

    class Bowl:
        def predict(self, X):
            return (X[:, 0] - 3) ** 2 + (X[:, 1] - 8) ** 2

    got = _walk(diverse=True).propose(Bowl(), grid, 4, set(), np.random.default_rng(0))
    assert grid.get(got[0]) == {"a": 3, "b": 8}
    assert all(j not in grid.neighbours(i) for i in got for j in got)


def test_annealing_chains_end_near_the_optimum_as_the_temperature_falls():
    """T falls linearly from 5 to 0: the last steps are greedy, so the chains end at or next
    to a = 20 of f = |a - 20|; at T = 5 throughout the chains would stay spread (their
    stationary law ~ exp(-|a - 20| / 5) is about 5 away on average)."""
    opt = AnnealOptimizer(AnnealOptions(n_chains=32, n_iter=300, temp=(5.0, 0.0), early_stop=300))
    opt.propose(Table(lambda a: abs(a - 20)), LINE, 1, set(), np.random.default_rng(0))
    assert np.mean(np.abs(opt.points - 20)) < 1


def test_annealing_stops_early_when_the_best_set_stops_changing():
    """Flat model: the best set is full after the start and never changes, so the search
    takes exactly ``early_stop`` steps (one model call each, after the start's)."""
    model = Table(lambda a: 0.0)
    AnnealOptimizer(AnnealOptions(n_chains=4, n_iter=100, early_stop=5)).propose(
        model, LINE, 2, set(), np.random.default_rng(0))
    assert len(model.calls) == 1 + 5


def test_annealing_goes_on_while_the_best_set_improves():
    """A greedy chain climbing f = -a improves its best at each step up: runs go past
    ``early_stop`` steps (each seed ends after 3 steps without a new best)."""
    longest = 0
    for seed in range(10):
        model = Table(lambda a: -a)
        AnnealOptimizer(AnnealOptions(n_chains=1, n_iter=100, temp=(0.0, 0.0), early_stop=3)).propose(
            model, LINE, 1, set(), np.random.default_rng(seed))
        longest = max(longest, len(model.calls) - 1)
    assert longest > 3


def test_annealing_can_propose_index_zero_and_its_start_points():
    """The optimum at index 0 is found; the chains' start points are candidates too."""
    got = AnnealOptimizer(AnnealOptions(n_chains=8, n_iter=100)).propose(
        Table(lambda a: a), LINE, 1, set(), np.random.default_rng(0))
    assert got == [0]
    for seed in range(4):
        opt = AnnealOptimizer(AnnealOptions(n_chains=1, n_iter=1))
        rng = np.random.default_rng(seed)
        start = LINE.sample(1, np.random.default_rng(seed))[0]  # the chain's first draw
        got = opt.propose(Table(lambda a: 0.0), LINE, 2, set(), rng)
        assert set(got) == {start, int(opt.points[0])}


def test_neighbour_memo_is_per_space_and_bounded():
    nb = NeighbourMemo(limit=3)
    grid = GridSpace({"a": [1, 2, 3], "b": [0, 1]})
    assert nb(LINE, 0) == [1] and nb(grid, 0) == grid.neighbours(0)
    for i in range(10):
        assert nb(LINE, i) == LINE.neighbours(i)
        assert len(nb.memo) <= 3


def test_score_memo_predicts_only_what_it_does_not_remember():
    model = Table(lambda a: 2.0 * a)
    memo = {0: 99.0}
    assert score_memo(model, LINE, np.array([0, 3, 3]), memo).tolist() == [99.0, 6.0, 6.0]
    assert model.calls == [1] and memo == {0: 99.0, 3: 6.0}


class Fitted(Table):
    """A :class:`Table` that counts its fits, as the XGBoost model does."""

    fit_count = 1


def test_walks_of_one_fitted_model_predict_each_configuration_once_and_choose_as_before():
    """Three searches with one fitted model predict no configuration twice and propose
    what a fresh optimizer (which remembers nothing) proposes with the same random
    stream; a refit (``fit_count``) or another space is predicted afresh, and a model
    that does not count its fits is never remembered."""
    f = lambda a: abs(a - 17) + 0.1 * (a % 3)
    model, opt = Fitted(f), _walk(n_walkers=8)
    rngs = [np.random.default_rng(5), np.random.default_rng(5)]
    for exclude in (set(), {17}, {16, 17, 18}):
        fresh = _walk(n_walkers=8).propose(Table(f), LINE, 3, exclude, rngs[0], best=[])
        assert opt.propose(model, LINE, 3, exclude, rngs[1], best=[]) == fresh
    assert sum(model.calls) == len(opt.predictions(model, LINE)) <= len(LINE)
    before = sum(model.calls)
    model.fit_count = 2
    opt.propose(model, LINE, 3, set(), np.random.default_rng(0))
    assert sum(model.calls) > before
    assert PredictionMemo()(Table(f), LINE) is None


def test_a_prediction_memo_past_its_limit_starts_afresh():
    memo, model = PredictionMemo(limit=2), Fitted(lambda a: a)
    got = memo(model, LINE)
    got.update({0: 0.0, 1: 1.0, 2: 2.0})
    assert memo(model, LINE) == {}
    memo(model, LINE)[5] = 5.0
    assert memo(model, GridSpace({"a": [1]})) == {}
