"""Tests of the questions asked of the tuning database with a user's names and bad arguments.

A device named by a user stands for every name the database holds of it: itself, and
for a preset's name or alias every held name of that preset (``v100`` -> ``V100-SXM2``,
what ``tune --device v100`` stores, and a cache's ``Tesla V100-SXM2-16GB``); a name of
no preset stands only for itself. Arguments of the wrong kind are one InvalidInputError
naming them (were AttributeError/TypeError, or None/[] as if nothing were stored).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iobound.devices import DEVICES
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from search.db import CONV_TEMPLATE, Measurement, TuningDB, Workload, queries, remove
from search.db.importer import import_files
from search.measure.base import MeasureRecord
from search.grid_space import GridSpace

LAYER = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3)
CONFIG = {"x": 3, "y": 3, "z": 2, "alpha": 1, "tx": 3, "ty": 3, "tz": 1}  # one of LAYER's
CONV = Workload(CONV_TEMPLATE, LAYER.to_dict(), tuple(CONFIG))
SPACE = GridSpace({p: [v] for p, v in CONFIG.items()})


def _db(*devices: str) -> TuningDB:
    db = TuningDB(":memory:")
    db.add([Measurement(CONV, d, "t", MeasureRecord.ok(CONFIG, time_ms=1.0 + k))
            for k, d in enumerate(devices)])
    return db


def test_an_alias_finds_the_records_stored_under_the_preset_name():
    """Were None/[]/[] while the records are stored under V100-SXM2."""
    with _db("V100-SXM2", "A100-SXM4-40GB") as db:
        assert queries.best_for_layer(db, LAYER, "v100").measurement.device == "V100-SXM2"
        assert [m.device for m in queries.best(db, device="v100")] == ["V100-SXM2"]
        assert [m.device for m in queries.history_for_space(db, SPACE, devices=["v100"])] == ["V100-SXM2"]
        assert [m.device for m in queries.history_for_space(db, SPACE, exclude_devices=["v100"])] \
            == ["A100-SXM4-40GB"]
        assert [g.device for g in remove.plan(db, remove.Selection(device="v100"))] == ["V100-SXM2"]
        remove.remove(db, remove.Selection(device="NVIDIA v100"))
        assert sorted(db.devices()) == ["A100-SXM4-40GB"]


def test_every_held_name_of_one_device_answers_for_it():
    """Two held names of one preset (an alias stored through the API, the preset's name by
    tune) are one device: either name finds both's records (``best``: the configuration
    once, at its fastest), and a history leaving the device out leaves out both (it kept
    the other name's, the target's own records)."""
    with _db("v100", "V100-SXM2", "A100-SXM4-40GB") as db:
        for name in ("v100", "V100-SXM2", "Tesla V100-SXM2-16GB"):
            assert [(m.device, m.time_ms) for m in queries.best(db, device=name, k=5)] == \
                [("v100", 1.0)]
            assert [m.device for m in queries.history_for_space(
                db, SPACE, exclude_devices=[name])] == ["A100-SXM4-40GB"]
            assert sorted(g.device for g in remove.plan(db, remove.Selection(device=name))) == \
                ["V100-SXM2", "v100"]
        assert queries.best_for_layer(db, LAYER, "Tesla V100-SXM2-16GB").records == 2


@settings(max_examples=30, deadline=None)
@given(preset=st.sampled_from(sorted(DEVICES)), data=st.data())
def test_every_name_of_a_preset_finds_its_records(preset, data):
    """Property: any alias of a preset (any case) finds the records stored under the
    preset's name; a name of no preset finds only its own."""
    dev = DEVICES[preset]
    alias = data.draw(st.sampled_from([dev.name, *dev.aliases]))
    alias = data.draw(st.sampled_from([alias, alias.upper(), alias.lower()]))
    with _db(preset, "my lab GPU") as db:
        assert [m.device for m in queries.best(db, device=alias)] == [preset]
        assert [m.device for m in queries.best(db, device="my lab GPU")] == ["my lab GPU"]
        assert queries.best(db, device="my lab gpu") == []  # no preset: as given


@pytest.mark.parametrize("call, needle", [
    (lambda db: queries.best_for_layer(db, None, "v100"), "layer must be a iobound.layer.ConvLayer"),
    (lambda db: queries.best_for_layer(db, "conv1", "v100"), "layer must be a iobound.layer.ConvLayer"),
    (lambda db: queries.best_for_layer(db, LAYER, "v100", "fft"), "unknown algorithm 'fft'"),
    (lambda db: queries.best_for_layer(db, LAYER, "v100", 5), "unknown algorithm 5"),
    (lambda db: queries.best_for_layer(db, LAYER, None), "device name must be a printable"),
    (lambda db: queries.best_for_layer(db, LAYER, ""), "device name must be a printable"),
    (lambda db: queries.layer_workloads(db, None), "layer must be"),
    (lambda db: queries.layer_workloads(db, "x"), "layer must be"),
    (lambda db: queries.layer_workloads(db, 5), "layer must be"),
    (lambda db: queries.summary(None), "db must be a search.db.store.TuningDB"),
    (lambda db: queries.best(None), "db must be a search.db.store.TuningDB"),
    (lambda db: queries.best(db, device=5), "device name must be a printable"),
    (lambda db: queries.select_workloads(db, 5), "text must be a builtins.str"),
    (lambda db: queries.select_workloads(None, "k"), "db must be"),
    (lambda db: queries.history_for_space(db, None), r"space must be a search space \(with params\)"),
    (lambda db: queries.history_for_space(db, SPACE, exclude_devices=5), "exclude_devices must be a list"),
    (lambda db: queries.history_for_space(db, SPACE, exclude_devices=[5]), "exclude_devices: a device name"),
    (lambda db: queries.history_for_space(db, SPACE, devices=[None]), "devices: a device name"),
    (lambda db: queries.history_for_space(None, SPACE), "db must be"),
    (lambda db: queries.other_space_timings(db, None), "params must be a list of parameter names"),
    (lambda db: queries.other_space_timings(db, "x"), "params must be a list of parameter names"),
    (lambda db: queries.other_space_timings(db, [1]), "a parameter name must be a builtins.str"),
    (lambda db: remove.plan(db, "x"), "selection must be a search.db.remove.Selection"),
    (lambda db: remove.plan(db, {"device": "v100"}), "selection must be a search.db.remove.Selection"),
    (lambda db: remove.remove(db, None), "selection must be a search.db.remove.Selection"),
    (lambda db: remove.plan(None, remove.Selection(device="v100")), "db must be"),
    (lambda db: remove.Selection(device=5), "device name must be a printable"),
    (lambda db: remove.Selection(device=""), "device name must be a printable"),
    (lambda db: remove.Selection(toolchain=5), "toolchain must be a string"),
    (lambda db: remove.Selection(workloads=("x",)), r"workloads\[0\] must be a search.db.model.Workload"),
    (lambda db: remove.Selection(workloads=CONV), "workloads must be a sequence of"),
    (lambda db: remove.Selection(source=5), r"source must be a path \(str or os.PathLike\)"),
    (lambda db: import_files(db, None), "paths must be a path or a list of paths, got None"),
    (lambda db: import_files(db, [5]), r"paths\[0\] must be a path"),
    (lambda db: import_files(db, 5), "paths must be a path or a list of paths"),
    (lambda db: import_files(None, ["a.json"]), "db must be a search.db.store.TuningDB"),
])
def test_bad_arguments_are_named(call, needle):
    """Were AttributeError/TypeError, or None/[] (a question never asked, answered as
    'nothing stored'), or accepted (Selection(device=5) planned nothing)."""
    with _db("V100-SXM2") as db:
        with pytest.raises(InvalidInputError, match=needle):
            call(db)
        assert db.count() == 1


def test_a_path_object_selects_its_source(tmp_path):
    w = Workload("k", [8], ("x",))
    with TuningDB(":memory:") as db:
        db.add([Measurement(w, "d", "t", MeasureRecord.ok({"x": 1}, time_ms=1.0), source="a.json")])
        assert [g.measurements for g in remove.plan(db, remove.Selection(source=tmp_path / "a.json"))] == [1]
