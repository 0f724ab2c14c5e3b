"""Arguments of the history entry points: refused clearly (InvalidInputError naming the
argument) where they used to fail later with a TypeError, an AttributeError, a numpy or
an XGBoost error; ``seed=None`` and a mapping of options accepted like elsewhere."""

from __future__ import annotations

import numpy as np
import pytest

from iobound.errors import InvalidInputError
from search.db import Measurement, TuningDB, Workload
from search.measure.base import MeasureRecord
from search.session import TuneSettings
from search.grid_space import GridSpace
from search.strategies import make_options, make_strategy
from search.strategies.gga import GuidedGAOptions
from search.strategies.zero_shot import ZeroShotStrategyOptions
from search.transfer import GuidedOptions, HistoryGuided, HistoryPrior, transfer_options
from search.transfer import with_history

SPACE = GridSpace({"x": list(range(12))})
W = Workload("k", [12], ("x",))
HIST = [Measurement(W, d, "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + abs(x - b)))
        for d, b in (("gpu0", 3), ("gpu1", 8)) for x in range(12)]
PRIOR = HistoryPrior.fit(SPACE, HIST, seed=0)


def _inner(seed=0):
    return make_strategy("random", SPACE, {"batch_size": 3}, np.random.default_rng(seed))


def _asks(s, rounds=4) -> list[list[int]]:
    out = []
    for _ in range(rounds):
        got = s.ask(3)
        s.tell(got, [MeasureRecord.ok(SPACE.get(i), time_ms=1.0 + abs(i - 5)) for i in got])
        out.append(got)
    return out


def test_seed_none_is_seed_0_as_in_tune():
    """``seed=None`` runs as ``seed=0`` (what :func:`search.tuner.tune` does with it)."""
    a = _asks(with_history(_inner(), PRIOR, GuidedOptions(lottery=True), seed=None))
    b = _asks(with_history(_inner(), PRIOR, GuidedOptions(lottery=True), seed=0))
    assert a == b


@pytest.mark.parametrize("seed", [-1, 1.5, 2**70, "1", True])
def test_a_bad_seed_is_refused(seed):
    """with_history and transfer_options: the seed is an int in 0..2**63-1."""
    with pytest.raises(InvalidInputError, match="seed"):
        with_history(_inner(), PRIOR, seed=seed)
    with pytest.raises(InvalidInputError, match="seed"):
        transfer_options(TuningDB(":memory:"), SPACE, seed=seed)
    with pytest.raises(InvalidInputError, match="seed"):
        HistoryPrior.fit(SPACE, HIST, seed=seed)


def test_options_as_a_mapping_are_guided_options():
    """A mapping of GuidedOptions fields is taken like make_strategy takes option dicts."""
    a = _asks(with_history(_inner(), PRIOR, {"decay": 0.5, "lottery": True}, seed=3))
    b = _asks(with_history(_inner(), PRIOR, GuidedOptions(decay=0.5, lottery=True), seed=3))
    assert a == b
    s = HistoryGuided(_inner(), PRIOR, {"decay": 0.5}, np.random.default_rng(0))
    assert s.guided == GuidedOptions(decay=0.5)


@pytest.mark.parametrize("options, text", [({"decai": 0.5}, "unknown option 'decai'"),
                                           ({1: 0.5}, "unknown option 1"),
                                           ({"decay": 2.0}, "decay must be"),
                                           ("decay=0.5", "options must be")])
def test_bad_options_are_refused(options, text):
    """Unknown keys (with the allowed ones), bad values and other types: refused."""
    with pytest.raises(InvalidInputError, match=text):
        with_history(_inner(), PRIOR, options)
    with pytest.raises(InvalidInputError, match=text):
        with_history(_inner(), None, options)


@pytest.mark.parametrize("strategy, prior, text", [
    (_inner(), "x", "prior must be a HistoryPrior or None"),
    (_inner(), HIST, "prior must be a HistoryPrior or None"),
    (None, PRIOR, "strategy must be a Strategy"),
    (None, None, "strategy must be a Strategy"),
    ("explorer", PRIOR, "strategy must be a Strategy"),
])
def test_strategy_and_prior_of_another_type_are_refused(strategy, prior, text):
    """The strategy to wrap and the prior: refused by type, whether or not there is a prior."""
    with pytest.raises(InvalidInputError, match=text):
        with_history(strategy, prior)


@pytest.mark.parametrize("history, text", [
    (None, "history must be"), (5, "history must be"), ("abc", "history must be"),
    ({"a": 1}, "history must be"), (["x"], r"history\[0\] must be"),
    ([HIST[0], {"x": 1}], r"history\[1\] must be")])
@pytest.mark.parametrize("cls", [GuidedGAOptions, ZeroShotStrategyOptions])
def test_history_of_other_things_is_refused_when_the_options_are_made(cls, history, text):
    """``history`` is a sequence of search.db.Measurement records, checked at construction."""
    with pytest.raises(InvalidInputError, match=text):
        cls(history=history)


@pytest.mark.parametrize("strategy", ["gga", "zero_shot"])
@pytest.mark.parametrize("history", [["x"], 5])
def test_tune_settings_refuse_such_history_options(strategy, history):
    """Through TuneSettings and make_options (CLI, JSON) too, before anything runs."""
    with pytest.raises(InvalidInputError, match="history"):
        TuneSettings(strategy=strategy, options={"history": history})
    with pytest.raises(InvalidInputError, match="history"):
        make_options(strategy, {"history": history})


def test_history_records_are_kept_as_a_tuple():
    """A list or any iterable of records becomes the tuple the options hold."""
    assert GuidedGAOptions(history=iter(HIST[:2])).history == tuple(HIST[:2])
    assert ZeroShotStrategyOptions(history=HIST[:3]).history == tuple(HIST[:3])


def test_reading_history_from_a_path_never_creates_a_database(tmp_path):
    """transfer_options and gga's options_from_db refuse a path with no database (a typo
    read as "no history" would run without it, silently) and leave no file there."""
    from search.strategies.gga import options_from_db
    for read in (lambda p: transfer_options(p, SPACE), lambda p: options_from_db(p, SPACE)):
        path = tmp_path / "typo.db"
        with pytest.raises(InvalidInputError, match="typo.db: no such database"):
            read(path)
        assert not path.exists()
    existing = tmp_path / "t.db"
    TuningDB(existing).close()
    assert transfer_options(existing, SPACE)[1].records == 0
    assert options_from_db(existing, SPACE).history == ()
