"""The tuning loop of a session (search.session.loop) as its documentation states it.

References: ``TuneSettings.patience`` ("stop a layer after this many rounds without
improvement") checked on a measurer whose every configuration takes the same time, so no
round after the first can improve; and the timing contract of ``tune_space`` (the history
use says how long reading the history took, a part of the layer's seconds); for a stop,
the documented promise that a signal while the loop winds down or while the final writes
run is noted, the history and the export are still written (read back), and the
``Interrupted`` names the log to resume.
"""

from __future__ import annotations

import pytest

from search.measure.base import MeasureRecord, Measurer
from search.session import TuneSettings, tune_replay
from search.tune_result import StopReason


class Flat(Measurer):
    name = "flat"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=1.0) for c in configs]


def test_patience_stops_a_layer_without_improvement(tmp_path):
    """With every configuration equally fast and patience 2, the run stops after the first
    round and 2 more rounds (batches of 3), well before the budget."""
    from iobound.layer_spec import parse_layer_spec
    from search.session import Builders, tune_layers
    layer = parse_layer_spec("cin=8,hin=8,cout=16,kh=3,pad=1")
    [rep] = tune_layers([layer], "v100",
                        TuneSettings(strategy="random", budget=30, patience=2,
                                     options={"batch_size": 3}),
                        out_dir=str(tmp_path), verify=False,
                        builders=Builders(measurer=lambda *a: Flat()))
    assert rep.result.stop_reason is StopReason.PATIENCE
    assert rep.result.rounds == 3 and rep.result.evaluations == 9


def test_the_history_read_time_is_part_of_the_layers_time(tmp_path, synth_cache_path):
    """With --history the history use carries the seconds its read took, within the run's."""
    rep = tune_replay(str(synth_cache_path),
                      TuneSettings(strategy="random", budget=3, history=str(tmp_path / "h.db")))
    use = rep.history_use
    assert use is not None and use.seconds is not None and 0 <= use.seconds <= rep.seconds


def test_a_layer_with_an_executor_measures_in_its_workers_and_closes_them(tmp_path):
    """``settings.executor`` for one layer: every build runs in a worker process (not this
    one), and no worker is left running when the layer's report is back."""
    import dataclasses
    import multiprocessing
    import os

    from iobound.layer_spec import parse_layer_spec
    from network_standin import StandInMeasurer, markers
    from search.executors import ExecutorOptions
    from search.session import Builders, tune_layers
    layer = dataclasses.replace(parse_layer_spec("cin=8,hin=8,cout=16,kh=3,pad=1"), name="solo")
    marks = tmp_path / "marks"
    marks.mkdir()
    builders = Builders(measurer=lambda kind, l, device, algorithm:
                        StandInMeasurer(l, marks, delay=0.0))
    [rep] = tune_layers([layer], "v100",
                        TuneSettings(strategy="random", budget=3,
                                     executor=ExecutorOptions(workers=1)),
                        out_dir=str(tmp_path), verify=False, builders=builders)
    pids = {m[2] for m in markers(marks)}
    assert rep.result.evaluations == 3 and pids and os.getpid() not in pids
    assert multiprocessing.active_children() == []


def _replay_settings(tmp_path, **kw):
    return TuneSettings(strategy="random", budget=4, history=str(tmp_path / "h.db"),
                        export_cache=str(tmp_path / "out.json"), **kw)


def _stored(tmp_path) -> tuple[int, int]:
    """(records in the history database, entries of the export)."""
    import json

    from search.history import History
    with History(str(tmp_path / "h.db")) as h:
        held = sum(len(h.records(k)) for k in h.keys())
    return held, len(json.loads((tmp_path / "out.json").read_text())["cache"])


def test_a_signal_as_the_loop_winds_down_stops_the_run_after_storing_it(tmp_path,
                                                                        synth_cache_path):
    """SIGINT while the loop winds down (in the observer's tuning_done) is noted, not raised
    there: the history and the export are written, then the run stops as interrupted,
    naming its log."""
    import os
    import signal

    from search.interrupts import Interrupted
    from search.session import Observer

    class Stop(Observer):
        def tuning_done(self):
            os.kill(os.getpid(), signal.SIGINT)

    log = str(tmp_path / "run.jsonl")
    with pytest.raises(Interrupted) as caught:
        tune_replay(str(synth_cache_path), _replay_settings(tmp_path, log=log), observer=Stop())
    assert caught.value.measurements == 4 and caught.value.log == log
    assert _stored(tmp_path) == (4, 4)


def test_a_signal_during_the_final_writes_waits_for_them(tmp_path, synth_cache_path,
                                                         monkeypatch):
    """SIGINT while the export is written: the write completes, then the run stops."""
    import os
    import signal

    from search.interrupts import Interrupted
    from search.session import storage

    real = storage.export_cache

    def signalled(*args, **kw):
        os.kill(os.getpid(), signal.SIGINT)
        return real(*args, **kw)

    monkeypatch.setattr(storage, "export_cache", signalled)
    with pytest.raises(Interrupted):
        tune_replay(str(synth_cache_path), _replay_settings(tmp_path))
    assert _stored(tmp_path) == (4, 4)


def test_an_interrupted_run_says_where_its_measurements_are(tmp_path, synth_space,
                                                            synth_measurer):
    """store_outcomes of an interrupted run resumed from a log (no new --log): the
    Interrupted names that log, the run name to resume with, and the write that failed."""
    import dataclasses

    from search.interrupts import Interrupted
    from search.session.loop import DEFAULT_BUILDERS, NO_OBSERVER, store_outcomes, tune_space
    log = str(tmp_path / "run.jsonl")
    tune_space(synth_space, synth_measurer, TuneSettings(strategy="random", budget=2, log=log),
               {}, NO_OBSERVER, DEFAULT_BUILDERS)
    settings = TuneSettings(strategy="random", budget=3, resume=log,
                            export_cache=str(tmp_path / "gone" / "out.json"))
    result, _, _ = tune_space(synth_space, synth_measurer, settings, {}, NO_OBSERVER,
                              DEFAULT_BUILDERS)
    stopped = dataclasses.replace(result, stop_reason=StopReason.INTERRUPTED)
    with pytest.raises(Interrupted) as caught:
        store_outcomes(settings, stopped, synth_space, synth_measurer, resume_as="net.jsonl")
    exc = caught.value
    assert (exc.measurements, exc.log, exc.resume_as) == (3, log, "net.jsonl")
    assert exc.failed is not None and "--export-cache" in exc.failed
