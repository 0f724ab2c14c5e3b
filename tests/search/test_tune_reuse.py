"""Reusing earlier runs' measurements (``tune(..., reusable=...)``, ``iobound tune --history DB
--reuse``): the same run, fewer measurements."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from search.cli.main import main
from search.measure.base import MeasureRecord, Measurer
from search.records import read_log
from search.grid_space import GridSpace
from search.tuner import tune

SPACE = GridSpace({"a": list(range(6)), "b": list(range(5))})


class Landscape(Measurer):
    """A deterministic measurer that counts what it measured; some configurations fail."""

    name = "landscape"

    def __init__(self):
        self.measured: list[dict] = []

    def record(self, c: dict) -> MeasureRecord:
        if (c["a"] + c["b"]) % 7 == 6:
            return MeasureRecord.failed(c, "runtime_error", "launch failed")
        return MeasureRecord.ok(c, time_ms=1.0 + (c["a"] - 4) ** 2 + 0.5 * (c["b"] - 1) ** 2
                                + 0.01 * c["a"] * c["b"])

    def measure(self, configs):
        self.measured += [dict(c) for c in configs]
        return [self.record(c) for c in configs]


def _trajectory(res):
    return [(t.index, t.record.status, t.record.time_ms) for t in res.trials]


@settings(max_examples=40, deadline=None)
@given(strategy=st.sampled_from(["explorer", "random", "grid", "ga"]), seed=st.integers(0, 50),
       budget=st.integers(1, 20), earlier=st.sets(st.integers(0, len(SPACE) - 1), max_size=25))
def test_reuse_changes_nothing_but_what_is_measured(tmp_path_factory, strategy, seed, budget,
                                                    earlier):
    """With the earlier records of a deterministic measurer to reuse, the run asks, finds
    and reports exactly what it does without them; only what they lack is measured; a
    trial is marked reused exactly when they answered it; the log holds every trial, so
    resuming it measures nothing and needs no database."""
    plain = tune(SPACE, Landscape(), strategy, budget=budget, seed=seed)
    meas = Landscape()
    reusable = {i: meas.record(SPACE.get(i)) for i in earlier}
    log = tmp_path_factory.mktemp("reuse") / "run.jsonl"
    res = tune(SPACE, meas, strategy, budget=budget, seed=seed, reusable=reusable, log=log)
    assert _trajectory(res) == _trajectory(plain)
    assert (res.best is None) == (plain.best is None) and res.evaluations == plain.evaluations
    assert res.best is None or res.best.index == plain.best.index
    assert [t.reused for t in res.trials] == [t.index in earlier for t in res.trials]
    assert sorted(SPACE.index(c) for c in meas.measured) == sorted(
        t.index for t in res.trials if t.index not in earlier)
    assert sorted(e.index for e in read_log(log).entries) == sorted(t.index for t in res.trials)
    again = Landscape()
    resumed = tune(SPACE, again, strategy, budget=budget, seed=seed, resume=log)
    # a spent log's trials come in log order (reused ones are logged first in a round)
    assert sorted(_trajectory(resumed)) == sorted(_trajectory(plain)) and again.measured == []


def test_reused_records_never_asked_for_are_no_trials():
    """An earlier run's record the strategy never asks for is not this run's."""
    meas = Landscape()
    plain = tune(SPACE, Landscape(), "grid", budget=3, seed=0)
    never = next(i for i in range(len(SPACE)) if i not in {t.index for t in plain.trials})
    res = tune(SPACE, meas, "grid", budget=3, seed=0,
               reusable={never: meas.record(SPACE.get(never))})
    assert _trajectory(res) == _trajectory(plain) and res.reused == 0 and len(meas.measured) == 3


def _cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_tune_reuse_from_the_database_measures_only_what_is_new(capsys, tmp_path):
    """A second `tune --history DB --reuse` of a layer takes what the first measured from
    the database: it reports them as reused, stores nothing twice, and its best is at
    least the first run's."""
    from search.db import TuningDB
    db = str(tmp_path / "t.db")
    base = ["tune", "--layer", "cin=8,hin=8,cout=8,kh=3,pad=1", "--device", "v100", "--measure",
            "model", "--history", db, "--out-dir", str(tmp_path), "--json", "--no-verify"]
    code, out, _ = _cli(capsys, *base, "--budget", "12")
    first = json.loads(out)
    with TuningDB(db, readonly=True) as t:
        stored = t.count()
    assert code == 0 and first["reused"] == 0 and stored == 12
    code, out, _ = _cli(capsys, *base, "--budget", "16", "--reuse", "--seed", "1")
    second = json.loads(out)
    assert code == 0 and second["reused"] > 0 and second["evaluations"] == 16
    assert second["best"]["time_ms"] <= first["best"]["time_ms"]
    with TuningDB(db, readonly=True) as t:
        assert t.count() == stored + 16 - second["reused"]


def test_reuse_without_a_database_is_one_line(capsys):
    code, out, err = _cli(capsys, "tune", "--layer", "cin=8,hin=8,cout=8,kh=3,pad=1", "--reuse")
    assert code == 2 and "--history DB" in err and len(err.strip().splitlines()) == 1
