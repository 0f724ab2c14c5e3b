"""Tests of transfer from tuning history: the prior, the history-guided wrapper, the session API."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from search.db import Measurement, TuningDB, Workload
from search.measure.base import MeasureRecord, Measurer
from search.grid_space import GridSpace
from search.strategies import make_strategy
from search.cost_model import XGBCostModel
from search.strategies.model_based import XGBOptions, train_model
from search.transfer import (GuidedOptions, HistoryGuided, HistoryPrior, PriorFeatureSpace,
                             PriorOptions, transfer_options, with_history)
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


def test_prior_picks_the_consensus_best_then_each_sources_best():
    """Picks: the best of the mean relative throughput over the sources, then each
    source's best not yet picked, then the consensus's next..., each configuration once."""
    hist = _hist("gpu0", _bowl((2, 3, 2))) + _hist("gpu1", _bowl((6, 1, 4)))
    prior = HistoryPrior.fit(SPACE, hist, seed=0)
    mean_rel = [np.mean([1.0 / _bowl(at)(SPACE.get(i)) for at in ((2, 3, 2), (6, 1, 4))])
                for i in range(len(SPACE))]
    picker = prior.picker()
    first = picker.picks(3, asked=set())
    bests = [SPACE.index(dict(zip("abc", at))) for at in ((2, 3, 2), (6, 1, 4))]
    assert first[0] == int(np.argmax(mean_rel)) and set(bests) <= set(first)
    more = picker.picks(10, asked=set(first))
    assert prior.picker().picks(3, asked=set()) == first  # each run its own cursor
    assert len(set(more)) == 10 and not set(more) & set(first)


@given(st.lists(st.lists(st.integers(0, 30), unique=True, max_size=12), min_size=1, max_size=5),
       st.sets(st.integers(0, 30), max_size=8), st.integers(1, 40))
def test_picker_gives_each_list_its_next_unasked_in_turn(lists, asked, n):
    """Round robin over the lists: in each turn every list that has one left proposes its
    first configuration neither asked nor picked; nothing is picked twice; asking in two
    calls gives what one call gives."""
    from search.transfer.prior import Picker
    got = Picker([np.array(x, dtype=np.int64) for x in lists]).picks(n, set(asked))
    expect, taken, pos = [], set(asked), [0] * len(lists)
    while len(expect) < n:
        before = len(expect)
        for k, x in enumerate(lists):
            while pos[k] < len(x) and x[pos[k]] in taken:
                pos[k] += 1
            if pos[k] < len(x) and len(expect) < n:
                expect.append(x[pos[k]])
                taken.add(x[pos[k]])
        if len(expect) == before:
            break
    assert got == expect and len(set(got)) == len(got) and not set(got) & set(asked)
    split = Picker([np.array(x, dtype=np.int64) for x in lists])
    head = split.picks(n // 2, set(asked))
    assert head + split.picks(n - len(head), set(asked) | set(head)) == got  # the turn carries


def test_the_first_rounds_hear_every_source_up_to_first_rounds():
    """Ten sources, batches of 4: the first history rounds (as many as it takes to measure
    the consensus's best and each source's, at most ``first_rounds``) are never judged, so
    history that then stops (decay 0, and no source trusted) had exactly that many; two
    sources fit one round."""
    many = sum((_hist(f"gpu{k}", _bowl((k % 8, k % 6, 4))) for k in range(10)), [])
    few = _hist("gpu0", _bowl((0, 0, 1))) + _hist("gpu1", _bowl((1, 0, 1)))
    rounds = {}
    for name, hist in (("many", many), ("few", few)):
        prior = HistoryPrior.fit(SPACE, hist, seed=0)
        for first in (1, 2, 5):
            s = with_history(make_strategy("random", SPACE, {"batch_size": 4},
                                           np.random.default_rng(0)), prior,
                             GuidedOptions(decay=0.0, first_rounds=first, trust=1.5), seed=0)
            res = tune(SPACE, Bowl((7, 5, 2)), s, budget=40)
            rounds[name, first] = s.stats()["history"]["history_rounds"]
            if name == "many":
                picked = [t.index for t in res.trials][:4 * rounds[name, first]]
                assert picked == prior.picker().picks(len(picked), asked=set())
    assert rounds == {("many", 1): 1, ("many", 2): 2, ("many", 5): 3,
                      ("few", 1): 1, ("few", 2): 1, ("few", 5): 1}


def test_good_history_finds_the_optimum_in_the_first_round():
    """History from a device with the same optimum: the first round measures it."""
    prior = HistoryPrior.fit(SPACE, _hist("gpu0", _bowl((5, 2, 4))), seed=0)
    s = with_history(make_strategy("explorer", SPACE, None, np.random.default_rng(0)), prior)
    res = tune(SPACE, Bowl((5, 2, 4)), s, budget=4)
    assert res.best.record.time_ms == 1.0
    assert s.stats()["history"] == {"records": len(SPACE), "devices": ["gpu0"], "used": True,
                                    "history_rounds": 1, "wins": 0, "misses": 0,
                                    "trusted": None}


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
    s = with_history(inner, prior, GuidedOptions(decay=0.0, prior_feature=False, share="isolated"),
                     seed=2)
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


@given(st.integers(0, 2**16), st.sampled_from(["isolated", "hints", "all"]),
       st.floats(0.0, 0.9), st.integers(1, 9), st.integers(5, 60))
def test_never_an_invalid_or_repeated_index(seed, share, decay, batch, budget):
    """Whatever the options, every ask is a distinct, new, valid index of the space."""
    prior = HistoryPrior.fit(SPACE, _hist("gpu0", _bowl((3, 3, 2)), keep=range(0, len(SPACE), 3)),
                             seed=0, options=None)
    inner = make_strategy("random", SPACE, {"batch_size": batch}, np.random.default_rng(seed))
    s = HistoryGuided(inner, prior, GuidedOptions(decay=decay, share=share),
                      np.random.default_rng(seed + 1))
    asked = ask_until(s, Bowl((1, 4, 1)), batch, budget)
    assert len(asked) >= min(budget, len(SPACE))


@given(st.integers(0, 2**16), st.integers(1, 9), st.sampled_from(["random", "explorer"]))
def test_configurations_told_before_any_ask_are_never_asked(seed, batch, inner_name):
    """A resumed run tells the strategy its log's records before asking anything: those
    configurations (here the very ones history would ask first) are never asked again."""
    prior = HistoryPrior.fit(SPACE, _hist("gpu0", _bowl((3, 3, 2))), seed=0)
    told = prior.picker().picks(6, asked=set())
    inner = make_strategy(inner_name, SPACE, {"batch_size": batch}, np.random.default_rng(seed))
    s = HistoryGuided(inner, prior, GuidedOptions(), np.random.default_rng(seed + 1))
    s.tell(told, Bowl((3, 3, 2)).measure([SPACE.get(i) for i in told]))
    asked = ask_until(s, Bowl((3, 3, 2)), batch, 30)
    assert asked and not set(asked) & set(told)


def test_only_sources_matching_at_least_consensus_match_enter_the_consensus():
    """With ``consensus_match=1`` the consensus is the exactly matching source's order (a
    near source's optimum stays where that source puts it); with 0 every source is heard."""
    same, near = _bowl((1, 1, 1)), _bowl((6, 4, 2))
    hist = _hist("same", same) + _hist("near", near, problem=(64, 48))
    their = SPACE.index({"a": 6, "b": 4, "c": 2})
    at = {}
    for match in (0.0, 1.0):
        prior = HistoryPrior.fit(SPACE, hist, [64, 64], PriorOptions(consensus_match=match),
                                 seed=0)
        at[match] = prior.consensus.tolist().index(their)
    cost = [same(SPACE.get(i)) for i in range(len(SPACE))]
    better = sum(c < cost[their] for c in cost)
    no_worse = sum(c <= cost[their] for c in cost)
    assert at[0.0] < 3 and better <= at[1.0] < no_worse  # where 'same' alone puts it


def ask_until(strategy, measurer, batch: int, budget: int) -> list[int]:
    """Ask and tell ``strategy`` (over SPACE) in batches until ``budget`` configurations
    or an empty ask, asserting that every ask is distinct, new and valid; all it asked."""
    asked: list[int] = []
    while len(asked) < budget:
        got = strategy.ask(min(batch, budget - len(asked)))
        if not got:
            break
        assert len(set(got)) == len(got) and all(0 <= i < len(SPACE) for i in got)
        assert not set(got) & set(asked)
        asked += got
        strategy.tell(got, measurer.measure([SPACE.get(i) for i in got]))
    return asked


def test_transfer_options_reads_the_database_and_excludes_devices(tmp_path):
    """From a database file: the prior uses the other devices only, and says which."""
    db = tmp_path / "t.db"
    with TuningDB(db) as handle:
        handle.add(_hist("gpu0", _bowl((1, 1, 1))) + _hist("gpu1", _bowl((2, 2, 2))))
    prior, info = transfer_options(db, SPACE, [64, 64], exclude_devices=["gpu1"])
    assert info.as_json() == {"records": len(SPACE), "devices": ["gpu0"], "used": True}
    assert prior.devices == ("gpu0",) and info.notice is None


def test_guided_options_reject_bad_values():
    """decay outside [0, 1), negative counts and unknown share modes are errors naming
    the value."""
    with pytest.raises(ValueError, match="decay"):
        GuidedOptions(decay=1.0)
    with pytest.raises(ValueError, match="source_features"):
        GuidedOptions(source_features=-1)
    with pytest.raises(ValueError, match="first_rounds"):
        GuidedOptions(first_rounds=0)
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


def _rank_of(order, picks):
    where = {int(i): k for k, i in enumerate(order)}
    return [where[i] / len(order) if i in where else 1.0 for i in picks]


@given(order=st.permutations(range(len(SPACE))).map(lambda p: p[:len(p) // 3]),
       sources=st.lists(st.permutations(range(len(SPACE))).map(lambda p: p[:7]), max_size=3),
       picks=st.lists(st.integers(0, len(SPACE) - 1), min_size=1, max_size=20))
def test_prior_feature_space_adds_the_rank_columns_only(order, sources, picks):
    """The wrapped space has the same configurations and neighbours; its features are the
    space's plus the rank in the prior's order, then in each source's, over its length
    (1.0 when unranked)."""
    named = [(f"k@gpu{n}", np.array(o)) for n, o in enumerate(sources)]
    s = PriorFeatureSpace(SPACE, order, named)
    X, base, w = s.features(picks), SPACE.features(picks), SPACE.features([0]).shape[1]
    assert np.array_equal(X[:, :w], base) and X.shape[1] == w + 1 + len(sources)
    assert s.feature_names()[w:] == ["history_rank"] + [f"history_rank[{n}]" for n, _ in named]
    for col, o in enumerate([order, *sources]):
        assert X[:, w + col].tolist() == _rank_of(o, picks)
    assert all(s.get(i) == SPACE.get(i) and s.neighbours(i) == SPACE.neighbours(i) for i in picks)
    assert np.array_equal(s.knobs(picks), SPACE.knobs(picks))  # the ranks are not knobs


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
    unranked[:, SPACE.features([0]).shape[1]:] = 1.0
    assert not np.allclose(model.predict(X), model.predict(unranked))  # the columns are used
    rand = make_strategy("random", SPACE, None, np.random.default_rng(0))
    with_history(rand, prior)
    assert rand.space is SPACE


def test_the_target_model_gets_a_rank_column_per_source_up_to_the_limit():
    """Two sources that disagree: one column each (best matching first, named by workload and
    device) beside the consensus, none with ``source_features=0``; the source whose ranking
    is the target's is the column the target's model splits on most."""
    hist = _hist("gpu0", _bowl((5, 2, 4))) + _hist("gpu1", _bowl((0, 5, 1)))
    prior = HistoryPrior.fit(SPACE, hist, seed=0)
    names = {}
    for limit in (0, 1, 16):
        inner = make_strategy("explorer", SPACE, None, np.random.default_rng(0))
        with_history(inner, prior, GuidedOptions(decay=0.0, source_features=limit), seed=0)
        names[limit] = inner.space.feature_names()
    base = SPACE.feature_names()
    assert names[0] == base + ["history_rank"]
    assert names[16] == base + ["history_rank", "history_rank[k [64,64]@gpu0]",
                                "history_rank[k [64,64]@gpu1]"]
    assert names[1] == names[16][:-1]


def test_source_orders_are_the_sources_measured_configurations_best_matching_first():
    """Each source's configurations of the space fastest first; ``min_size`` leaves out a
    source that measured too few (a rank column of one row says nothing), ``limit`` keeps
    the best matching."""
    hist = (_hist("gpu0", _bowl((5, 2, 4))) + _hist("gpu1", _bowl((0, 5, 1)), keep=[7])
            + _hist("gpu2", _bowl((1, 1, 1)), problem=(64, 48)))
    prior = HistoryPrior.fit(SPACE, hist, [64, 64], seed=0)
    names = [n for n, _ in prior.source_orders()]
    assert names == ["k [64,64]@gpu0", "k [64,64]@gpu1", "k [64,48]@gpu2"]
    assert [n for n, _ in prior.source_orders(min_size=2)] == [names[0], names[2]]
    assert [n for n, _ in prior.source_orders(limit=1)] == names[:1]
    costs = [_bowl((5, 2, 4))(SPACE.get(int(i))) for i in prior.source_orders()[0][1]]
    assert costs == sorted(costs) and len(costs) == len(SPACE)


def test_per_source_ranks_let_the_target_model_follow_its_twin():
    """Three sources that disagree, a target that behaves like one of them: fitted on the
    same target samples, the model with a rank column per source ranks the whole space
    better (mean Spearman over six samples) than with the consensus column alone."""
    hist = (_hist("gpu0", _bowl((5, 2, 4))) + _hist("gpu1", _bowl((0, 5, 1)))
            + _hist("gpu2", _bowl((6, 0, 2))))
    prior = HistoryPrior.fit(SPACE, hist, seed=0)
    truth = np.array([_bowl((0, 5, 1))(SPACE.get(i)) for i in range(len(SPACE))])
    spaces = (PriorFeatureSpace(SPACE, prior.order()),
              PriorFeatureSpace(SPACE, prior.order(), prior.source_orders(16)))

    def spearman(space, sample) -> float:
        model = XGBCostModel(XGBOptions(), seed=0).fit(space.features(sample), truth[sample])
        pred = model.predict(space.features(range(len(SPACE))))
        return float(np.corrcoef(np.argsort(np.argsort(pred)), np.argsort(np.argsort(truth)))[0, 1])
    samples = [np.random.default_rng(k).choice(len(SPACE), 16, replace=False) for k in range(6)]
    consensus_only, per_source = (np.mean([spearman(s, x) for x in samples]) for s in spaces)
    assert per_source > consensus_only + 0.02


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
