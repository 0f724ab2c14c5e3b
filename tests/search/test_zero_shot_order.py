"""Which order zero-shot measures (search/zero_shot_order.py).

References: the round robin written out by hand (each list's next configuration not
yet taken, in turn, each configuration once); two histories built so that the answer
is known: devices in two families of near twins (left out, a device's twin holds its
optimum while the pooled model follows the other family: every source heard wins) and
devices that are exact copies (both orders find each one's optimum first: a tie, which
goes to the model); and the rule that a device left out never trains the model that
ranks for it.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from iobound.errors import InvalidInputError
from search import zero_shot_order
from search.db import Measurement, Workload
from search.measure.base import MeasureRecord
from search.grid_space import GridSpace
from search.strategies.zero_shot import ZeroShotStrategy, ZeroShotStrategyOptions
from search.transfer.sources import consensus, source_groups
from search.zero_shot import ZeroShotOptions, measure_top
from search.zero_shot_order import (choose_order, sources_order, zero_shot_ranking,
                                    zero_shot_rankings)

SPACE = GridSpace({"x": list(range(24))})
W = Workload("k", [8], ("x",))


def _device(name: str, best: int, noise: float = 0.0, seed: int = 0, workload=W) -> list:
    rng = np.random.default_rng(seed)
    return [Measurement(workload, name, "t", MeasureRecord.ok(
        {"x": x}, time_ms=1.0 + abs(x - best) * (1 + noise * rng.random()))) for x in range(24)]


def _round_robin(lists: list[list[int]]) -> list[int]:
    out, pos = [], [0] * len(lists)
    while any(p < len(lst) for p, lst in zip(pos, lists)):
        for k, lst in enumerate(lists):
            while pos[k] < len(lst) and lst[pos[k]] in out:
                pos[k] += 1
            if pos[k] < len(lst):
                out.append(lst[pos[k]])
                pos[k] += 1
    return out


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 23), min_size=2, max_size=4, unique=True),
       st.permutations(list(range(24))))
def test_sources_order_is_the_round_robin_of_model_consensus_and_each_source(bests, model):
    history = [m for n, b in enumerate(bests) for m in _device(f"d{n}", b, 0.5, n)]
    groups = [g for g in source_groups(SPACE, history, [8]) if g.same_problem]
    want = _round_robin([list(model), consensus(groups).tolist(),
                         *(g.indices.tolist() for g in groups)])
    got = sources_order(SPACE, history, np.array(model), [8]).tolist()
    assert got == want and sorted(got) == list(range(24))
    assert set(bests) <= set(got[:2 + len(bests)])  # every device's best among the first


def test_without_a_source_of_the_targets_problem_both_orders_are_the_models():
    history = _device("a", 3) + _device("b", 9)
    model = np.arange(24)[::-1]
    assert sources_order(SPACE, history, model, [16]).tolist() == model.tolist()
    assert choose_order(SPACE, history, [16]) == "model"


TWINS = (_device("A1", 3, 0.05, 1) + _device("A2", 3, 0.05, 2) + _device("B1", 19, 0.05, 3)
         + _device("B2", 19, 0.05, 4) + _device("B3", 19, 0.05, 5))


def test_near_twins_choose_every_source_heard():
    """Left out, A1's twin A2 holds its optimum in the first picks of every source heard,
    while the model, fitted mostly on the B family, ranks B's region first."""
    o = ZeroShotOptions(k=4)
    assert choose_order(SPACE, TWINS, [8], o) == "sources"
    r = zero_shot_ranking(SPACE, TWINS, o, target_problem=[8])
    assert r.order == "sources" and {3, 19} <= set(r.ranked[:4].tolist())
    assert r.scores.tolist() == sorted(r.scores.tolist())  # the order is the ranking


def test_copies_tie_and_the_tie_goes_to_the_model():
    history = [m for n in range(3) for m in _device(f"c{n}", 11, workload=W)]
    assert choose_order(SPACE, history, [8], ZeroShotOptions(k=1)) == "model"
    assert zero_shot_ranking(SPACE, history, ZeroShotOptions(k=1), target_problem=[8]).order \
        == "model"


def test_a_device_left_out_never_trains_the_model_that_ranks_for_it(monkeypatch):
    """Every model fitted while choosing learns from every device but the one left out."""
    seen = []
    real = zero_shot_order.history_ranking

    def spy(space, history, options=None, seed=0):
        seen.append(sorted({m.device for m in history}))
        return real(space, history, options, seed)

    monkeypatch.setattr(zero_shot_order, "history_ranking", spy)
    choose_order(SPACE, TWINS, [8], ZeroShotOptions(k=4))
    devices = ["A1", "A2", "B1", "B2", "B3"]
    assert seen == [[d for d in devices if d != out] for out in devices]


def test_at_most_loso_sources_devices_are_left_out(monkeypatch):
    calls = []
    real = zero_shot_order.history_ranking
    monkeypatch.setattr(zero_shot_order, "history_ranking",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    choose_order(SPACE, TWINS, [8], ZeroShotOptions(k=4, loso_sources=3))
    assert len(calls) == 3


def test_one_ranking_per_k_is_the_ranking_for_that_k():
    both = zero_shot_rankings(SPACE, TWINS, [1, 4, 12], ZeroShotOptions(), 0, [8])
    for k, r in both.items():
        one = zero_shot_ranking(SPACE, TWINS, ZeroShotOptions(k=k), 0, [8])
        assert r.order == one.order and r.ranked.tolist() == one.ranked.tolist()


@pytest.mark.parametrize("order", ["model", "sources"])
def test_a_fixed_order_is_kept(order):
    r = zero_shot_ranking(SPACE, TWINS, ZeroShotOptions(k=4, order=order), 0, [8])
    assert r.order == order


def test_measuring_the_top_k_names_the_order():
    from search.measure.base import Measurer

    class Table(Measurer):
        def measure(self, configs):
            return [MeasureRecord.ok(c, time_ms=1.0 + abs(c["x"] - 3)) for c in configs]

    r = zero_shot_ranking(SPACE, TWINS, ZeroShotOptions(k=4), 0, [8])
    res = measure_top(SPACE, Table(), r, 4)
    assert res.order == "sources" and len(res.measured) == 4


@pytest.mark.parametrize("values, needle", [
    ({"order": "best"}, "order must be one of auto, model, sources"),
    ({"order": None}, "order must be one of"),
    ({"loso_sources": 1}, "loso_sources"),
])
def test_bad_options_are_named(values, needle):
    with pytest.raises(InvalidInputError, match=needle):
        ZeroShotOptions(**values)
    if "order" in values:
        with pytest.raises(InvalidInputError, match=needle):
            ZeroShotStrategyOptions(**values)


def test_the_strategy_asks_in_the_chosen_order_and_says_which():
    s = ZeroShotStrategy(SPACE, ZeroShotStrategyOptions(history=tuple(TWINS), target_problem=[8],
                                                        k=4), rng=np.random.default_rng(0))
    assert s.stats()["order"] == "sources"
    assert set(s.ask(4)) >= {3, 19}
    plain = ZeroShotStrategy(SPACE, ZeroShotStrategyOptions(history=tuple(TWINS), order="model"),
                             rng=np.random.default_rng(0))
    assert plain.stats()["order"] == "model"


def test_tune_names_every_order_it_can_measure():
    from search.cli.tune_print import ZERO_SHOT_ORDER_NAMES
    from search.zero_shot import ORDERS
    assert set(ZERO_SHOT_ORDER_NAMES) == set(ORDERS) - {"auto"}


def test_the_choice_is_the_same_for_every_run_seed(monkeypatch):
    """The choice's models are fitted with CHOICE_SEED whatever the run's seed, and a
    choice made before is taken as it is (no model fitted to make it again)."""
    seeds = []
    real = zero_shot_order.history_ranking
    monkeypatch.setattr(zero_shot_order, "history_ranking",
                        lambda s, h, o=None, seed=0: seeds.append(seed) or real(s, h, o, seed))
    zero_shot_rankings(SPACE, TWINS, [4], ZeroShotOptions(), 7, [8])
    assert seeds == [7] + [zero_shot_order.CHOICE_SEED] * 5
    seeds.clear()
    got = zero_shot_rankings(SPACE, TWINS, [4], ZeroShotOptions(), 7, [8], orders={4: "model"})
    assert seeds == [7] and got[4].order == "model"


def test_the_sources_order_asked_without_a_source_of_the_problem_is_named_the_model():
    """``order="sources"`` where no source measured the target's problem measures the
    model's order (module doc) and names it so (it was labelled "sources")."""
    history = _device("a", 3) + _device("b", 9)
    got = zero_shot_ranking(SPACE, history, ZeroShotOptions(order="sources", k=4), 0, [16])
    model = zero_shot_ranking(SPACE, history, ZeroShotOptions(order="model", k=4), 0, [16])
    assert got.order == "model" and got.ranked.tolist() == model.ranked.tolist()
    assert zero_shot_ranking(SPACE, history, ZeroShotOptions(order="sources", k=4), 0).order \
        == "sources"  # no target problem given: every source is of it


def test_the_sources_order_ranks_no_more_than_the_candidates():
    """``candidates=7`` with the sources' order: the strategy asks 7 configurations in
    all, the walk's first 7 (the model's sample and the sources' lists in turn), as the
    model's order would. The walk used to run on through every source's list (24 here)."""
    history = [m for n, b in enumerate((3, 17)) for m in _device(f"d{n}", b, 0.5, n)]
    s = ZeroShotStrategy(SPACE, ZeroShotStrategyOptions(
        history=tuple(history), candidates=7, target_problem=[8], order="sources", k=5),
        rng=np.random.default_rng(0))
    asked = s.ask(len(SPACE))
    assert s.order == "sources" and len(asked) == 7 == len(set(asked)) and s.ask(1) == []
    ranking = zero_shot_ranking(SPACE, history, ZeroShotOptions(k=5, candidates=7,
                                                                order="sources"), 1, [8])
    assert ranking.order == "sources" and len(ranking.ranked) == 7
    assert {3, 17} <= set(ranking.ranked.tolist())  # each source's optimum among them


def test_the_order_is_chosen_on_the_walk_it_would_run(monkeypatch):
    """``"auto"`` scores each left-out device on the orders zero-shot would run: with
    ``candidates`` the sources' walk is cut to the model's candidates there too."""
    seen = []
    real = zero_shot_order._first_k_score
    monkeypatch.setattr(zero_shot_order, "_first_k_score",
                        lambda order, rel, k: seen.append(len(order)) or real(order, rel, k))
    history = [m for n, b in enumerate((3, 17, 9)) for m in _device(f"d{n}", b, 0.5, n)]
    choose_order(SPACE, history, [8], ZeroShotOptions(k=5, candidates=7))
    assert seen and max(seen) == 7


def test_an_order_is_scored_on_the_first_k_the_left_out_device_measured():
    """A budgeted history measured part of the space: an order's score is the best of the
    first k configurations the left-out device measured (skipping ones it never did), not
    of the order's first k, which would score 0 whenever those were never measured."""
    order, rel_time = np.array([5, 1, 2, 3]), {1: 2.0, 3: 1.0}  # 5 and 2 not measured
    assert zero_shot_order._first_k_score(order, rel_time, 1) == 0.5
    assert zero_shot_order._first_k_score(order, rel_time, 2) == 1.0
    assert zero_shot_order._first_k_score(order, {}, 3) == 0.0
