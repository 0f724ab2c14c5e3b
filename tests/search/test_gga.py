"""Tests of the history-guided GA (``gga``): seeding, fallback, and never a bad index."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from search.db import Measurement, TuningDB, Workload
from search.measure.base import MeasureRecord, Measurer
from search.grid_space import GridSpace
from search.strategies import make_options, make_strategy
from search.strategies.gga import GuidedGAOptions, GuidedGAStrategy, options_from_db
from search.strategies.gga_history import filter_history, match_score
from search.tuner import tune

SPACE = GridSpace({"a": list(range(6)), "b": list(range(5)), "c": [1, 2, 4]})
W = Workload("k", [64, 64], SPACE.params)


def _hist(device: str, cost, problem=(64, 64)) -> list[Measurement]:
    w = Workload("k", list(problem), SPACE.params)
    return [Measurement(w, device, "t", MeasureRecord.ok(SPACE.get(i), time_ms=cost(SPACE.get(i))))
            for i in range(len(SPACE))]


def _bowl(cfg) -> float:
    return 1.0 + (cfg["a"] - 4) ** 2 + (cfg["b"] - 1) ** 2 + (cfg["c"] - 2) ** 2


class Bowl(Measurer):
    """A measurer over SPACE with its optimum at a=4, b=1, c=2."""

    name = "bowl"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=_bowl(c)) for c in configs]


def test_without_history_it_is_the_plain_ga():
    """No usable history: the same indices as ga for the same seed, and stats say why."""
    a = tune(SPACE, Bowl(), "ga", budget=40, seed=3)
    g = GuidedGAStrategy(SPACE, rng=np.random.default_rng(3))
    b = tune(SPACE, Bowl(), g, budget=40)
    assert [t.index for t in a.trials] == [t.index for t in b.trials]
    st_ = g.stats()["history"]
    assert st_["used"] is False and st_["fallback"] == "plain ga" and st_["reason"] == "no history given"


def test_history_of_far_problems_is_filtered_out():
    """Records whose match score is below min_match are not used (plain ga again)."""
    hist = _hist("other", _bowl, problem=(7, 7))  # 7 shares only the divisor 1 with 64
    assert match_score([7, 7], [64, 64]) == 0.5
    g = GuidedGAStrategy(SPACE, GuidedGAOptions(history=tuple(hist), target_problem=[64, 64],
                                                min_match=0.6), np.random.default_rng(0))
    assert g.stats()["history"]["used"] is False and g.stats()["history"]["records"] == len(hist)


def test_first_asks_are_the_best_history_configs():
    """With history, the first generation is the history's best configurations, best first."""
    hist = _hist("other", _bowl)
    g = make_strategy("gga", SPACE, {"history": hist, "target_problem": [64, 64], "population": 4,
                                     "seed_share": 1.0}, np.random.default_rng(0))
    first = g.ask(4)
    assert [_bowl(SPACE.get(i)) for i in first] == sorted(_bowl(SPACE.get(i)) for i in first)
    assert SPACE.get(first[0]) == {"a": 4, "b": 1, "c": 2}
    assert g.stats()["history"] == {"records": len(hist), "usable": len(hist), "devices": ["other"],
                                    "used": True}


def test_seed_share_mixes_history_and_random_starts():
    """seed_share 0.5: half of the first generation from history, the rest random."""
    g = GuidedGAStrategy(SPACE, GuidedGAOptions(history=tuple(_hist("o", _bowl)), population=8,
                                                seed_share=0.5), np.random.default_rng(0))
    g.ask(8)
    assert (g.stats()["seeded"], g.stats()["random"]) == (4, 4)


def test_relative_throughput_keeps_slow_devices_visible():
    """A slow device's best config scores as high as a fast device's best (Th is relative)."""
    fast = _hist("fast", lambda c: 0.01 * (1 + c["a"]))
    slow = _hist("slow", lambda c: 100.0 * (1 + (5 - c["a"])))
    f = filter_history(SPACE, fast + slow)
    top = {SPACE.get(i)["a"] for i, m in f.seeds if m == f.seeds[0][1]}
    assert top == {0, 5} and f.devices == ("fast", "slow")


def test_history_finds_the_optimum_sooner_than_plain_ga():
    """With the optimum's neighbourhood in history, gga is at the optimum within the first batch."""
    hist = tuple(_hist("other", lambda c: _bowl(c) * 3.0))
    res = tune(SPACE, Bowl(), "gga", budget=8, seed=0,
               options={"history": hist, "batch_size": 8})
    assert res.best.record.time_ms == 1.0


def test_options_from_db_reads_only_this_space(tmp_path):
    """options_from_db: records of the same parameter names, other devices excludable."""
    with TuningDB(tmp_path / "t.db") as db:
        db.add(_hist("a", _bowl)[:5] + _hist("b", _bowl)[:3])
        db.add([Measurement(Workload("k", [64, 64], ("z",)), "a", "t",
                            MeasureRecord.ok({"z": 1}, time_ms=1.0))])
    opts = options_from_db(tmp_path / "t.db", SPACE, [64, 64], exclude_devices=["b"], batch_size=4)
    assert len(opts.history) == 5 and {m.device for m in opts.history} == {"a"}
    assert opts.batch_size == 4 and opts == make_options("gga", {
        "history": list(opts.history), "target_problem": [64, 64], "batch_size": 4})


history_rows = st.lists(st.tuples(st.integers(0, 7), st.integers(0, 6), st.sampled_from([1, 2, 3, 4]),
                                  st.floats(0.01, 100), st.sampled_from(["d1", "d2"]),
                                  st.sampled_from([[64, 64], [32, 48], [7, 9]])), max_size=40)


@given(history_rows, st.integers(0, 2**16), st.lists(st.integers(1, 9), min_size=1, max_size=12),
       st.floats(0, 1), st.floats(0, 1))
def test_never_an_invalid_or_repeated_index(rows, seed, batches, crossover, elite_mutation):
    """Whatever the history (configs outside the space too), asks are valid, distinct and new."""
    hist = tuple(Measurement(Workload("k", p, SPACE.params), d, "t",
                             MeasureRecord.ok({"a": a, "b": b, "c": c}, time_ms=t))
                 for a, b, c, t, d, p in rows)
    opts = GuidedGAOptions(history=hist, target_problem=[64, 64], population=4, elite=2,
                           crossover=crossover, elite_mutation=elite_mutation)
    s = GuidedGAStrategy(SPACE, opts, np.random.default_rng(seed))
    asked: set[int] = set()
    for n in batches:
        got = s.ask(n)
        assert len(got) == min(n, len(SPACE) - len(asked))
        assert len(set(got)) == len(got) and not set(got) & asked
        assert all(isinstance(i, int) and 0 <= i < len(SPACE) for i in got)
        asked.update(got)
        s.tell(got, Bowl().measure([SPACE.get(i) for i in got]))


@pytest.mark.parametrize("bad", [{"elite": 0}, {"crossover": 1.5}, {"min_match": -0.1}])
def test_bad_options_are_refused(bad):
    """Out-of-range options raise ValueError naming the rule."""
    with pytest.raises(ValueError):
        make_options("gga", bad)
