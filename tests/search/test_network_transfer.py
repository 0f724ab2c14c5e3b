"""Network-level transfer: layers of one run (and of earlier runs) learn from each other."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from iobound.layer import ConvLayer
from search.cli.main import main
from search.conv_space import ConvSpace
from search.db import Measurement, TuningDB, Workload
from search.db.conv_template import CONV_TEMPLATE
from search.measure.model import ModelMeasurer
from search.session import TuneSettings, tune_layers
from search.strategies import make_strategy
from search.transfer import HistoryGuided, HistoryPrior, with_history
from search.transfer.layer_features import CROSS_LAYER_FEATURES, cross_layer_features
from search.transfer.rows import LayerRows, rows_for
from search.tuner import tune


def _layer(name, c_in=8, hw=12, c_out=16, k=3):
    return ConvLayer(n=1, c_in=c_in, h_in=hw, w_in=hw, c_out=c_out, k_h=k, k_w=k, padding=k // 2,
                     name=name)


L1, L2, L3 = _layer("net.a"), _layer("net.b", c_in=16, c_out=16), _layer("net.c", hw=10, c_out=32)


def _spy(monkeypatch):
    """Record the history each layer's prior was fitted on: [(target problem, records)]."""
    seen = []
    fit = HistoryPrior.fit.__func__

    def spy(cls, space, history, target_problem=None, options=None, seed=0):
        seen.append((target_problem, list(history)))
        return fit(cls, space, history, target_problem, options, seed)
    monkeypatch.setattr(HistoryPrior, "fit", classmethod(spy))
    return seen


def test_network_json_says_layer_2_used_layer_1(capsys, tmp_path):
    """`tune --network --history --json`: the first layer finds nothing, the second
    uses every timed record the run stored for the first."""
    db = tmp_path / "h.db"
    code = main(["tune", "--network", "alexnet", "--measure", "model", "--budget", "6",
                 "--history", str(db), "--no-verify", "--out-dir", str(tmp_path / "k"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    first, second = out["layers"][:2]
    assert first["history"]["used"] is False and first["history"]["records"] == 0
    with TuningDB(db) as h:
        timed_1 = [m for m in h.measurements(counted_only=True)
                   if m.workload.problem["name"] == "alexnet.conv1"]
    assert second["history"]["used"] is True
    assert second["history"]["records"] == len(timed_1) > 0
    assert second["history"]["devices"] == ["V100-SXM2"]
    assert second["strategy_stats"]["history"]["history_rounds"] >= 1


def test_a_layer_never_sees_its_own_records_of_this_run(monkeypatch, tmp_path):
    """Each layer's history holds the earlier layers' records and none of its own."""
    seen = _spy(monkeypatch)
    settings_ = TuneSettings(budget=6, history=str(tmp_path / "h.db"))
    tune_layers([L1, L2, L3], "v100", settings_, measure="model", verify=False,
                out_dir=str(tmp_path / "k"))
    got = {p["name"]: {m.workload.problem["name"] for m in hist} for p, hist in seen}
    assert got == {"net.b": {"net.a"}, "net.c": {"net.a", "net.b"}}  # net.a: nothing to fit


def _key(record) -> tuple:
    return json.dumps(record.config, sort_keys=True), record.timestamp


@settings(deadline=None, max_examples=10)
@given(st.integers(1, 5), st.integers(0, 3))
def test_resumed_layer_does_not_take_its_own_records_as_history(first, seed):
    """A layer stopped after ``first`` measurements (stored in the database, as an
    interrupted run stores them) and resumed: none of its logged records is history;
    an earlier run's records of the same layer still are."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:  # per example (hypothesis): not tmp_path
        _resumed_layer_check(first, seed, Path(tmp))


def _resumed_layer_check(first, seed, d):
    from unittest import mock

    from search.records import read_log
    from search.session.history_use import history_options
    db, log = str(d / "h.db"), str(d / "run.jsonl")
    layer = _layer("solo")
    space, meas = ConvSpace(layer, "v100"), ModelMeasurer(layer, "v100")
    earlier = tune(space, meas, "random", budget=3, seed=99)
    w = Workload(CONV_TEMPLATE, layer.to_dict(), space.params)
    with TuningDB(db) as h:
        h.add([Measurement(w, space.device.name, meas.toolchain(), t.record) for t in earlier.trials])
    tune_layers([layer], "v100", TuneSettings(budget=first, seed=seed, log=log, history=db),
                measure="model", verify=False, out_dir=str(d / "k"))
    logged = {_key(e.record) for e in read_log(log).entries}
    seen = []
    fit = HistoryPrior.fit.__func__

    def spy(cls, space_, history, *args, **kw):
        seen.append(list(history))
        return fit(cls, space_, history, *args, **kw)
    with mock.patch.object(HistoryPrior, "fit", classmethod(spy)):
        _, use, _ = history_options(TuneSettings(budget=first + 3, seed=seed, resume=log,
                                                 history=db), space, layer.to_dict())
    (hist,) = seen
    assert logged and not {_key(m.record) for m in hist} & logged
    assert {_key(m.record) for m in hist} == {_key(t.record) for t in earlier.trials if t.record.is_ok}
    assert use.used and use.records == len(hist)


@settings(deadline=None, max_examples=10)
@given(st.integers(0, 2**16), st.integers(1, 6), st.integers(4, 30))
def test_explorer_with_layer_history_asks_only_new_valid_configs(seed, batch, budget):
    """The explorer guided by another layer's history: every ask is a valid configuration
    of this layer's space, asked once, never one already measured."""
    src, dst = ConvSpace(L1, "v100"), ConvSpace(L3, "v100")
    res = tune(src, ModelMeasurer(L1, "v100"), "random", budget=20, seed=1)
    w = Workload(CONV_TEMPLATE, L1.to_dict(), src.params)
    prior = HistoryPrior.fit(dst, [Measurement(w, "V100-SXM2", "m", t.record) for t in res.trials],
                             L3.to_dict(), seed=0)
    assert prior is not None and prior.records > 0
    s = with_history(make_strategy("explorer", dst, {"batch_size": batch},
                                   np.random.default_rng(seed)), prior, seed=seed)
    assert isinstance(s, HistoryGuided)
    meas, asked = ModelMeasurer(L3, "v100"), []
    while len(asked) < budget:
        got = s.ask(batch)
        if not got:
            break
        assert len(set(got)) == len(got) and not set(got) & set(asked)
        assert all(0 <= i < len(dst) and dst.is_valid(dst.get(i)) for i in got)
        asked += got
        s.tell(got, meas.measure([dst.get(i) for i in got]))
    assert len(asked) >= budget


def test_cross_layer_rows_are_computed_on_the_records_own_layer():
    """A record of another layer gets the row of its config on *its* layer, so the same
    tile is 'the whole output' on a small layer and a part of it on a large one."""
    small, big = _layer("s", hw=8), _layer("b", hw=32)
    cfg = {"x": 8, "y": 8, "z": 8, "alpha": 4, "tx": 8, "ty": 8, "tz": 1}
    space = ConvSpace(big, "v100")
    rows = rows_for(space)
    assert isinstance(rows, LayerRows)
    m = Measurement(Workload(CONV_TEMPLATE, small.to_dict(), space.params), "v100", "t",
                    ModelMeasurer(small, "v100").measure([cfg])[0])
    (row,) = rows.record_rows([m], [space.index(cfg)])
    x_rel = CROSS_LAYER_FEATURES.index("x_rel")
    assert row[x_rel] == 1.0
    here = cross_layer_features(big, space.device, "direct", np.array([[cfg[p] for p in space.params]]))
    assert here[0, x_rel] == 0.25


def test_zero_shot_ranks_a_new_layer_from_every_record_of_another():
    """Zero-shot on our conv template learns from every timed record of another layer (on
    its own layer's cross-layer rows, in the target's space or not), and its top 10 on the
    new layer beat the median of 10 random picks."""
    from search.zero_shot import ZeroShotOptions, history_ranking
    src, dst = ConvSpace(L1, "v100"), ConvSpace(L3, "v100")
    res = tune(src, ModelMeasurer(L1, "v100"), "explorer", budget=60, seed=1)
    w = Workload(CONV_TEMPLATE, L1.to_dict(), src.params)
    hist = [Measurement(w, "V100-SXM2", "m", t.record) for t in res.trials]
    timed = sum(1 for m in hist if m.time_ms is not None)
    outside = sum(1 for m in hist if m.time_ms is not None and dst.index(m.record.config) is None)
    ranked, _, used = history_ranking(dst, hist, ZeroShotOptions(), seed=0)
    assert outside > 0 and used == timed
    meas = ModelMeasurer(L3, "v100")
    cost = lambda idx: min(r.cost for r in meas.measure([dst.get(int(i)) for i in idx]))
    rng = np.random.default_rng(0)
    random10 = [cost(rng.choice(len(dst), 10, replace=False)) for _ in range(15)]
    assert cost(ranked[:10]) < np.median(random10)


def test_zero_shot_accepts_a_layer_whose_history_is_all_outside_its_space():
    """Records of another layer none of whose configurations fit this layer still rank it
    (``rankable``; the session refuses zero-shot only when nothing can)."""
    from search.zero_shot import history_ranking, rankable
    src, dst = ConvSpace(L1, "v100"), ConvSpace(L3, "v100")
    res = tune(src, ModelMeasurer(L1, "v100"), "random", budget=40, seed=2)
    w = Workload(CONV_TEMPLATE, L1.to_dict(), src.params)
    hist = [Measurement(w, "V100-SXM2", "m", t.record) for t in res.trials
            if t.record.time_ms is not None and dst.index(t.record.config) is None]
    assert hist and rankable(dst, hist)
    assert history_ranking(dst, hist, seed=0)[2] == len(hist)
    assert not rankable(dst, [])


def test_zero_shot_refuses_a_layers_history_of_a_device_with_no_features(tmp_path):
    """Records that are configurations of this layer's space but of a device no preset
    describes have no model rows: nothing can rank with them, so ``rankable`` says no (as
    ``history_ranking`` does) and the session refuses zero-shot instead of measuring a
    random order under its name."""
    import pytest

    from iobound.errors import InvalidInputError
    from search.session import history_options
    from search.zero_shot import history_ranking, rankable
    space = ConvSpace(L1, "v100")
    w = Workload(CONV_TEMPLATE, L1.to_dict(), space.params)
    res = tune(space, ModelMeasurer(L1, "v100"), "random", budget=20, seed=1)
    records = [t.record for t in res.trials if t.record.time_ms is not None]
    lab = [Measurement(w, "my lab GPU", "m", r) for r in records]
    assert not rankable(space, lab)
    with pytest.raises(InvalidInputError):
        history_ranking(space, lab)
    preset = [Measurement(w, "V100-SXM2", "m", r) for r in records]
    assert rankable(space, preset) and history_ranking(space, preset)[2] == len(preset)
    db = tmp_path / "h.db"
    with TuningDB(db) as h:
        h.add(lab)
    settings = TuneSettings(strategy="zero_shot", history=str(db), budget=3)
    with pytest.raises(InvalidInputError, match="zero-shot"):
        history_options(settings, space, L1.to_dict())
