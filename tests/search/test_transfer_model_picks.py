"""The history rounds hear the prior's models when no source measured the target's problem.

``GuidedOptions.model_picks``: ``"alone"`` (default) walks the ranking model's order and the
regression's (zero-shot's model) in turn instead of the sources' lists, only when every
source is of another problem; ``"unmatched"`` puts them in the picker's round robin, right
after the prior's order; ``"always"`` whatever the sources; ``"never"`` not at all. With
``follow_model`` the model list whose pick won keeps the rounds."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from iobound.errors import InvalidInputError
from search.strategies import make_strategy
from search.transfer import GuidedOptions, HistoryGuided, HistoryPrior
from search.transfer.guided_options import MODEL_PICKS
from search.measure.base import MeasureRecord
from search.transfer.picker import Picker
from search.transfer.prior import MODEL_NAMES
from search.tuner import tune
from search.zero_shot import ZeroShotOptions, history_ranking

from tests.search.test_transfer import SPACE, Bowl, _bowl, _hist, ask_until

TARGET = [64, 64]


def _prior(problem):
    """A prior of two sources of ``problem`` that measured every third configuration."""
    keep = range(0, len(SPACE), 3)
    hist = (_hist("gpu0", _bowl((2, 3, 2)), problem=problem, keep=keep)
            + _hist("gpu1", _bowl((5, 1, 4)), problem=problem, keep=keep))
    return HistoryPrior.fit(SPACE, hist, target_problem=TARGET, seed=0)


def test_has_target_problem_says_whether_a_source_measured_the_targets_problem():
    """The same dimensions are the target's problem; a near one is not, nor one whose match
    score is 1 without being the same."""
    assert _prior([64, 64]).has_target_problem
    other = _prior([64, 48])
    assert not other.has_target_problem and 0 < max(g.weight for g in other.groups) < 1
    divides = _prior([64, 16])  # Mu et al.'s match score is 1: 16's divisors all divide 64
    assert not divides.has_target_problem and max(g.weight for g in divides.groups) == 1.0


@pytest.mark.parametrize("mode, problem, listed", [
    ("unmatched", [64, 48], True), ("unmatched", [64, 64], False),
    ("always", [64, 64], True), ("never", [64, 48], False)])
def test_first_history_round_walks_the_models_second_when_listed(mode, problem, listed):
    """The first history round is the round robin over the prior's order, the ranking model's
    and the regression's orders when listed (right after it), then each source's own."""
    prior = _prior(problem)
    inner = make_strategy("random", SPACE, {"batch_size": 4}, np.random.default_rng(0))
    s = HistoryGuided(inner, prior, GuidedOptions(model_picks=mode), np.random.default_rng(1))
    lists = ([prior.order()] + ([prior.ranking, prior.regression] if listed else [])
             + [o for _, o in prior.source_orders()])
    picker = prior.picker(listed)
    assert s.ask(4) == Picker(lists).picks(4, set())
    assert len(picker) == len(lists) == 3 + 2 * listed
    assert (picker.names[1:3] == list(MODEL_NAMES)) == listed


def test_the_regression_is_zero_shots_ranking_of_the_space():
    """The second model list is exactly what zero-shot ranks with (same history, seed, cap)."""
    keep = range(0, len(SPACE), 3)
    hist = (_hist("gpu0", _bowl((2, 3, 2)), problem=[64, 48], keep=keep)
            + _hist("gpu1", _bowl((5, 1, 4)), problem=[64, 48], keep=keep))
    prior = HistoryPrior.fit(SPACE, hist, target_problem=TARGET, seed=3)
    ranked, _, _ = history_ranking(SPACE, hist, ZeroShotOptions(), seed=3)
    assert prior.regression.tolist() == ranked.tolist()
    assert sorted(prior.regression.tolist()) == list(range(len(SPACE)))
    fresh = HistoryPrior.fit(SPACE, hist, target_problem=TARGET, seed=3)
    assert pickle.loads(pickle.dumps(fresh)).regression.tolist() == ranked.tolist()


@given(st.integers(0, 2**16), st.sampled_from(MODEL_PICKS), st.sampled_from([[64, 64], [64, 48]]),
       st.integers(1, 9), st.integers(5, 60))
def test_never_an_invalid_or_repeated_index_with_the_models_list(seed, mode, problem, batch,
                                                                 budget):
    """Property: whatever the mode and sources, every ask is distinct, new and valid."""
    inner = make_strategy("random", SPACE, {"batch_size": batch}, np.random.default_rng(seed))
    s = HistoryGuided(inner, _prior(problem), GuidedOptions(model_picks=mode),
                      np.random.default_rng(seed + 1))
    assert len(ask_until(s, Bowl((1, 4, 1)), batch, budget)) >= min(budget, len(SPACE))


def test_a_tune_with_the_models_list_finds_the_optimum_of_its_region():
    """End to end: the explorer with history of another problem reaches the optimum."""
    s = HistoryGuided(make_strategy("explorer", SPACE, None, np.random.default_rng(0)),
                      _prior([64, 48]), GuidedOptions(), np.random.default_rng(1))
    res = tune(SPACE, Bowl((2, 3, 2)), s, budget=40)
    assert res.best.record.cost == pytest.approx(1.0)


def test_model_picks_refuses_an_unknown_mode():
    with pytest.raises(InvalidInputError, match="model_picks"):
        GuidedOptions(model_picks="sometimes")


@given(st.dictionaries(st.sampled_from(["c_in", "c_out", "h", "w", "k", "stride"]),
                       st.integers(1, 512), min_size=1),
       st.text(max_size=8), st.text(max_size=8))
def test_same_problem_is_equality_of_the_dimensions_names_aside(dims, name_a, name_b):
    """Property: a layer is its own problem whatever its name; changing one dimension makes
    another problem, whatever Mu et al.'s match score says of it."""
    from search.transfer.prior import same_problem
    a, b = {**dims, "name": name_a}, {**dims, "name": name_b}
    assert same_problem(a, b) and same_problem(b, a)
    key = sorted(dims)[0]
    assert not same_problem(a, {**b, key: dims[key] * 2})


class _Table(Bowl):
    """A measurer over SPACE: ``best`` costs 1, everything else ``Bowl``'s cost + 10."""

    def __init__(self, best):
        super().__init__((0, 0, 1))
        self.best = best

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=1.0 if SPACE.index(c) == self.best
                                 else 10.0 + self.cost(c)) for c in configs]


def _lists(prior, mode):
    """The lists the history rounds walk in ``mode`` where no source measured the target's
    problem."""
    if mode == "alone":
        return [prior.ranking, prior.regression]
    return [prior.order(), prior.ranking, prior.regression] + [o for _, o in prior.source_orders()]


@pytest.mark.parametrize("follow", [True, False])
@pytest.mark.parametrize("mode, position", [("unmatched", 1), ("unmatched", 2), ("alone", 0),
                                            ("alone", 1)])
def test_when_a_models_pick_wins_the_next_round_follows_that_model(follow, mode, position):
    """Sources of another problem; the target's best after the first (unjudged) rounds is
    the pick of one model's list: with ``follow_model`` the next round is that model's next
    four unasked, else (no trusted source, decay 0) history stops and the inner strategy
    asks."""
    prior = _prior([64, 48])
    lists = _lists(prior, mode)
    unjudged = min(GuidedOptions().first_rounds, math.ceil(len(lists) / 4))
    picker, first = Picker(lists), []
    for _ in range(unjudged):
        first.append(picker.picks(4, {i for r in first for i in r}))
    model_pick = next(i for r in first for i in r if picker.origin[i] == position)
    inner = make_strategy("random", SPACE, {"batch_size": 4}, np.random.default_rng(0))
    s = HistoryGuided(inner, prior, GuidedOptions(decay=0.0, trust=1.5, follow_model=follow,
                                                  model_picks=mode), np.random.default_rng(1))
    meas = _Table(model_pick)
    for expected in first:
        got = s.ask(4)
        assert got == expected
        s.tell(got, meas.measure([SPACE.get(i) for i in got]))
    asked = {i for r in first for i in r}
    follow_next = [int(i) for i in lists[position] if int(i) not in asked][:4]
    assert (s.ask(4) == follow_next) == follow
    assert s.stats()["history"]["history_rounds"] == unjudged + follow


def test_alone_walks_only_the_models_where_no_source_measured_the_targets_problem():
    """``"alone"``: of another problem, the first round alternates the ranking model's and the
    regression's bests and is one round (both models heard); of the target's own problem, the
    sources' round robin without the models, as ``"never"``."""
    other, same = _prior([64, 48]), _prior([64, 64])
    first = {}
    for name, prior in (("other", other), ("same", same)):
        for mode in ("alone", "never"):
            inner = make_strategy("random", SPACE, {"batch_size": 4}, np.random.default_rng(0))
            s = HistoryGuided(inner, prior, GuidedOptions(model_picks=mode),
                              np.random.default_rng(1))
            first[name, mode] = s.ask(4)
    ranking, regression = other.ranking.tolist(), other.regression.tolist()
    assert first["other", "alone"] == Picker([other.ranking, other.regression]).picks(4, set())
    assert first["other", "alone"][0] == ranking[0]
    assert first["other", "alone"][1] == next(i for i in regression if i != ranking[0])
    assert first["same", "alone"] == first["same", "never"]
    assert other.picker(True, alone=True).names == list(MODEL_NAMES)
    assert other.picker(False, alone=True).names[0] == "order"  # no models: alone is moot



_BASE = dict(n=1, c_in=8, h_in=12, w_in=12, c_out=16, k_h=3, k_w=3)


@pytest.mark.parametrize("a, b", [(dict(stride=3, padding=0), dict(stride=3, padding=1)),
                                  (dict(padding=1, dilation=2), dict(padding=0))])
def test_layers_of_one_output_size_but_other_padding_or_dilation_are_other_problems(a, b):
    """Stride, padding and dilation are pairs in a layer's dict; two layers that differ only
    in them (the output size alike) are not one problem, so no source's own list of one is
    walked as the other's (zero-shot's "sources" order, the prior's same-problem sources)."""
    from iobound.layer import ConvLayer
    from search.transfer.prior import same_problem
    la, lb = ConvLayer(**_BASE, **a, name="a"), ConvLayer(**_BASE, **b, name="b")
    assert (la.h_out, la.w_out) == (lb.h_out, lb.w_out)  # what the dimensions alone see
    assert not same_problem(la.to_dict(), lb.to_dict())
    assert same_problem(la.to_dict(), la.replace(name="renamed").to_dict())
    # an older record's dict, without the fields that have defaults, is the layer with them
    old = {k: v for k, v in lb.to_dict().items() if k not in ("groups", "h_out", "w_out")}
    assert same_problem(old, lb.to_dict())
