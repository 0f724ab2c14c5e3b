"""The session's settings checks and its files (search.session.settings, search.session.files).

References: the documented contracts, checked against independent readers of what the
session wrote: ``iobound.limits`` for the ranges and ``check_flag`` for the flags, the
per-layer name ``<stem>.<layer name><suffix>`` of the module doc, the run's own log read back
(``read_log``), the keys the history database lists (``History.keys``), and the exported
Kernel Tuner cache read back as JSON.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from iobound import limits
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from iobound.layer_spec import parse_layer_spec
from search.history import History
from search.measure.base import MeasureRecord, Measurer
from search.records import read_log
from search.session import (LAYER_MEASURES, Builders, TuneSettings, per_layer_path, plan_layers,
                            tune_layers)

SMALL = parse_layer_spec("cin=8,hin=8,cout=16,kh=3,pad=1")


class Untimed(Measurer):
    """Every second configuration runs ok without a time (as the emulator's do)."""

    name = "untimed-v1"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=None, surrogate_cost=1.0 + k) if k % 2
                else MeasureRecord.ok(c, time_ms=1.0 + k) for k, c in enumerate(configs)]


@pytest.mark.parametrize("kw, field", [
    ({"options": {"batch_size": limits.BATCH_SIZE.high + 1}}, "batch_size"),
    ({"seed": -1}, "seed"), ({"seed": limits.SEED.high + 1}, "seed"),
    ({"reuse": 1, "history": "h.db"}, "reuse"), ({"tune_repeats": "no"}, "tune_repeats"),
    ({"budget": False}, "budget must be an integer"), ({"patience": True}, "patience must be an"),
])
def test_settings_refuse_values_past_the_limits_naming_the_field(kw, field):
    """A batch size or seed outside iobound.limits, a flag that is no bool, or a bool for a
    count, is refused when the settings are made (before any layer runs), naming the field."""
    with pytest.raises(InvalidInputError, match=field):
        TuneSettings(strategy="random", **kw)


def test_settings_take_the_edges_of_the_limits():
    """Both ends of the documented ranges are accepted, and one past either end is not."""
    for end in ("low", "high"):
        s = TuneSettings(strategy="random", seed=getattr(limits.SEED, end),
                         budget=getattr(limits.BUDGET, end), patience=getattr(limits.PATIENCE, end),
                         options={"batch_size": getattr(limits.BATCH_SIZE, end)})
        assert (s.seed, s.budget) == (getattr(limits.SEED, end), getattr(limits.BUDGET, end))
    for name, past in (("seed", limits.SEED.high + 1), ("budget", limits.BUDGET.high + 1),
                       ("patience", limits.PATIENCE.high + 1), ("seed", limits.SEED.low - 1)):
        with pytest.raises(InvalidInputError, match=name):
            TuneSettings(strategy="random", **{name: past})


def test_per_layer_path_keeps_a_suffix_and_names_an_unnamed_layer():
    """``<stem>.<layer name><suffix>``: a path without a suffix gets .jsonl, an unnamed
    layer is 'layer'; with one layer the path is itself."""
    named = dataclasses.replace(SMALL, name="c1")
    assert per_layer_path("out/run", named, True) == "out/run.c1.jsonl"
    assert per_layer_path("out/run.json", named, True) == "out/run.c1.json"
    assert per_layer_path("out/run.jsonl", ConvLayer(1, 2, 6, 6, 2, 3, 3), True) == \
        "out/run.layer.jsonl"
    assert per_layer_path("out/run", named, False) == "out/run"


def test_per_layer_path_keeps_a_gzip_names_endings_together(tmp_path, capsys):
    """``c.json.gz`` -> ``c.<layer>.json.gz`` (it was ``c.json.<layer>.gz``, which a folder
    import passed over: no cache ending); a name with one ending keeps it whole. A
    network's caches exported so import as the folder they were written to."""
    named = dataclasses.replace(SMALL, name="c1")
    assert per_layer_path("out/c.json.gz", named, True) == "out/c.c1.json.gz"
    assert per_layer_path("out/run.jsonl.gz", named, True) == "out/run.c1.jsonl.gz"
    assert per_layer_path("out/c.gz", named, True) == "out/c.c1.gz"
    from search.cli.main import main
    (tmp_path / "caches").mkdir()
    assert main(["tune", "--network", "alexnet", "--budget", "2", "--measure", "model",
                 "--no-verify", "--out-dir", str(tmp_path / "k"),
                 "--export-cache", str(tmp_path / "caches" / "net.json.gz")]) == 0
    assert main(["history", "import", str(tmp_path / "caches"), "--db",
                 str(tmp_path / "h.db"), "--json"]) == 0
    files = json.loads(capsys.readouterr().out.splitlines()[-1])["files"]
    assert sorted(f["file"].rsplit("/", 1)[1] for f in files) == [
        f"net.alexnet.conv{i}.json.gz" for i in range(1, 6)]


def test_resuming_layers_of_one_name_is_refused(tmp_path):
    """Two layers of one name would resume one per-layer log: refused before anything runs."""
    first = tmp_path / "net.layer.jsonl"
    tune_layers([SMALL], "v100", TuneSettings(strategy="random", budget=2, log=str(first)),
                out_dir=str(tmp_path), verify=False)
    settings = TuneSettings(strategy="random", budget=2, resume=str(tmp_path / "net.jsonl"))
    with pytest.raises(InvalidInputError, match="distinct names"):
        plan_layers([SMALL, SMALL], "v100", settings)


def test_a_log_given_as_its_own_resume_continues_it(tmp_path):
    """``--log X --resume X`` continues the run in X: the earlier measurements are resumed,
    only the rest measured, and X holds every measurement once."""
    log = str(tmp_path / "run.jsonl")
    tune_layers([SMALL], "v100", TuneSettings(strategy="random", budget=3, log=log),
                out_dir=str(tmp_path), verify=False)
    [rep] = tune_layers([SMALL], "v100",
                        TuneSettings(strategy="random", budget=6, log=log, resume=log),
                        out_dir=str(tmp_path), verify=False)
    assert rep.result.resumed == 3 and rep.result.evaluations == 6
    entries = read_log(log).entries
    assert len(entries) == 6 and len({json.dumps(e.record.config, sort_keys=True)
                                      for e in entries}) == 6


def test_the_reported_history_key_is_the_one_the_database_lists(tmp_path):
    """The key a layer's run reports is the key the database lists for what it stored."""
    db = str(tmp_path / "h.db")
    [rep] = tune_layers([SMALL], "v100",
                        TuneSettings(strategy="random", budget=3, history=db),
                        out_dir=str(tmp_path), verify=False)
    with History(db) as h:
        assert h.keys() == [rep.history.key]


def test_runs_of_two_seeds_are_told_apart_in_the_database(tmp_path):
    """Two runs of a layer into one database are stored as two runs (each names its seed)."""
    db = str(tmp_path / "h.db")
    for seed in (1, 2):
        tune_layers([SMALL], "v100", TuneSettings(strategy="random", budget=2, seed=seed,
                                                  history=db), out_dir=str(tmp_path),
                    verify=False)
    with History(db) as h:
        [workload] = h.db.workloads()
        runs = {m.run for m in h.db.measurements(workload)}
    assert len(runs) == 2 and all("random" in r for r in runs)


def test_an_exported_layer_cache_describes_its_layer_and_counts_its_entries(tmp_path):
    """The exported cache names the layer as its problem, the device, and the measurer's
    toolchain, and declares every value its entries use; the outcome counts the entries the
    file holds (an ok record without a time has no entry)."""
    path = tmp_path / "c.json"
    builders = Builders(measurer=lambda *a: Untimed())
    [rep] = tune_layers([SMALL], "v100",
                        TuneSettings(strategy="random", budget=6, export_cache=str(path),
                                     options={"batch_size": 6}),
                        out_dir=str(tmp_path), verify=False, builders=builders)
    raw = json.loads(path.read_text())
    assert raw["problem_size"] == SMALL.to_dict() and raw["device_name"] == "V100-SXM2"
    assert raw["toolchain"] == Untimed().toolchain()
    assert all(entry[p] in values for entry in raw["cache"].values()
               for p, values in raw["tune_params"].items())  # each value a declared one
    timed = sum(t.record.time_ms is not None for t in rep.result.trials)
    assert rep.export.entries == len(raw["cache"]) == timed < rep.result.evaluations


@pytest.mark.parametrize("kind", LAYER_MEASURES)
def test_each_layer_measure_builds_its_own_measurer(kind):
    """The default builder makes the measurer each name of LAYER_MEASURES stands for
    (building one measures nothing); any other name is refused, listing them."""
    from iobound.devices import get_device
    from search.session.settings import default_measurer
    measurer = default_measurer(kind, SMALL, get_device("v100"), "direct")
    assert measurer.name == kind
    with pytest.raises(InvalidInputError, match="cuda, emulate, model"):
        default_measurer(kind + "x", SMALL, get_device("v100"), "direct")


@pytest.mark.parametrize("measure, verify, want", [("emulate", True, False), ("model", True, True),
                                                   ("model", False, False)])
def test_the_winner_is_checked_with_the_emulator_unless_measured_with_it(measure, verify, want):
    """A job checks its winner with the emulator when asked, never when the emulator
    measured it already."""
    [job] = plan_layers([SMALL], "v100", TuneSettings(strategy="random", budget=2),
                        measure=measure, verify=verify)
    assert job.verify is want


def test_settings_keep_a_path_as_its_text(tmp_path):
    """``TuneSettings(log=Path(...))`` holds the file's name as ``str`` (messages named
    ``PosixPath('run.jsonl')``), and a log written through it is read back by that name."""
    from pathlib import Path
    settings = TuneSettings(strategy="random", budget=2, log=tmp_path / "run.jsonl",
                            export_cache=Path(tmp_path / "c.json"))
    assert settings.log == str(tmp_path / "run.jsonl") and isinstance(settings.export_cache, str)
    tune_layers([SMALL], "v100", settings, out_dir=str(tmp_path), verify=False)
    assert len(read_log(settings.log).entries) == 2
    with pytest.raises(InvalidInputError, match="no log 'missing.jsonl'"):
        plan_layers([SMALL], "v100", TuneSettings(strategy="random", resume=Path("missing.jsonl")))
