"""Tests of the tuning session (search.session): plans, reports, files, seams."""

import dataclasses
import json

import pytest

from iobound.layer_spec import parse_layer_spec
from iobound.networks import network_layers
from search.measure.base import MeasureRecord, Measurer
from search.records import read_log
from search.log_writer import LogWriter
from search.session import (Builders, LayerReport, Observer, ReplayReport, TuneSettings,
                            history_key, plan_layers, tune_layers, tune_replay)

SMALL = parse_layer_spec("cin=8,hin=8,cout=16,kh=3,pad=1")
RANDOM4 = TuneSettings(strategy="random", budget=4)


def test_layer_report_is_frozen_and_complete(tmp_path):
    """A layer's report: the result, sizes, winner (bound, kernel, check) and its JSON."""
    [rep] = tune_layers([SMALL], "v100", RANDOM4, out_dir=str(tmp_path))
    assert isinstance(rep, LayerReport) and rep.result.evaluations == 4
    with pytest.raises(dataclasses.FrozenInstanceError):
        rep.seconds = 0.0
    assert rep.space_size <= rep.unpruned_size and rep.winner.emulator_check.checked
    d = json.loads(json.dumps(rep.to_dict()))
    assert d["bound"]["ratio_to_bound"] >= 1 and d["kernel_path"] == rep.winner.kernel_path
    assert d["stop_reason"] == "budget" and d["layer_shape"] == SMALL.short()


def test_plan_names_one_log_per_layer_and_starts_unlogged_layers_afresh(tmp_path):
    """A network resumed after a kill: layers with a log resume it, the others log anew."""
    layers = network_layers("alexnet")[:3]
    LogWriter(tmp_path / f"net.{layers[0].name}.jsonl", {"strategy": "random"}).close()
    settings = dataclasses.replace(RANDOM4, resume=str(tmp_path / "net.jsonl"),
                                   export_cache=str(tmp_path / "c.json"))
    jobs = plan_layers(layers, "v100", settings)
    assert [j.settings.resume for j in jobs] == [str(tmp_path / f"net.{layers[0].name}.jsonl"),
                                                 None, None]
    assert [j.settings.log for j in jobs] == [None] + [
        str(tmp_path / f"net.{l.name}.jsonl") for l in layers[1:]]
    assert [j.settings.export_cache for j in jobs] == [str(tmp_path / f"c.{l.name}.json")
                                                       for l in layers]


@pytest.mark.parametrize("kw, msg", [({"measure": "replay"}, "measure must be one of"),
                                     ({"layers": [SMALL, SMALL], "log": "x.jsonl"}, "distinct names"),
                                     ({"layers": []}, "no layers")])
def test_plan_refuses_bad_requests_before_running(kw, msg, tmp_path):
    """Bad requests are ValueErrors naming the problem, raised before anything is tuned."""
    layers = kw.pop("layers", [SMALL])
    settings = dataclasses.replace(RANDOM4, log=kw.pop("log", None))
    with pytest.raises(ValueError, match=msg):
        plan_layers(layers, "v100", settings, **kw)


def test_replay_reports_the_recorded_optimum_history_and_export(tmp_path, synth_cache_path,
                                                                synth_space):
    """Replaying a space: its recorded optimum, the history key of the file, the export."""
    settings = TuneSettings(strategy="random", budget=7, history=str(tmp_path / "h.db"),
                            export_cache=str(tmp_path / "out.json"), log=str(tmp_path / "r.jsonl"))
    rep = tune_replay(str(synth_cache_path), settings)
    assert isinstance(rep, ReplayReport) and rep.device == "Synthetic GPU"
    assert rep.recorded_optimum_ms == synth_space.cache.recorded_optimum()
    assert rep.history.key.layer == "replay:synth_kernel:[64, 64]"
    assert rep.history.best_ever_ms == rep.result.best.record.time_ms
    assert rep.export.entries == 7 and len(read_log(tmp_path / "r.jsonl").entries) == 7


def test_history_key_is_the_layer_for_conv_spaces():
    """A layer's history key is its canonical JSON and the device; toolchain from the measurer."""
    from search.conv_space import ConvSpace

    class M(Measurer):
        name = "m"

        def measure(self, configs):
            return []

    key = history_key(ConvSpace(SMALL, "v100"), M())
    assert json.loads(key.layer) == SMALL.to_dict() and key.device == "V100-SXM2"
    assert key.toolchain == "m"


def test_builders_and_observer_are_the_seams(tmp_path):
    """A swapped measurer builder is used for every layer; the observer hears each step in order."""

    class Flat(Measurer):
        name = "flat"

        def measure(self, configs):
            return [MeasureRecord.ok(c, time_ms=1.0) for c in configs]

    events = []

    class Spy(Observer):
        def layer_started(self, job, space):
            events.append(("start", job.layer.name))

        def progress(self, done, budget, best):
            events.append(("progress", done))

        def tuning_done(self):
            events.append(("done",))

        def finished(self, report):
            events.append(("report", report.result.measure))

    builders = Builders(measurer=lambda kind, layer, device, algorithm: Flat())
    layers = network_layers("alexnet")[1:3]
    reps = tune_layers(layers, "v100", TuneSettings(strategy="random", budget=2),
                       out_dir=str(tmp_path), verify=False, observer=Spy(), builders=builders)
    assert [r.result.measure for r in reps] == ["flat", "flat"]
    per_layer = [("progress", 1), ("progress", 2), ("done",), ("report", "flat")]
    assert events == [("start", layers[0].name), *per_layer, ("start", layers[1].name), *per_layer]


def test_settings_refuse_unknown_options_and_bad_numbers():
    """Settings name what is wrong: an unknown strategy, option, or a budget below 1."""
    with pytest.raises(ValueError, match="unknown strategy 'tabu'"):
        TuneSettings(strategy="tabu")
    with pytest.raises(ValueError, match="unknown option 'bogus'"):
        TuneSettings(strategy="random", options={"bogus": 1})
    with pytest.raises(ValueError, match="patience must be >= 1"):
        TuneSettings(patience=0)


def test_a_replay_sessions_workload_is_the_one_import_creates(tmp_path):
    """A kernel name with ':' (C++ ns::conv) and a problem that str() does not write as
    JSON: the run is stored under exactly the workload 'history import' makes of the same
    cache (one workload after both, exported under its kernel name), and a resumed run's
    own records are recognised as its own, not offered as history."""
    from search.db import TuningDB
    from search.db.export import workload_cache
    from search.db.importer import import_files, read_file
    from search.replay_space import ReplaySpace
    from search.transfer.session import own_records, usable_history
    from tests.search.conftest import synth_cache_dict
    cache = tmp_path / "ns.json"
    cache.write_text(json.dumps({**synth_cache_dict(), "kernel_name": "ns::conv",
                                 "problem_size": ["fp16", 64]}))
    db, log = tmp_path / "h.db", tmp_path / "r.jsonl"
    tune_replay(str(cache), TuneSettings(strategy="random", budget=5, history=str(db),
                                         log=str(log)))
    imported = read_file(cache).workload
    with TuningDB(db) as handle:
        assert handle.workloads() == [imported]
        own = own_records(e.record for e in read_log(log).entries)
        assert usable_history(handle, ReplaySpace(str(cache)), ["fp16", 64], exclude=own) == []
        import_files(handle, [cache])
        assert handle.workloads() == [imported]
        assert workload_cache(handle, imported, "Synthetic GPU").kernel_name == "ns::conv"


@pytest.mark.parametrize("layers, device, settings, needle", [
    ([None], "v100", RANDOM4, r"layers\[0\] must be a iobound.layer.ConvLayer"),
    (SMALL, "v100", RANDOM4, "layers must be a sequence of iobound.layer.ConvLayer"),
    ([SMALL], None, RANDOM4, "device must be a iobound.device_spec.Device or builtins.str"),
    ([SMALL], 5, RANDOM4, "device must be a iobound.device_spec.Device or builtins.str"),
    ([SMALL], "v100", {"budget": 3}, "settings must be a search.session.settings.TuneSettings"),
    ([SMALL], "v100", 0, "settings must be a search.session.settings.TuneSettings"),
])
def test_tune_layers_names_an_argument_of_the_wrong_class(layers, device, settings, needle, tmp_path):
    """A wrong layer, device or settings object is one InvalidInputError before anything
    runs (was a TypeError/AttributeError, or a falsy settings silently replaced)."""
    from iobound.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match=needle):
        tune_layers(layers, device, settings, out_dir=str(tmp_path))
