"""Gaps a mutation pass over the transfer code found: each test pins a rule of the
history rounds, the prior, zero-shot or gga that a plausible one-token bug would break and
no other test noticed (small synthetic spaces, offline, a few seconds each)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from search.db import Measurement, Workload
from search.measure.base import MeasureRecord, Measurer
from search.grid_space import GridSpace
from search.strategies import make_strategy
from search.transfer import GuidedOptions, HistoryGuided, HistoryPrior

LINE = GridSpace({"x": list(range(40))})


def _line_hist(devices: dict, problem=(40,)) -> list[Measurement]:
    """Every x of LINE measured by each device, ``{device: time of x}``."""
    w = Workload("k", list(problem), ("x",))
    return [Measurement(w, d, "t", MeasureRecord.ok({"x": x}, time_ms=f(x)))
            for d, f in devices.items() for x in range(40)]


class _Line(Measurer):
    """A measurer over LINE timing x by ``f``."""

    name = "line"

    def __init__(self, f):
        self.f = f

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=float(self.f(c["x"]))) for c in configs]


def _rounds(prior, f, options, batch, rounds, seed=0) -> HistoryGuided:
    """A HistoryGuided over a random inner strategy, asked and told ``rounds`` rounds."""
    inner = make_strategy("random", LINE, {"batch_size": batch}, np.random.default_rng(seed))
    s = HistoryGuided(inner, prior, options, np.random.default_rng(seed + 1))
    meas = _Line(f)
    for _ in range(rounds):
        got = s.ask(batch)
        s.tell(got, meas.measure([LINE.get(i) for i in got]))
    return s


def test_a_history_round_that_only_ties_the_best_is_a_miss():
    """A judged history round wins only when it *improves* the best time: on a flat target
    every later round ties the first, so none is a win (doubt 0, decay 0.5: the first
    judged round is a history round without chance)."""
    prior = HistoryPrior.fit(LINE, _line_hist({"gpu0": lambda x: 1.0 + x}), seed=0)
    s = _rounds(prior, lambda x: 1.0, GuidedOptions(decay=0.5, doubt=0, trust=1.5,
                                                    prior_feature=False), batch=4, rounds=2)
    h = s.stats()["history"]
    assert h["history_rounds"] == 2 and h["wins"] == 0 and h["misses"] == 1


def test_trust_is_bonferroni_corrected_over_the_sources():
    """Two sources, one the target's twin: after one unjudged round of 5 it orders them
    perfectly, p = 1/5! = 0.0083, below trust_alpha = 0.01 but above 0.01 / 2 sources:
    no trusted round (decay 0: history stops); with trust_alpha = 0.02 it is trusted."""
    prior = HistoryPrior.fit(LINE, _line_hist({"a": lambda x: 1.0 + x,
                                               "b": lambda x: 1.0 + (39 - x) ** 1.5}), seed=0)
    twin = lambda x: 2.0 + 3 * x  # noqa: E731
    for alpha, rounds, trusted in ((0.01, 1, None), (0.02, 2, "k [40]@a")):
        s = _rounds(prior, twin, GuidedOptions(decay=0.0, trust_alpha=alpha, first_rounds=1,
                                               prior_feature=False), batch=5, rounds=3)
        h = s.stats()["history"]
        assert (h["history_rounds"], h["trusted"]) == (rounds, trusted), alpha


def test_the_trusted_source_named_is_the_one_most_like_the_target():
    """Two sources pass the trust bar on the first 8 measurements: the target's twin (tau 1)
    and one that swaps its two best (tau 26/28); the stats name the twin."""
    near = lambda x: {0: 2.0, 1: 1.0}.get(x, 1.0 + x)  # noqa: E731
    prior = HistoryPrior.fit(LINE, _line_hist({"twin": lambda x: 1.0 + x, "near": near}), seed=0)
    s = _rounds(prior, lambda x: 5.0 + x, GuidedOptions(decay=0.0, first_rounds=1,
                                                        prior_feature=False), batch=8, rounds=2)
    known = s._known_costs()
    taus = dict(zip([g.device for g in prior.groups], prior.agreement(known)))
    assert taus["twin"][0] == 1.0 and 0.8 <= taus["near"][0] < 1.0 and taus["near"][1] < 0.005
    assert s.stats()["history"]["trusted"] == "k [40]@twin"


def test_an_inner_round_that_only_ties_the_best_is_a_stalled_one():
    """``reopen=2`` where the models are walked (no source measured the target's problem):
    on a flat target every inner round only ties the best, so each counts as stalled and
    the models get a round after every two of them."""
    from search.tuner import tune

    from tests.search.test_transfer import SPACE
    from tests.search.test_transfer_model_picks import _prior

    class Flat(Measurer):
        name = "flat"

        def measure(self, configs):
            return [MeasureRecord.ok(c, time_ms=1.0) for c in configs]

    inner = make_strategy("random", SPACE, {"batch_size": 4}, np.random.default_rng(0))
    s = HistoryGuided(inner, _prior([64, 48]), GuidedOptions(decay=0.0, trust=1.5,
                                                             follow_model=False, reopen=2),
                      np.random.default_rng(1))
    tune(SPACE, Flat(), s, budget=28)  # 7 rounds: history, 2 inner, history, 2 inner, history
    assert s.stats()["history"]["history_rounds"] == 3


def test_a_tau_exactly_at_trust_is_trusted():
    """``trust`` is a floor: set to the very tau the target's twin has on the first 8
    measurements (p far below the bar), the twin earns the trusted round."""
    prior = HistoryPrior.fit(LINE, _line_hist({"twin": lambda x: 1.0 + x,
                                               "other": lambda x: 1.0 + (x - 20) ** 2}), seed=0)
    options = GuidedOptions(decay=0.0, first_rounds=1, prior_feature=False)
    first = _rounds(prior, lambda x: 5.0 + x, options, batch=8, rounds=1)
    taus = dict(zip([g.device for g in prior.groups], prior.agreement(first._known_costs())))
    tau, p = taus["twin"]
    assert tau > 0.99 and p < 0.001
    s = _rounds(prior, lambda x: 5.0 + x, replace(options, trust=tau), batch=8, rounds=3)
    h = s.stats()["history"]
    assert h["trusted"] == "k [40]@twin" and h["history_rounds"] >= 2


def test_failed_configurations_never_enter_the_agreement_or_the_matched_order(monkeypatch):
    """What the sources are judged on is the target's configurations that ran: a failure
    (cost inf) is no rank, so neither :meth:`HistoryPrior.agreement` nor
    :meth:`HistoryPrior.matched_order` ever sees one."""
    from search.measure.base import Status

    prior = HistoryPrior.fit(LINE, _line_hist({"a": lambda x: 1.0 + x,
                                               "b": lambda x: 1.0 + (39 - x)}), seed=0)
    seen: list[dict] = []
    agreement = prior.agreement
    monkeypatch.setattr(prior, "agreement", lambda known: seen.append(dict(known)) or
                        agreement(known))

    class OddFails(Measurer):
        name = "odd"

        def measure(self, configs):
            return [MeasureRecord.ok(c, time_ms=1.0 + c["x"]) if c["x"] % 2 == 0 else
                    MeasureRecord.failed(c, Status.INVALID, "odd") for c in configs]

    inner = make_strategy("random", LINE, {"batch_size": 4}, np.random.default_rng(0))
    s = HistoryGuided(inner, prior, GuidedOptions(decay=0.9, doubt=0, prior_feature=False),
                      np.random.default_rng(1))
    meas = OddFails()
    for _ in range(6):
        got = s.ask(4)
        s.tell(got, meas.measure([LINE.get(i) for i in got]))
    assert seen
    assert all(np.isfinite(list(k.values())).all() for k in seen)


def test_a_configuration_a_source_measured_twice_keeps_its_best_time():
    """One source timed x=3 twice (1.5 ms and 9 ms): its group holds x=3 once, at the best
    time over the source's best, so x=3 is second in its list and in the consensus."""
    from search.transfer.sources import source_groups

    w = Workload("k", [40], ("x",))
    hist = [Measurement(w, "gpu0", "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + x))
            for x in range(10)]
    hist += [Measurement(w, "gpu0", "t", MeasureRecord.ok({"x": 3}, time_ms=1.5)),
             Measurement(w, "gpu0", "t", MeasureRecord.ok({"x": 3}, time_ms=9.0))]
    (g,) = source_groups(LINE, hist)
    assert g.indices.tolist()[:3] == [0, 3, 1] and g.rel_time.tolist()[:3] == [1.0, 1.5, 2.0]
    assert len(g.indices) == 10
    assert HistoryPrior.fit(LINE, hist, seed=0).consensus.tolist()[:2] == [0, 3]


def test_zero_shot_learns_each_sources_times_relative_to_its_own_best():
    """Two devices 1000x apart in speed that measured different halves of the space: each
    one's best is 1 relative to its own best, so the slow device's optimum (x=30) is among
    the model's first picks beside the fast one's (x=5); on raw times every configuration
    only the slow device measured would rank below all of the fast one's."""
    from search.zero_shot import ZeroShotOptions, history_ranking

    w = Workload("k", [40], ("x",))
    hist = [Measurement(w, "fast", "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + abs(x - 5)))
            for x in range(20)]
    hist += [Measurement(w, "slow", "t", MeasureRecord.ok({"x": x},
                                                          time_ms=1000.0 * (1 + abs(x - 30))))
             for x in range(20, 40)]
    ranked, _, used = history_ranking(LINE, hist, ZeroShotOptions(), seed=0)
    assert used == 40 and {5, 30} <= set(ranked[:3].tolist())


def test_a_device_left_out_never_lends_its_own_list_to_the_walk_scored_for_it(monkeypatch):
    """Choosing zero-shot's order, each device left out is scored on the sources' walk of
    the *other* devices' lists: its own best list in the walk would score it on itself."""
    from search import zero_shot_order
    from search.zero_shot import ZeroShotOptions

    from tests.search.test_zero_shot_order import SPACE as SPACE24, TWINS

    models, walks = [], []
    real_rank, real_walk = zero_shot_order.history_ranking, zero_shot_order._walk_run

    def rank(space, history, options=None, seed=0):
        models.append(sorted({m.device for m in history}))
        return real_rank(space, history, options, seed)

    def walk(model_order, groups):
        walks.append(sorted(g.device for g in groups))
        return real_walk(model_order, groups)

    monkeypatch.setattr(zero_shot_order, "history_ranking", rank)
    monkeypatch.setattr(zero_shot_order, "_walk_run", walk)
    zero_shot_order.choose_order(SPACE24, TWINS, [8], ZeroShotOptions(k=4))
    assert len(walks) == len(models) == 5 and walks == models


def test_gga_seeds_by_the_mean_metric_of_a_configuration_over_its_sources():
    """Mu et al.'s filtering metric, averaged where several sources measured a
    configuration: x=7, at its best on one device (metric 1), comes before x=2, at 0.6 of
    the best on each of three devices (summed: 1.8)."""
    from search.strategies.gga_history import filter_history

    w = Workload("k", [40], ("x",))
    hist = [Measurement(w, "d0", "t", MeasureRecord.ok({"x": 7}, time_ms=1.0))]
    hist += [Measurement(w, f"d{k}", "t", MeasureRecord.ok({"x": x}, time_ms=t))
             for k in (1, 2, 3) for x, t in ((0, 1.0), (2, 1.0 / 0.6))]
    seeds = filter_history(LINE, hist).seeds
    assert [i for i, _ in seeds] == [0, 7, 2] and seeds[2][1] == pytest.approx(0.6)


def _gga(seed: int, population: int = 6):
    from search.strategies.gga import GuidedGAOptions, GuidedGAStrategy

    w = Workload("k", [40], ("x", "y"))
    space = GridSpace({"x": list(range(8)), "y": list(range(8))})
    hist = [Measurement(w, "d0", "t", MeasureRecord.ok({"x": x, "y": y}, time_ms=1.0 + x + y))
            for x in range(8) for y in range(8)]
    o = GuidedGAOptions(history=tuple(hist), population=population, batch_size=4)
    return space, GuidedGAStrategy(space, o, np.random.default_rng(seed))


def test_gga_never_asks_a_configuration_told_before_it_asked():
    """A resumed run tells gga its log's records first (here the history's very seeds):
    none of them is asked again, by seeding, by a guided child or by the random fill."""
    for seed in range(5):
        space, s = _gga(seed)
        told = list(s._seeds[:6])
        s.tell(told, [MeasureRecord.ok(space.get(i), time_ms=5.0 + k) for k, i in enumerate(told)])
        asked = []
        for _ in range(8):
            got = s.ask(4)
            assert not set(got) & set(told) and not set(got) & set(asked)
            asked += got
            s.tell(got, [MeasureRecord.ok(space.get(i), time_ms=1.0 + (i * 7) % 13) for i in got])


def test_gga_selection_keeps_the_best_and_favours_the_fast():
    """After a tell with more measured than ``population``: the population is the best first,
    then ``population - 1`` drawn in proportion to 1 / cost (over many seeds, fast ones far
    more often than slow ones); parents are drawn in proportion to rank (the best most
    often); elite genes come from the ``elite`` best only."""
    space, _ = _gga(0)
    cost = {i: 1.0 + i for i in range(len(space))}  # index 0 the best, 63 the worst
    picked, parents = np.zeros(len(space)), np.zeros(6)
    for seed in range(40):
        _, s = _gga(seed)
        idx = list(range(len(space)))
        s._genes = {i: ("x", space.get(i)["x"]) for i in idx}
        s.tell(idx, [MeasureRecord.ok(space.get(i), time_ms=cost[i]) for i in idx])
        assert s._pop[0] == 0 and len(s._pop) == 6
        assert s._pop[1:] == sorted(s._pop[1:])  # best first: the rank weights rely on it
        assert s._elite_genes == [("x", space.get(i)["x"]) for i in range(s.options.elite)]
        picked[s._pop[1:]] += 1
        for _ in range(20):
            parents[s._pop.index(s._parent())] += 1  # by rank in the population
    assert picked[1:11].sum() > 2 * picked[-10:].sum()
    assert parents[0] > 3 * parents[-1]  # weights 6 : 1


def test_gga_uses_a_record_whose_match_is_exactly_min_match():
    """``min_match`` is a floor: a record of problem [8] scores 0.75 against a target of
    [12] (3 of 4 divisors of 8 divide 12) and is used with ``min_match=0.75``."""
    from search.strategies.gga_history import filter_history, match_score

    w = Workload("k", [8], ("x",))
    hist = [Measurement(w, "d0", "t", MeasureRecord.ok({"x": 4}, time_ms=1.0))]
    assert match_score([8], [12]) == 0.75
    kept = filter_history(LINE, hist, target_problem=[12], min_match=0.75)
    assert [i for i, _ in kept.seeds] == [4] and kept.usable == 1


def test_gga_weighs_the_match_score_to_the_power_omega():
    """A near problem's best (match 0.75) against the exact problem's configuration at 0.6
    of its best: with omega 2 the exact one leads (0.6 > 0.5625), with omega 1 the near one
    (0.75 > 0.6)."""
    from search.strategies.gga_history import filter_history

    near, same = Workload("k", [8], ("x",)), Workload("k", [12], ("x",))
    hist = [Measurement(near, "d0", "t", MeasureRecord.ok({"x": 1}, time_ms=1.0)),
            Measurement(same, "d1", "t", MeasureRecord.ok({"x": 0}, time_ms=1.0)),
            Measurement(same, "d1", "t", MeasureRecord.ok({"x": 2}, time_ms=1.0 / 0.6))]
    order = {omega: [i for i, _ in filter_history(LINE, hist, [12], omega=omega).seeds]
             for omega in (1.0, 2.0)}
    assert order == {2.0: [0, 2, 1], 1.0: [0, 1, 2]}


class _Draws:
    """A generator whose ``random()`` gives scripted values (the history rounds' draws)."""

    def __init__(self, values):
        self.values = list(values)

    def random(self):
        return self.values.pop(0)


def test_a_failed_draw_closes_history_for_good_even_after_a_reopened_round():
    """Once a draw fails, history gets no more draws: a round reopened after a stall
    (``reopen=1``, the models walked) that misses is followed by an inner round, however
    the next draw would fall. Rounds: history (unjudged), its draw fails (0.9 against
    0.5), inner (stalls), reopened history (a miss), inner."""
    from tests.search.test_transfer import SPACE
    from tests.search.test_transfer_model_picks import _Table, _prior

    inner = make_strategy("random", SPACE, {"batch_size": 4}, np.random.default_rng(0))
    s = HistoryGuided(inner, _prior([64, 48]), GuidedOptions(decay=0.5, doubt=1, trust=1.5,
                                                             follow_model=False, reopen=1),
                      _Draws([0.9] + [0.0] * 10))
    first = s.ask(4)
    meas = _Table(first[0])
    s.tell(first, meas.measure([SPACE.get(i) for i in first]))
    counts = []
    for _ in range(3):
        got = s.ask(4)
        s.tell(got, meas.measure([SPACE.get(i) for i in got]))
        counts.append(s.stats()["history"]["history_rounds"])
    assert counts == [1, 2, 2]


def test_trust_one_trusts_a_perfect_twin():
    """``trust=1.0``: the target's twin orders the first 8 measurements perfectly and earns
    the trusted round."""
    prior = HistoryPrior.fit(LINE, _line_hist({"twin": lambda x: 1.0 + x,
                                               "other": lambda x: 1.0 + (x - 20) ** 2}), seed=0)
    s = _rounds(prior, lambda x: 5.0 + x, GuidedOptions(decay=0.0, first_rounds=1, trust=1.0,
                                                        prior_feature=False), batch=8, rounds=3)
    h = s.stats()["history"]
    assert h["trusted"] == "k [40]@twin" and h["history_rounds"] >= 2
