"""A replayed space's session and the session reports (search.session.replay, .reports).

References: the documented contracts: the replayed file is an input that no output may
overwrite (search.outputs.check_distinct_files); an interrupt while the finished run is
reported says where its measurements are (the resumed log); a report's JSON carries
whatever history it holds, where the run was stored and what the strategy was given, as
the outcome dataclasses hold them.
"""

from __future__ import annotations

import dataclasses

import pytest

from iobound.errors import InvalidInputError
from search.history import HistoryKey
from search.interrupts import Interrupted
from search.kt_cache import load_cache
from search.session import (HistoryOutcome, HistoryUse, Observer, ReplayReport, TuneSettings,
                            tune_replay)


@pytest.mark.parametrize("given", ["str", "Path", "loaded"])
def test_an_export_over_the_replayed_file_is_refused(synth_cache_path, given):
    """--export-cache naming the replayed file (given as a path, str or Path, or loaded
    from it) is refused before anything runs, and the file is left as it was (a Path was
    written over)."""
    before = synth_cache_path.read_bytes()
    cache = {"str": str(synth_cache_path), "Path": synth_cache_path,
             "loaded": load_cache(synth_cache_path)}[given]
    with pytest.raises(InvalidInputError, match="also given as --measure replay:FILE"):
        tune_replay(cache, TuneSettings(strategy="random", budget=2,
                                        export_cache=str(synth_cache_path)))
    assert synth_cache_path.read_bytes() == before


def test_an_interrupt_while_reporting_names_the_resumed_log(tmp_path, synth_cache_path):
    """Ctrl-C while the finished run is reported: the run is kept in the log it resumed,
    which the Interrupted names."""
    log = str(tmp_path / "run.jsonl")
    tune_replay(str(synth_cache_path), TuneSettings(strategy="random", budget=2, log=log))

    class Stop(Observer):
        def finished(self, report):
            raise KeyboardInterrupt

    with pytest.raises(Interrupted) as caught:
        tune_replay(str(synth_cache_path), TuneSettings(strategy="random", budget=4, resume=log),
                    observer=Stop())
    assert (caught.value.measurements, caught.value.log) == (4, log)


def test_a_replay_report_carries_its_history_in_its_json(tmp_path, synth_cache_path):
    """The replay report's JSON holds where the run was stored (with the best ever) and
    what history the strategy was given, as its outcome objects say."""
    rep = tune_replay(str(synth_cache_path),
                      TuneSettings(strategy="random", budget=3, history=str(tmp_path / "h.db")))
    d = rep.to_dict()
    assert d["history"] == {**rep.history.to_dict(), **rep.history_use.to_dict()}
    assert d["history"]["best_ever_ms"] == rep.result.best.record.time_ms


@pytest.mark.parametrize("stored, used", [(True, False), (False, True), (True, True)])
def test_either_history_outcome_alone_is_in_the_json(synth_cache_path, stored, used):
    """A report holding only where it was stored, or only what history was given, still
    says it under "history"; one holding neither has no "history"."""
    rep = tune_replay(str(synth_cache_path), TuneSettings(strategy="random", budget=2))
    outcome = HistoryOutcome("h.db", HistoryKey("L", "gpu", "replay"), 0.5)
    use = HistoryUse(records=3, devices=("A",), used=False)
    assert "history" not in rep.to_dict()
    made = dataclasses.replace(rep, history=outcome if stored else None,
                               history_use=use if used else None)
    assert isinstance(made, ReplayReport)
    want = {**(outcome.to_dict() if stored else {}), **(use.to_dict() if used else {})}
    assert made.to_dict()["history"] == want


def test_gga_on_a_replay_matches_against_the_files_problem(tmp_path, synth_cache_path,
                                                           two_device_db):
    """gga replaying a file is given the file's problem size as the problem to match the
    history's problems against."""
    from search.session import Builders
    from search.strategies import make_strategy
    seen = []

    def build(name, space, options, rng):
        seen.append(options.target_problem)
        return make_strategy(name, space, options, rng)

    db, _, _ = two_device_db
    tune_replay(str(synth_cache_path), TuneSettings(strategy="gga", budget=2, history=db),
                builders=Builders(strategy=build))
    assert seen == [load_cache(synth_cache_path).problem_size] == [[64, 64]]


def test_an_unnamed_in_memory_cache_with_history_is_refused_before_it_runs(tmp_path):
    """A cache held in memory with no device_name has no device to store under: with
    --history the run is refused up front (it used to run, then fail to store), and
    without --history it runs."""
    from search.kt_cache import KtCache

    cache = KtCache(tune_params={"a": [1, 2]},
                    entries=[{"a": 1, "time": 2.0}, {"a": 2, "time": 3.0}])
    db = tmp_path / "h.sqlite"
    with pytest.raises(InvalidInputError, match="names no device.*give the KtCache a device_name"):
        tune_replay(cache, TuneSettings(strategy="random", budget=2, history=str(db)))
    assert not db.exists()
    report = tune_replay(cache, TuneSettings(strategy="random", budget=2))
    assert report.result.best.record.time_ms == 2.0
