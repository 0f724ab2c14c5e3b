"""A source with many records: the history models (the prior's ranking, zero-shot's
regression) learn from its best and a sample.

The cap keeps ``iobound tune --history`` quick with sources that measured whole large
spaces (a 240,000-configuration gemm space, three sources: 117 s before the first
measurement without it, 38 s with it); it must not change what a source's order says.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from search.db import Measurement, TuningDB, Workload
from search.measure.base import MeasureRecord
from search.grid_space import GridSpace
from search.transfer import HistoryPrior, PriorOptions
from search.cost_model import training_rows
from search.zero_shot import ZeroShotOptions, history_ranking

SPACE = GridSpace({"a": list(range(8)), "b": list(range(6)), "c": [1, 2, 4]})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(1.0, 100.0), min_size=1, max_size=60), st.integers(1, 70),
       st.integers(0, 2**16))
def test_training_rows_keep_the_fastest_half_of_the_cap_and_sample_the_rest(rel, cap, seed):
    rel = np.array(rel)
    rows = training_rows(rel, cap, np.random.default_rng(seed))
    assert len(rows) == min(len(rel), cap)
    assert len(set(rows.tolist())) == len(rows) and np.all(np.diff(rows) > 0)
    fastest = np.argsort(rel, kind="stable")[:min(len(rel), cap) // 2]
    assert set(fastest.tolist()) <= set(rows.tolist())


def _bowl_history(device, at):
    w = Workload("k", [64], SPACE.params)
    return [Measurement(w, device, "t", MeasureRecord.ok(
        SPACE.get(i), time_ms=1.0 + sum((SPACE.get(i)[k] - v) ** 2 for k, v in zip("abc", at))))
        for i in range(len(SPACE))]


def test_a_capped_ranking_model_still_ranks_the_sources_optimum_near_the_top():
    """With 40 of each source's 144 records the model still puts their optimum in its top few."""
    hist = _bowl_history("gpu0", (5, 2, 2)) + _bowl_history("gpu1", (5, 2, 2))
    prior = HistoryPrior.fit(SPACE, hist, options=PriorOptions(max_rows_per_source=40), seed=0)
    top = [SPACE.get(int(i)) for i in prior.ranking[:5]]
    assert {"a": 5, "b": 2, "c": 2} in top
    assert prior.records == len(hist)  # the sources are whole: only the model's rows are capped


def test_under_the_cap_the_ranking_is_the_uncapped_one():
    hist = _bowl_history("gpu0", (1, 4, 1)) + _bowl_history("gpu1", (6, 1, 4))
    big = HistoryPrior.fit(SPACE, hist, options=PriorOptions(max_rows_per_source=144), seed=3)
    default = HistoryPrior.fit(SPACE, hist, seed=3)
    assert big.ranking.tolist() == default.ranking.tolist()


def test_zero_shot_learns_from_the_capped_rows_and_still_ranks_the_optimum_first():
    hist = _bowl_history("gpu0", (2, 3, 4)) + _bowl_history("gpu1", (2, 3, 4))
    ranked, _, used = history_ranking(SPACE, hist, ZeroShotOptions(max_rows_per_source=30), seed=1)
    assert used == 60
    assert {"a": 2, "b": 3, "c": 4} in [SPACE.get(int(i)) for i in ranked[:3]]
    full, _, used_all = history_ranking(SPACE, hist, ZeroShotOptions(), seed=1)
    assert used_all == len(hist)


@pytest.mark.parametrize("cls", [PriorOptions, ZeroShotOptions])
@pytest.mark.parametrize("bad", [0, 2.5, True, float("nan")])
def test_the_cap_must_be_a_positive_integer(cls, bad):
    from iobound.errors import InvalidInputError
    with pytest.raises(InvalidInputError, match="max_rows_per_source"):
        cls(max_rows_per_source=bad)


def test_read_back_records_of_one_workload_share_its_identity(tmp_path):
    """Records read from the database group by workload as the written ones do."""
    with TuningDB(tmp_path / "t.db") as db:
        db.add(_bowl_history("gpu0", (1, 1, 1))[:5])
        got = db.measurements()
    assert len({m.workload for m in got}) == 1
    assert got[0].workload == Workload("k", [64], SPACE.params)
    assert hash(got[0].workload) == hash(Workload("k", [64], tuple(reversed(SPACE.params))))
