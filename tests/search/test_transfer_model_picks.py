"""The history rounds hear the prior's ranking model when no source measured the target's problem.

``GuidedOptions.model_picks``: ``"unmatched"`` (default) puts the ranking model's order
in the picker's round robin, second, only when every source is of another problem;
``"always"`` whatever the sources; ``"never"`` not at all.
"""

from __future__ import annotations

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
from search.tuner import tune

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
def test_first_history_round_walks_the_ranking_second_when_listed(mode, problem, listed):
    """The first history round is the round robin over the prior's order, the ranking model's
    order when listed (right after it), then each source's own."""
    prior = _prior(problem)
    inner = make_strategy("random", SPACE, {"batch_size": 4}, np.random.default_rng(0))
    s = HistoryGuided(inner, prior, GuidedOptions(model_picks=mode), np.random.default_rng(1))
    lists = ([prior.order()] + ([prior.ranking] if listed else [])
             + [o for _, o in prior.source_orders()])
    assert s.ask(4) == Picker(lists).picks(4, set())
    assert len(Picker(lists)) == 3 + listed


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


@pytest.mark.parametrize("follow", [True, False])
def test_when_the_models_pick_wins_the_next_round_follows_the_model(follow):
    """Sources of another problem; the target's best after the first round is the model's
    pick: with ``follow_model`` the next round is the model's next four unasked, else
    (no trusted source, decay 0) history stops and the inner strategy asks."""
    prior = _prior([64, 48])
    lists = [prior.order(), prior.ranking] + [o for _, o in prior.source_orders()]
    picker = Picker(lists)
    first = picker.picks(4, set())
    model_pick = next(i for i in first if picker.origin[i] == 1)
    inner = make_strategy("random", SPACE, {"batch_size": 4}, np.random.default_rng(0))
    s = HistoryGuided(inner, prior, GuidedOptions(decay=0.0, trust=1.5, follow_model=follow),
                      np.random.default_rng(1))
    meas = _Table(model_pick)
    got = s.ask(4)
    assert got == first
    s.tell(got, meas.measure([SPACE.get(i) for i in got]))
    second = s.ask(4)
    follow_next = [int(i) for i in prior.ranking if int(i) not in set(first)][:4]
    assert (second == follow_next) == follow
    assert s.stats()["history"]["history_rounds"] == (2 if follow else 1)
