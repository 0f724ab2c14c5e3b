"""What a session takes from ``--history`` per strategy (search.session.history_use).

Reference: the module's documented contract: the model-based and genetic strategies
(explorer, sa, ga) run under a history prior, gga and zero_shot take the records in their
options, random and grid do not learn; zero-shot without a usable record is refused,
saying what the database holds. The database is filled by importing a recorded space.
"""

from __future__ import annotations

import pytest

from iobound.errors import InvalidInputError
from search.db import TuningDB
from search.db.importer import import_files
from search.history import History
from search.measure.base import MeasureRecord
from search.session import (Builders, HistoryUse, Observer, TuneSettings, history_key, history_options,
                            tune_replay)
from search.session.history_use import check_zero_shot_db, reusable_records, telling_fallback
from search.strategies import make_strategy
from tests.search.test_history_use import _other_device_cache


@pytest.fixture
def other_device_db(tmp_path):
    """A database holding the synthetic space recorded on another device."""
    db = tmp_path / "h.db"
    with TuningDB(db) as handle:
        import_files(handle, [_other_device_cache(tmp_path)])
    return str(db)


@pytest.mark.parametrize("strategy", ["explorer", "sa", "ga"])
def test_model_based_and_genetic_strategies_run_under_a_history_prior(strategy, other_device_db,
                                                                      synth_space):
    """Each guided strategy gets a prior made from the other device's records, and the
    history is reported as used, with that device."""
    _, use, prior = history_options(TuneSettings(strategy=strategy, history=other_device_db),
                                    synth_space, [64, 64])
    assert prior is not None and use.used and use.records > 0
    assert use.devices == ("Other GPU",)


@pytest.mark.parametrize("strategy", ["random", "grid"])
def test_plain_strategies_get_no_prior(strategy, other_device_db, synth_space):
    """random and grid neither get a prior nor use the records they are told of."""
    _, use, prior = history_options(TuneSettings(strategy=strategy, history=other_device_db),
                                    synth_space, None)
    assert prior is None and not use.used and use.records > 0


def test_zero_shot_on_a_database_of_other_parameters_says_so(other_params_db, synth_space):
    """Zero-shot with only workloads of other parameter names is refused, saying the
    database holds none of this space and that the others have other parameters."""
    with pytest.raises(InvalidInputError, match=r"holds none \(only 1 workload\(s\) of other"):
        history_options(TuneSettings(strategy="zero_shot", history=other_params_db),
                        synth_space, None)


def test_gga_gets_every_usable_record_and_the_target_problem(other_device_db, synth_space):
    """gga's options carry all the usable records and the target problem (it matches
    problems); zero_shot's carry the records, the target problem (which sources measured
    it) and the budget as the K its order is chosen for."""
    options, use, prior = history_options(TuneSettings(strategy="gga", history=other_device_db),
                                          synth_space, [64, 64])
    assert prior is None and use.used and len(options.history) == use.records > 1
    assert options.target_problem == [64, 64]
    options, use, _ = history_options(TuneSettings(strategy="zero_shot", history=other_device_db,
                                                   budget=7), synth_space, [64, 64])
    assert len(options.history) == use.records > 1 and use.used
    assert options.target_problem == [64, 64] and options.k == 7


def test_the_devices_of_the_history_are_all_named_in_order(two_device_db, synth_space):
    """The history use names every device the usable records come from, sorted."""
    db, _, _ = two_device_db
    _, use, _ = history_options(TuneSettings(strategy="gga", history=db), synth_space, [64, 64])
    assert use.devices == ("Second GPU", "Synthetic GPU")


def test_a_plain_strategy_on_an_empty_database_has_no_notice(tmp_path, synth_space):
    """With no records there is nothing a plain strategy could have learnt from: no notice."""
    db = tmp_path / "empty.db"
    TuningDB(db).close()
    _, use, _ = history_options(TuneSettings(strategy="random", history=str(db)), synth_space,
                                None)
    assert use.records == 0 and use.notice is None and not use.used


class _Notes(Observer):
    def __init__(self):
        self.notes = []

    def notice(self, text):
        self.notes.append(text)


def test_gga_without_records_of_this_space_says_the_database_has_none(other_params_db,
                                                                      synth_cache_path):
    """gga on a database with no records of this parameter space runs as plain ga, saying
    that the database holds none, and the history is reported as not used."""
    notes = _Notes()
    rep = tune_replay(str(synth_cache_path), TuneSettings(strategy="gga", budget=2,
                                                          history=other_params_db),
                      observer=notes)
    assert any("holds no history records of this parameter space" in n and "plain ga" in n
               for n in notes.notes), notes.notes
    assert not rep.history_use.used


def test_a_history_strategy_that_falls_back_is_named():
    """telling_fallback appends the name of a history strategy whose stats say it fell
    back (and tells why), and leaves others alone."""
    class Fell:
        name = "gga"

        def stats(self):
            return {"history": {"fallback": "plain ga", "reason": "no match"}}

    class Plain:
        name = "random"

        def stats(self):
            return {"history": {"fallback": "x", "reason": "-"}}

    notes, fell_back = _Notes(), []
    use = HistoryUse(records=5, devices=("A",), used=True)
    settings = TuneSettings(strategy="gga", history="h.db")
    telling_fallback(lambda *a: Fell(), notes, settings, use, fell_back)("gga", None, None, None)
    telling_fallback(lambda *a: Plain(), notes, settings, use, fell_back)("random", None, None,
                                                                          None)
    assert fell_back == ["gga"] and notes.notes == ["gga: no match; running as plain ga"]


def test_zero_shot_refuses_an_empty_file_or_database_and_creates_nothing(tmp_path):
    """Zero-shot with a --history that is an empty file, or a database without a workload,
    is refused before anything runs, and the empty file is left as it was."""
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    with pytest.raises(InvalidInputError, match="holds none"):
        check_zero_shot_db(TuneSettings(strategy="zero_shot", history=str(empty)))
    assert empty.stat().st_size == 0
    db = tmp_path / "schema-only.db"
    TuningDB(db).close()
    with pytest.raises(InvalidInputError, match="holds none"):
        check_zero_shot_db(TuneSettings(strategy="zero_shot", history=str(db)))


def test_zero_shot_without_a_database_is_refused_as_bad_input(synth_cache_path):
    """Zero-shot with no --history at all: the early database check has nothing to open,
    and the session refuses it as bad input naming --history."""
    check_zero_shot_db(TuneSettings(strategy="zero_shot"))
    with pytest.raises(InvalidInputError, match="give --history DB"):
        tune_replay(str(synth_cache_path), TuneSettings(strategy="zero_shot", budget=2))


def test_reusable_records_are_configurations_of_the_space(tmp_path, synth_space, synth_measurer):
    """--reuse answers only configurations of this space: a record the database holds under
    the key for a configuration the space lacks is left out; each index maps to its own
    configuration's record."""
    db = str(tmp_path / "h.db")
    key = history_key(synth_space, synth_measurer)
    inside = [synth_space.get(i) for i in (0, 5, 9)]
    outside = {"bx": 256, "by": 4, "tile": 1, "shm": 0}  # bx*by > 512: not recorded
    assert synth_space.index(outside) is None
    with History(db) as h:
        # the file's own records of the configurations inside (a replay reuses only what
        # its file records alike: tests/search/test_workflow_replay_reuse_same_name.py)
        h.add(key, synth_measurer.measure(inside) + [MeasureRecord.ok(outside, time_ms=1.0)])
    got = reusable_records(TuneSettings(strategy="random", history=db, reuse=True), synth_space,
                           synth_measurer)
    assert sorted(got) == [0, 5, 9] and all(got[i].config == synth_space.get(i) for i in got)


def test_a_strategy_that_fell_back_despite_records_is_reported_as_not_using_them(
        other_device_db, synth_cache_path):
    """gga given usable records that still runs as plain ga (its stats say so): the run's
    history use says the history was not used, and the notice gives the strategy's reason."""
    def build(name, space, options, rng):
        strat = make_strategy(name, space, options, rng)
        stats = strat.stats
        strat.stats = lambda: {**stats(), "history": {"fallback": "plain ga", "reason": "why"}}
        return strat

    notes = _Notes()
    rep = tune_replay(str(synth_cache_path),
                      TuneSettings(strategy="gga", budget=2, history=other_device_db),
                      observer=notes, builders=Builders(strategy=build))
    assert rep.history_use.records > 0 and not rep.history_use.used
    assert notes.notes == ["gga: why; running as plain ga"]
