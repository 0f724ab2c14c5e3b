"""Tests of transfer from tuning history: the prior, the history-guided wrapper, the session API."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from search.db import Measurement, TuningDB, Workload
from search.measure.base import MeasureRecord, Measurer
from search.space import GridSpace
from search.strategies import make_strategy
from search.strategies.model_based import XGBOptions, train_model
from search.transfer import (GuidedOptions, HistoryGuided, HistoryPrior, PriorFeatureSpace,
                             transfer_options, with_history)
from search.transfer.prior import source_groups
from search.tuner import tune

SPACE = GridSpace({"a": list(range(8)), "b": list(range(6)), "c": [1, 2, 4]})


def _bowl(at):
    return lambda cfg: 1.0 + sum((cfg[k] - v) ** 2 for k, v in zip("abc", at))


def _hist(device: str, cost, problem=(64, 64), keep=None) -> list[Measurement]:
    w = Workload("k", list(problem), SPACE.params)
    idx = range(len(SPACE)) if keep is None else keep
    return [Measurement(w, device, "t", MeasureRecord.ok(SPACE.get(i), time_ms=cost(SPACE.get(i))))
            for i in idx]


class Bowl(Measurer):
    """A measurer over SPACE with its optimum at ``at`` (and a local one, 4x slower, at
    ``local`` when given); counts what it measured."""

    name = "bowl"

    def __init__(self, at, local=None):
        glob = _bowl(at)
        self.cost = glob if local is None else (lambda c: min(glob(c), 4.0 * _bowl(local)(c)))
        self.count = 0

    def measure(self, configs):
        self.count += len(configs)
        return [MeasureRecord.ok(c, time_ms=self.cost(c)) for c in configs]


def test_source_groups_normalise_weight_and_filter():
    """Times are relative to each source's best; far problems are dropped, near ones down-weighted."""
    hist = (_hist("fast", _bowl((1, 1, 1))) + _hist("far", _bowl((1, 1, 1)), problem=(7, 9))
            + _hist("near", _bowl((1, 1, 1)), problem=(64, 48)))
    groups = source_groups(SPACE, hist, target_problem=[64, 64])
    assert [g.device for g in groups] == ["fast", "near"]
    assert groups[0].weight == 1.0 and 0.5 ** 2 <= groups[1].weight < 1.0
    assert all(g.rel_time[0] == 1.0 and np.all(np.diff(g.rel_time) >= 0) for g in groups)


def test_prior_picks_the_consensus_first_then_the_model():
    """Picks follow the mean relative throughput over the sources, then the history model."""
    hist = _hist("gpu0", _bowl((2, 3, 2))) + _hist("gpu1", _bowl((6, 1, 4)))
    prior = HistoryPrior.fit(SPACE, hist, seed=0)
    mean_rel = [np.mean([1.0 / _bowl(at)(SPACE.get(i)) for at in ((2, 3, 2), (6, 1, 4))])
                for i in range(len(SPACE))]
    picker = prior.picker()
    first = picker.picks(2, asked=set())
    assert first == [int(i) for i in np.argsort(-np.array(mean_rel), kind="stable")[:2]]
    more = picker.picks(10, asked=set(first))
    assert prior.picker().picks(2, asked=set()) == first  # each run its own cursor
    assert len(set(more)) == 10 and not set(more) & set(first)


def test_good_history_finds_the_optimum_in_the_first_round():
    """History from a device with the same optimum: the first round measures it."""
    prior = HistoryPrior.fit(SPACE, _hist("gpu0", _bowl((5, 2, 4))), seed=0)
    s = with_history(make_strategy("explorer", SPACE, None, np.random.default_rng(0)), prior)
    res = tune(SPACE, Bowl((5, 2, 4)), s, budget=4)
    assert res.best.record.time_ms == 1.0
    assert s.stats()["history"] == {"records": len(SPACE), "devices": ["gpu0"], "used": True,
                                    "history_rounds": 1, "wins": 0, "misses": 0}


def test_misleading_history_costs_a_bounded_number_of_rounds():
    """History pointing at a local optimum of the target gets its first round and few more."""
    prior = HistoryPrior.fit(SPACE, _hist("gpu0", _bowl((0, 0, 1))), seed=0)
    rounds = []
    for seed in range(8):
        s = with_history(make_strategy("random", SPACE, {"batch_size": 4},
                                       np.random.default_rng(seed)), prior,
                         GuidedOptions(decay=0.25), seed=seed)
        tune(SPACE, Bowl((7, 5, 4), local=(0, 0, 1)), s, budget=100)
        rounds.append(s.stats()["history"]["history_rounds"])
    assert min(rounds) >= 1 and np.mean(rounds) <= 1.5  # of 25 rounds


def test_isolated_inner_runs_as_without_history():
    """share='isolated' without the prior feature: the inner strategy asks exactly the
    configurations it asks alone (without the endgame, which depends on the budget the
    history rounds leave it)."""
    prior = HistoryPrior.fit(SPACE, _hist("gpu0", _bowl((0, 0, 1))), seed=0)
    alone = tune(SPACE, Bowl((7, 5, 4)), "explorer", budget=40, seed=2, options={"endgame": 0})
    inner = make_strategy("explorer", SPACE, {"endgame": 0}, np.random.default_rng(2))
    s = with_history(inner, prior, GuidedOptions(decay=0.0, prior_feature=False), seed=2)
    guided = tune(SPACE, Bowl((7, 5, 4)), s, budget=40 + 4 * s.stats()["history"]["history_rounds"] + 8)
    inner_asked = [i for i in inner.seen.cost]  # in the order told
    assert inner_asked[:30] == [t.index for t in alone.trials][:30]
    assert guided.best.record.cost <= min(t.record.cost for t in alone.trials[:30])


def test_the_inner_strategy_plans_for_the_budget_history_rounds_leave_it():
    prior = HistoryPrior.fit(SPACE, _hist("gpu0", _bowl((0, 0, 1))), seed=0)
    inner = make_strategy("explorer", SPACE, None, np.random.default_rng(0))
    s = with_history(inner, prior, GuidedOptions(decay=0.0, prior_feature=False), seed=0)
    res = tune(SPACE, Bowl((7, 5, 4)), s, budget=40)
    picked_only = {t.index for t in res.trials if t.index not in inner.seen}
    assert s.stats()["history"]["history_rounds"] >= 1 and picked_only
    assert inner.horizon == 40 - len(picked_only)
    assert len(inner.seen) + len(picked_only) == 40


def test_without_prior_the_strategy_is_unchanged():
    """with_history(strategy, None) is the strategy itself."""
    s = make_strategy("explorer", SPACE, None, np.random.default_rng(0))
    assert with_history(s, None) is s


@given(st.integers(0, 2**16), st.sampled_from(["isolated", "all"]),
       st.floats(0.0, 0.9), st.integers(1, 9), st.integers(5, 60))
def test_never_an_invalid_or_repeated_index(seed, share, decay, batch, budget):
    """Whatever the options, every ask is a distinct, new, valid index of the space."""
    prior = HistoryPrior.fit(SPACE, _hist("gpu0", _bowl((3, 3, 2)), keep=range(0, len(SPACE), 3)),
                             seed=0, options=None)
    inner = make_strategy("random", SPACE, {"batch_size": batch}, np.random.default_rng(seed))
    s = HistoryGuided(inner, prior, GuidedOptions(decay=decay, share=share),
                      np.random.default_rng(seed + 1))
    meas, asked = Bowl((1, 4, 1)), []
    while len(asked) < budget:
        got = s.ask(batch)
        if not got:
            break
        assert len(set(got)) == len(got) and all(0 <= i < len(SPACE) for i in got)
        assert not set(got) & set(asked)
        asked += got
        s.tell(got, meas.measure([SPACE.get(i) for i in got]))
    assert len(asked) >= min(budget, len(SPACE))


def test_transfer_options_reads_the_database_and_excludes_devices(tmp_path):
    """From a database file: the prior uses the other devices only, and says which."""
    db = tmp_path / "t.db"
    with TuningDB(db) as handle:
        handle.add(_hist("gpu0", _bowl((1, 1, 1))) + _hist("gpu1", _bowl((2, 2, 2))))
    prior, info = transfer_options(db, SPACE, [64, 64], exclude_devices=["gpu1"])
    assert info.as_json() == {"records": len(SPACE), "devices": ["gpu0"], "used": True}
    assert prior.devices == ("gpu0",) and info.notice is None


def test_guided_options_reject_bad_values():
    """decay outside [0, 1) and unknown share modes are errors naming the value."""
    with pytest.raises(ValueError, match="decay"):
        GuidedOptions(decay=1.0)
    with pytest.raises(ValueError, match="share"):
        GuidedOptions(share="some")


def test_records_outside_the_space_train_the_ranking_when_their_features_are_known():
    """Another layer's configurations (not members here) still teach the history model."""
    small = GridSpace({"a": [0, 1, 2, 3], "b": list(range(6)), "c": [1, 2, 4]})
    outside = [m for m in _hist("gpu0", _bowl((3, 2, 2))) if m.record.config["a"] >= 4]
    prior = HistoryPrior.fit(small, outside, seed=0)
    assert prior.groups[0].indices.size == 0 and prior.records == len(outside)
    top = small.get(int(prior.ranking[0]))
    assert (top["b"], top["c"]) == (2, 2)  # the knobs it saw vary; trees do not extrapolate a


def test_prior_is_none_without_usable_history():
    """Records neither in the space nor with a full feature row give no source, no prior."""
    space = GridSpace({"x": ["p", "q"]})
    w = Workload("k", [8], ("x",))
    hist = [Measurement(w, "gpu0", "t", MeasureRecord.ok({"x": "r"}, time_ms=1.0))]
    assert source_groups(space, hist) == [] and HistoryPrior.fit(space, hist) is None


@given(order=st.permutations(range(len(SPACE))).map(lambda p: p[:len(p) // 3]),
       picks=st.lists(st.integers(0, len(SPACE) - 1), min_size=1, max_size=20))
def test_prior_feature_space_adds_the_rank_column_only(order, picks):
    """The wrapped space has the same configurations and neighbours; its features are the
    space's plus the rank in the prior's order over its length (1.0 when unranked)."""
    s = PriorFeatureSpace(SPACE, order)
    X, base = s.features(picks), SPACE.features(picks)
    assert np.array_equal(X[:, :-1], base) and s.feature_names()[-1] == "history_rank"
    where = {int(i): k for k, i in enumerate(order)}
    assert X[:, -1].tolist() == [where[i] / len(order) if i in where else 1.0 for i in picks]
    assert all(s.get(i) == SPACE.get(i) and s.neighbours(i) == SPACE.neighbours(i) for i in picks)
    assert np.array_equal(s.knobs(picks), SPACE.knobs(picks))  # the rank is not a knob


def test_model_based_inner_learns_on_the_history_rank():
    """With history, the explorer's model is fitted with the history's rank as a feature,
    and uses it when the history ranks the target right; strategies without a cost model
    (random) are unchanged; every ask is a new member of the space."""
    prior = HistoryPrior.fit(SPACE, _hist("gpu0", _bowl((5, 2, 4))), seed=0)
    inner = make_strategy("explorer", SPACE, None, np.random.default_rng(0))
    s = with_history(inner, prior, GuidedOptions(decay=0.0), seed=0)
    assert isinstance(inner.space, PriorFeatureSpace)
    res = tune(SPACE, Bowl((5, 2, 4), local=(0, 0, 1)), s, budget=24)
    idx = [t.index for t in res.trials]
    assert len(set(idx)) == len(idx) and all(0 <= i < len(SPACE) for i in idx)
    model = train_model(inner.space, inner.seen, XGBOptions(), seed=0)
    X = inner.space.features(range(len(SPACE)))
    unranked = X.copy()
    unranked[:, -1] = 1.0
    assert not np.allclose(model.predict(X), model.predict(unranked))  # the column is used
    rand = make_strategy("random", SPACE, None, np.random.default_rng(0))
    with_history(rand, prior)
    assert rand.space is SPACE


def test_prior_feature_refuses_another_space():
    """learn_on takes only a space with the same configurations under the same indices."""
    inner = make_strategy("explorer", SPACE, None, np.random.default_rng(0))
    with pytest.raises(ValueError, match="same configurations"):
        inner.learn_on(GridSpace({"a": [1, 2]}))


def test_prior_order_is_the_consensus_then_the_ranking_once_each():
    """The order history rounds pick from and the rank feature is read from: every
    configuration once, the consensus first, then the model's ranking of the rest."""
    prior = HistoryPrior.fit(SPACE, _hist("gpu0", _bowl((2, 3, 2)), keep=range(0, len(SPACE), 3)),
                             seed=0)
    order = prior.order().tolist()
    assert len(order) == len(set(order)) == len(SPACE)
    assert order[:len(prior.consensus)] == prior.consensus.tolist()
    rest = [i for i in prior.ranking.tolist() if i not in set(prior.consensus.tolist())]
    assert order[len(prior.consensus):] == rest
    assert prior.picker().picks(len(SPACE), asked=set()) == order
