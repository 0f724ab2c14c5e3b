"""A history record whose knob is a number missing from a mixed or string value list has
no row (None: unknown), and zero-shot keeps the rest of the history; zero-shot falls back
to a random order only when no record can train its model (reviewer finding)."""

from __future__ import annotations

import numpy as np
import pytest

from search.db import Measurement, Workload
from search.measure.base import MeasureRecord
from search.grid_space import GridSpace
from search.strategies.zero_shot import ZeroShotStrategy, ZeroShotStrategyOptions
from search.transfer.rows import feature_row

SPACE = GridSpace({"a": [1, 2, "max"], "b": [0, 1, 2, 3]})


def test_feature_row_of_a_value_outside_a_non_numeric_list_is_none():
    assert feature_row(SPACE, {"a": 3, "b": 0}, None) is None
    assert feature_row(GridSpace({"a": ["x", "y"]}), {"a": 7}, None) is None
    assert feature_row(SPACE, {"a": "max", "b": 5}, None).tolist() == [2.0, 5.0]
    assert feature_row(GridSpace({"a": [1, 2]}), {"a": 7}, None).tolist() == [7.0]


def _history(*extra_configs):
    w = Workload("k", [64], SPACE.params)
    recs = [Measurement(w, "g0", "t", MeasureRecord.ok(SPACE.get(i), time_ms=1.0 + i))
            for i in range(len(SPACE))]
    recs += [Measurement(w, "g0", "t", MeasureRecord.ok(c, time_ms=9.0)) for c in extra_configs]
    return tuple(recs)


def test_zero_shot_keeps_its_history_when_one_record_has_an_unknown_value():
    s = ZeroShotStrategy(SPACE, ZeroShotStrategyOptions(history=_history({"a": 3, "b": 0})),
                         np.random.default_rng(0))
    stats = s.stats()
    assert stats["used"] and "fallback" not in stats, stats


def test_history_prior_sources_survive_a_record_with_an_unknown_value():
    from search.transfer.sources import source_groups
    assert len(source_groups(SPACE, _history({"a": 3, "b": 0}), [64])) == 1


def test_zero_shot_without_usable_history_is_random():
    w = Workload("k", [64], SPACE.params)
    hist = (Measurement(w, "g0", "t", MeasureRecord.ok({"a": 3, "b": 0}, time_ms=1.0)),)
    s = ZeroShotStrategy(SPACE, ZeroShotStrategyOptions(history=hist), np.random.default_rng(0))
    assert s.stats()["fallback"] == "random order"
    assert sorted(s.ask(len(SPACE))) == list(range(len(SPACE)))


def test_zero_shot_raises_an_error_that_is_not_about_missing_history(monkeypatch):
    from iobound.errors import InvalidInputError
    import search.zero_shot_order as order

    def broken(*args, **kwargs):
        raise InvalidInputError("predicted costs must not be NaN")

    monkeypatch.setattr(order, "zero_shot_ranking", broken)
    with pytest.raises(InvalidInputError, match="NaN"):
        ZeroShotStrategy(SPACE, ZeroShotStrategyOptions(history=_history()),
                         np.random.default_rng(0))
