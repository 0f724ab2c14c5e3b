"""Tests of matching the sources to the target: agreement, the matched order, the trusted round."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iobound.errors import InvalidInputError
from search.db import Measurement, Workload
from search.measure.base import MeasureRecord
from search.grid_space import GridSpace
from search.strategies import make_strategy
from search.transfer import GuidedOptions, HistoryPrior, with_history
from search.tuner import tune

from tests.search.test_transfer import SPACE, Bowl, _bowl, _hist

LINE = GridSpace({"x": list(range(40))})
CENTRES = [(0, 0, 1), (7, 5, 4), (3, 1, 2), (5, 4, 1), (1, 5, 4), (6, 0, 2), (2, 3, 4)]


def _line_prior(devices: dict) -> HistoryPrior:
    """A prior over LINE from ``{device: time of x}``, every device measuring every x."""
    w = Workload("k", [40], ("x",))
    hist = [Measurement(w, d, "t", MeasureRecord.ok({"x": x}, time_ms=f(x)))
            for d, f in devices.items() for x in range(40)]
    return HistoryPrior.fit(LINE, hist, seed=0)


@functools.lru_cache(maxsize=None)
def _ranked(seed: int) -> tuple[dict, HistoryPrior]:
    """A random ranking of LINE and a prior of two sources: one timing it, one reversed."""
    rank = {x: k for k, x in enumerate(np.random.default_rng(seed).permutation(40).tolist())}
    return rank, _line_prior({"same": lambda x: 1.0 + rank[x],
                              "reverse": lambda x: 100.0 - rank[x]})


@given(st.lists(st.floats(0.1, 100.0), min_size=3, max_size=15, unique=True),
       st.integers(0, 3), st.integers(0, 2**16))
@settings(max_examples=30, deadline=None)
def test_agreement_is_kendalls_tau_with_the_target(costs, ranking, seed):
    """A source whose times rise with the target's costs has tau 1, one whose times fall
    has tau -1, whatever the costs and configurations; a source that measured fewer than
    3 of them says nothing (tau 0, p 1)."""
    rank, prior = _ranked(ranking)
    chosen = np.random.default_rng(seed).choice(40, len(costs), replace=False).tolist()
    known = dict(zip(sorted(chosen, key=rank.get), sorted(costs)))
    got = dict(zip([g.device for g in prior.groups], prior.agreement(known)))
    assert got["same"][0] == pytest.approx(1.0) and got["reverse"][0] == pytest.approx(-1.0)
    assert got["same"][1] < 0.2 and got["reverse"][1] > 0.8
    few = dict(list(known.items())[:2])
    assert prior.agreement(few) == [(0.0, 1.0), (0.0, 1.0)]


@given(st.integers(0, 39), st.integers(0, 39), st.integers(0, 2**16))
@settings(max_examples=30, deadline=None)
def test_matched_order_follows_the_source_the_target_agrees_with(a, b, seed):
    """Two sources with their optima at ``a`` and ``b``, a target measured like the
    second: the matched order puts the second's fastest first, and holds every
    configuration of the prior's order exactly once."""
    prior = _line_prior({"gpu_a": lambda x: 1.0 + abs(x - a), "gpu_b": lambda x: 1.0 + abs(x - b)})
    picks = np.random.default_rng(seed).choice(40, 6, replace=False).tolist()
    known = {int(x): 1.0 + abs(int(x) - b) for x in picks}
    tau = dict(zip([g.device for g in prior.groups], prior.agreement(known)))
    order = prior.matched_order(known, sharpness=50.0)
    assert sorted(order.tolist()) == sorted(prior.order().tolist()) == list(range(40))
    if tau["gpu_b"][0] > tau["gpu_a"][0] + 0.2:
        assert order[0] == b and abs(int(order[1]) - b) == 1


def _run(target, hist, options, budget=40, seed=0):
    prior = HistoryPrior.fit(SPACE, hist, seed=0)
    s = with_history(make_strategy("random", SPACE, {"batch_size": 4},
                                   np.random.default_rng(seed)), prior, options, seed=seed)
    res = tune(SPACE, Bowl(target), s, budget=budget)
    return prior, s.stats()["history"], [t.index for t in res.trials]


def test_a_source_that_orders_the_first_rounds_like_the_target_earns_the_next_round():
    """Seven sources that disagree, a target like one of them: after the two unjudged rounds
    (8 configurations), that source's tau is 1 (p far below 0.01 / 7), so the next round is
    a history round without a draw (decay 0 would end history), picking its best not yet measured;
    with ``trust`` above 1 there is no such round."""
    hist = sum((_hist(f"gpu{k}", _bowl(c)) for k, c in enumerate(CENTRES)), [])
    twin = CENTRES[4]
    trusting = GuidedOptions(decay=0.0)  # the defaults: match 15, trust 0.8
    prior, stats, asked = _run(twin, hist, trusting)
    assert stats["history_rounds"] >= 3 and stats["trusted"] == "k [64,64]@gpu4"
    known = {i: _bowl(twin)(SPACE.get(i)) for i in asked[:8]}
    assert asked[8:12] == [int(i) for i in prior.matched_order(known, 15.0)
                           if int(i) not in known][:4]
    cost = _bowl(twin)
    assert cost(SPACE.get(asked[8])) == min(cost(SPACE.get(i)) for i in range(len(SPACE))
                                            if i not in known)  # the twin's next best
    _, stats, _ = _run(twin, hist, GuidedOptions(decay=0.0, match=15.0, trust=1.5))
    assert stats["history_rounds"] == 2


def test_four_configurations_are_too_few_to_trust_a_source():
    """Two sources and batches of 4: the first round measures 4 configurations; a source
    ordering all 4 as the target does (tau 1) has p = 1/24, above 0.01 / 2, so it earns
    nothing: history that then stops (decay 0) had its one round."""
    hist = _hist("gpu0", _bowl((5, 2, 4))) + _hist("gpu1", _bowl((0, 5, 1)))
    prior, stats, asked = _run((5, 2, 4), hist, GuidedOptions(decay=0.0))
    taus = prior.agreement({i: _bowl((5, 2, 4))(SPACE.get(i)) for i in asked[:4]})
    assert max(t for t, _ in taus) == 1.0
    assert stats["history_rounds"] == 1 and stats["trusted"] is None


def test_match_options_reject_bad_values():
    """Each bad value is refused, the error naming its field."""
    for bad in ({"match": -1.0}, {"trust_alpha": 0.0}, {"trust_alpha": 1.5}):
        with pytest.raises(InvalidInputError, match=f"^{next(iter(bad))} must be"):
            GuidedOptions(**bad)


def test_keep_trusted_follows_the_twin_while_it_stays_one():
    """The target is one source's twin: with ``keep_trusted`` every round after the trusted
    one is history's too (decay 0: no draw), each taking the matched order's next unasked
    picks, since the twin orders every measurement as the target does; without it history
    stops after the trusted round's miss or a later one."""
    hist = sum((_hist(f"gpu{k}", _bowl(c)) for k, c in enumerate(CENTRES)), [])
    twin = CENTRES[4]
    prior, stats, asked = _run(twin, hist, GuidedOptions(decay=0.0, keep_trusted=True))
    assert stats["history_rounds"] == 10 and stats["trusted"] == "k [64,64]@gpu4"
    cost = _bowl(twin)
    for r in range(2, 10):
        known = {i: cost(SPACE.get(i)) for i in asked[:4 * r]}
        assert asked[4 * r:4 * r + 4] == [int(i) for i in prior.matched_order(known, 15.0)
                                          if int(i) not in known][:4]
    _, stats, _ = _run(twin, hist, GuidedOptions(decay=0.0))
    assert stats["history_rounds"] < 10


def test_keep_trusted_stops_when_no_source_passes_the_bar_any_more(monkeypatch):
    """Trusted once, then judged again after a history round that missed and refused: no
    history round after the refusal (decay 0: no draw either)."""
    from search.transfer.guided import HistoryGuided

    verdicts, refused_at = iter([True, False]), []

    def judged(self):
        v = next(verdicts)
        self._trusted_source = "k [64,64]@gpu4" if v else None
        if not v:
            refused_at.append(self._history_rounds)
        return v

    monkeypatch.setattr(HistoryGuided, "_trusted", judged)
    hist = sum((_hist(f"gpu{k}", _bowl(c)) for k, c in enumerate(CENTRES)), [])
    _, stats, _ = _run((3, 3, 3), hist, GuidedOptions(decay=0.0, keep_trusted=True))
    assert len(refused_at) == 1 and refused_at[0] >= 3
    assert stats["history_rounds"] == refused_at[0] and stats["trusted"] is None
