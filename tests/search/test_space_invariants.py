"""Invariants of recorded spaces, caches written from records, resumed logs and history
sources, checked against brute force: a ReplaySpace of any value counts and any entry order
indexes and neighbours its configurations as a scan of them does; a cache keeps the last
record of a configuration; a resumed log gives the first record of each configuration and
refuses another measurer's; a source keeps its best time of a configuration measured twice
and is dropped exactly when its match score is below ``min_match``."""

from __future__ import annotations

import itertools
import os
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iobound.errors import InvalidInputError
from search.db import Measurement, Workload
from search.kt_cache import KtCache
from search.kt_cache_write import records_to_cache
from search.measure.base import MeasureRecord, Measurer
from search.log_writer import LogWriter
from search.replay_space import ReplaySpace
from search.resume import load_resume
from search.grid_space import GridSpace
from search.transfer.prior_options import PriorOptions
from search.transfer.sources import source_groups


@st.composite
def recorded(draw):
    """A cache of 1-3 parameters of 1-4 values each, a random subset of the grid in a random
    order (not the grid's), and a neighbourhood."""
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    tune_params = {f"p{k}": list(range(10 * k, 10 * k + n)) for k, n in enumerate(sizes)}
    grid = list(itertools.product(*tune_params.values()))
    chosen = draw(st.lists(st.sampled_from(grid), min_size=1, max_size=len(grid), unique=True))
    entries = [{**dict(zip(tune_params, c)), "time": 1.0 + k} for k, c in enumerate(chosen)]
    return KtCache(tune_params=tune_params, entries=entries), draw(
        st.sampled_from(["hamming", "adjacent"]))


def _brute_neighbours(space, i, hamming):
    a, out = space.get(i), []
    for j in range(len(space)):
        b = space.get(j)
        diff = [p for p in space.params if a[p] != b[p]]
        if len(diff) == 1:
            vals = space.values(diff[0])
            if hamming or abs(vals.index(a[diff[0]]) - vals.index(b[diff[0]])) == 1:
                out.append(j)
    return sorted(out)


@settings(deadline=None, max_examples=40)
@given(recorded())
def test_replay_space_of_any_shape_and_entry_order_matches_brute_force(case):
    """Configuration ``i`` is the ``i``-th recorded one in the order of its values'
    positions in ``tune_params`` (Kernel Tuner's enumeration order, whatever the entries'
    order); ``index`` finds it back, answers None for a grid point not recorded; neighbours
    are those of a scan (adjacent ones falling back to the Hamming ones where a
    configuration has none)."""
    cache, hood = case
    space = ReplaySpace(cache, hood)
    keys = list(cache.tune_params)
    recorded_cfgs = sorted(({k: e[k] for k in keys} for e in cache.entries),
                           key=lambda c: [cache.tune_params[k].index(c[k]) for k in keys])
    assert [space.get(i) for i in range(len(space))] == recorded_cfgs
    assert [space.index(c) for c in recorded_cfgs] == list(range(len(space)))
    for combo in itertools.product(*cache.tune_params.values()):
        cfg = dict(zip(keys, combo))
        if cfg not in recorded_cfgs:
            assert space.index(cfg) is None
    for i in range(len(space)):
        want = _brute_neighbours(space, i, hood == "hamming")
        if not want and hood == "adjacent":
            want = _brute_neighbours(space, i, True)
        assert sorted(space.neighbours(i)) == want


def test_adjacent_neighbours_fall_back_to_hamming_ones():
    """A configuration with no recorded one a step away has its Hamming neighbours."""
    cache = KtCache(tune_params={"a": [1, 2, 3]}, entries=[{"a": 1, "time": 1.0},
                                                          {"a": 3, "time": 2.0}])
    space = ReplaySpace(cache, "adjacent")
    assert space.neighbours(0) == [1] and space.neighbours(1) == [0]


def test_a_cache_of_records_keeps_the_last_record_of_a_configuration():
    """``records_to_cache``: a configuration recorded twice has the later record's entry."""
    recs = [MeasureRecord.ok({"x": 1}, time_ms=3.0), MeasureRecord.ok({"x": 2}, time_ms=1.0),
            MeasureRecord.ok({"x": 1}, time_ms=2.0)]
    cache = records_to_cache(recs, {"x": [1, 2]})
    assert {e["x"]: e["time"] for e in cache.entries} == {1: 2.0, 2: 1.0}


class _Named(Measurer):
    def __init__(self, name: str):
        self.name = name

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=1.0) for c in configs]


def _log(path, space, measurer, records):
    with LogWriter(path, {"space": space.describe(), "measurer": measurer.describe()}) as w:
        for i, rec in records:
            w.append(i, rec)


def test_resume_gives_the_first_record_of_each_configuration():
    """A configuration logged twice (a run resumed and measuring it again) resumes with its
    first record; every logged configuration of the space is there."""
    space = GridSpace({"a": [1, 2, 3]})
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "run.jsonl")
        _log(path, space, _Named("bowl"), [(1, MeasureRecord.ok({"a": 2}, time_ms=5.0)),
                                          (0, MeasureRecord.ok({"a": 1}, time_ms=4.0)),
                                          (1, MeasureRecord.ok({"a": 2}, time_ms=1.0))])
        known = load_resume(path, space, _Named("bowl"))
    assert {i: r.time_ms for i, r in known.items()} == {1: 5.0, 0: 4.0}


@pytest.mark.parametrize("logged, now", [("model", "cuda"), ("cuda", "model"), ("a", "b")])
def test_resume_refuses_a_log_of_another_measurer(logged, now):
    """A log measured by one measurer (the analytic ``model`` included) is never resumed by
    another: its numbers are not this run's."""
    space = GridSpace({"a": [1, 2]})
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "run.jsonl")
        _log(path, space, _Named(logged), [(0, MeasureRecord.ok({"a": 1}, time_ms=1.0))])
        with pytest.raises(InvalidInputError, match="measured with"):
            load_resume(path, space, _Named(now))


def test_resume_takes_a_log_whose_header_names_no_measurer():
    """A field the header does not record (an older log's) is not compared: a measurer
    description with no name resumes under any measurer."""
    space = GridSpace({"a": [1, 2, 3]})
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "run.jsonl")
        with LogWriter(path, {"space": space.describe(), "measurer": {"estimate": False}}) as w:
            w.append(1, MeasureRecord.ok({"a": 2}, time_ms=1.0))
        assert sorted(load_resume(path, space, _Named("bowl"))) == [1]


@settings(deadline=None, max_examples=30)
@given(st.lists(st.tuples(st.integers(0, 3), st.floats(0.1, 10.0)), min_size=1, max_size=12))
def test_a_source_keeps_its_best_time_of_each_configuration(rows):
    """A configuration a source measured several times has its best time, relative to the
    source's best (brute force), and the source lists each configuration once, fastest first."""
    space, w = GridSpace({"x": [0, 1, 2, 3]}), Workload("k", [4], ("x",))
    hist = [Measurement(w, "gpu", "t", MeasureRecord.ok({"x": x}, time_ms=t)) for x, t in rows]
    (g,) = source_groups(space, hist, target_problem=[4])
    best = {}
    for x, t in rows:
        best[x] = min(best.get(x, t), t)
    overall = min(best.values())
    got = dict(zip(g.indices.tolist(), g.rel_time.tolist()))
    assert got == pytest.approx({x: t / overall for x, t in best.items()})
    assert list(g.rel_time) == sorted(g.rel_time)


@pytest.mark.parametrize("min_match, kept", [(0.7, True), (0.75, True), (0.8, False)])
def test_a_source_is_dropped_exactly_when_its_match_is_below_min_match(min_match, kept):
    """``min_match`` bounds the match score itself (0.75 for [8] against [12]), whatever
    ``omega`` the weight is raised to."""
    space, w = GridSpace({"x": [0, 1]}), Workload("k", [8], ("x",))
    hist = [Measurement(w, "gpu", "t", MeasureRecord.ok({"x": 0}, time_ms=1.0))]
    groups = source_groups(space, hist, target_problem=[12],
                           options=PriorOptions(min_match=min_match))
    assert bool(groups) == kept
    if kept:
        assert groups[0].weight == pytest.approx(0.75 ** 2)
