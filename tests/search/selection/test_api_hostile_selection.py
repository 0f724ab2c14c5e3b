"""Hostile calls of the selection API (search/selection/): each bad argument is an
InvalidInputError naming it, never a silent answer or a raw exception mid-run.

Reference: the convention of iobound.errors (bad input to a public function raises
InvalidInputError naming the argument and the value) and each function's docstring.
"""

from __future__ import annotations

import json

import pytest

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from search.selection.dataset import CLASSES, DIRECT, Example

W2 = CLASSES[1]
CFG = {"x": 6, "y": 6, "z": 4, "alpha": 1, "tx": 6, "ty": 6, "tz": 1}
W2_CFG = {"e": 2, "x": 6, "y": 6, "z": 4, "tx": 3, "ty": 3, "tz": 1}


def _layer(c_in=2):
    return ConvLayer(n=1, c_in=c_in, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)


def _seen():
    return Example(_layer(), "V100-SXM2", {DIRECT: 1.0}, {DIRECT: CFG})


# -- 1. nearest_config: a device that is none is an error, not "no configuration" -------

@pytest.mark.parametrize("device", [5, None, 2.5, ["v100"]])
def test_nearest_config_refuses_a_bad_device(device):
    from search.selection.first_config import nearest_config
    with pytest.raises(InvalidInputError, match="device"):
        nearest_config(_layer(3), device, DIRECT, [_seen()])


def test_nearest_config_still_answers_for_a_device_and_its_name():
    from iobound.devices import get_device
    from search.selection.first_config import nearest_config
    for device in ("v100", get_device("v100")):
        assert nearest_config(_layer(3), device, DIRECT, [_seen()]) == CFG


# -- 2. a history read for a device alias is the selection's device --------------------

def _history_with_winograd():
    from search.history import History, HistoryKey
    from search.measure.base import MeasureRecord
    h = History(":memory:")
    key = HistoryKey(json.dumps(_layer().to_dict(), sort_keys=True), "V100-SXM2", "nvcc 12")
    h.add(key, [MeasureRecord.ok(CFG, time_ms=2.0), MeasureRecord.ok(W2_CFG, time_ms=1.5)])
    return h


@pytest.mark.parametrize("alias", ["v100", "V100-SXM2"])
def test_history_records_read_for_an_alias_are_selected_from(alias):
    from search.selection.history_source import records_from_history
    from search.selection.select import select_layers
    recs = list(records_from_history(_history_with_winograd(), device=alias))
    assert {r.device for r in recs} == {"V100-SXM2"}
    sel, = select_layers([_layer()], alias, known=recs)
    assert (sel.source, sel.choice, sel.time_ms, sel.estimate) == ("history", W2, 1.5, False)


def test_records_under_an_alias_are_the_devices_in_select_layers():
    from dataclasses import replace

    from search.selection.history_source import records_from_history
    from search.selection.select import select_layers
    recs = [replace(r, device="v100") for r in records_from_history(_history_with_winograd())]
    sel, = select_layers([_layer()], "V100-SXM2", known=recs)
    assert (sel.source, sel.choice, sel.device) == ("history", W2, "V100-SXM2")


# -- 3. score checks its choices -----------------------------------------------------

@pytest.mark.parametrize("choices", [["direct"], None, [None], "direct"])
def test_score_refuses_choices_that_are_no_candidates(choices):
    from search.selection.predictor import score
    with pytest.raises(InvalidInputError, match="choices"):
        score([_seen()], choices)


# -- 4. selector settings ------------------------------------------------------------

@pytest.mark.parametrize("kwargs, name", [
    ({"margins": []}, "margins"), ({"margins": [float("nan")]}, "margins"),
    ({"margins": None}, "margins"), ({"eta": float("nan")}, "eta"), ({"rounds": -1}, "rounds"),
    ({"rounds": 2.5}, "rounds"), ({"seed": -1}, "seed"), ({"folds": 0}, "folds"),
    ({"folds": -2}, "folds"), ({"max_depth": 0}, "max_depth")])
def test_gbt_selector_refuses_bad_settings(kwargs, name):
    from search.selection.predictor import GbtSelector
    with pytest.raises(InvalidInputError, match=name):
        GbtSelector(**kwargs)


@pytest.mark.parametrize("text", ["{}", "xx", "[1]", '{"margin": "a", "booster": {}}',
                                  '{"margin": 0.1, "booster": {}}', None])
def test_gbt_load_json_refuses_what_to_json_did_not_write(text):
    from search.selection.predictor import GbtSelector
    sel = GbtSelector()
    with pytest.raises(InvalidInputError):
        sel.load_json(text)
    assert sel.booster is None and sel.margin == 0.0


@pytest.mark.parametrize("kwargs, name", [
    ({"max_leaves": float("nan")}, "max_leaves"), ({"max_leaves": 2.5}, "max_leaves"),
    ({"min_leaf": True}, "min_leaf"), ({"max_leaves": 0}, "max_leaves"),
    ({"min_gain": float("nan")}, "min_gain")])
def test_so_tree_refuses_bad_settings_with_invalid_input(kwargs, name):
    from search.selection.predictor import TreeSelector
    from search.selection.tree import SoTree
    with pytest.raises(InvalidInputError, match=name):
        SoTree(**kwargs)
    if "min_gain" not in kwargs:
        with pytest.raises(InvalidInputError, match=name):
            TreeSelector(**kwargs)


def test_so_tree_predict_needs_the_features_it_was_fitted_on():
    from search.selection.tree import SoTree
    tree = SoTree(min_leaf=1).fit([[1.0, 0.0], [2.0, 0.0]], [[1, 0], [0, 1]])
    for X in ([[1.0]], [[1.0, 2.0, 3.0]], [1.0, 2.0], [[float("nan"), 0.0]]):
        with pytest.raises(InvalidInputError, match="X must"):
            tree.predict(X)
    assert tree.predict([[1.0, 5.0], [3.0, 5.0]]).tolist() == [0, 1]
    again = SoTree.from_dict(json.loads(json.dumps(tree.to_dict())))
    with pytest.raises(InvalidInputError, match="X must"):
        again.predict([[1.0]])


@pytest.mark.parametrize("d", [{}, None, {"max_leaves": 3, "min_leaf": 1, "root": {"class": 0}},
                               {"max_leaves": 3, "min_leaf": 1, "n_features": 1,
                                "root": {"class": 0, "n": 1, "so_sum": 1.0, "feature": 4,
                                         "threshold": 0.5,
                                         "left": {"class": 0, "n": 1, "so_sum": 1.0},
                                         "right": {"class": 1, "n": 1, "so_sum": 1.0}}}])
def test_so_tree_from_dict_refuses_what_to_dict_did_not_write(d):
    from search.selection.tree import SoTree
    with pytest.raises(InvalidInputError):
        SoTree.from_dict(d)


def test_rules_of_an_unfitted_tree_say_so():
    from search.selection.predictor import TreeSelector
    from search.selection.tree import SoTree
    for call in (lambda: SoTree().rules(["a"], ["b"]), lambda: TreeSelector().rules()):
        with pytest.raises(InvalidInputError, match="not fitted"):
            call()


def test_selectors_refuse_examples_that_are_none():
    from search.selection.predictor import AlwaysDirect, GbtSelector, TreeSelector, Winograd3x3
    for sel in (AlwaysDirect(), Winograd3x3(), TreeSelector(), GbtSelector()):
        with pytest.raises(InvalidInputError, match="examples"):
            sel.predict([5])
        with pytest.raises(InvalidInputError, match="examples"):
            sel.fit(None) if not isinstance(sel, (AlwaysDirect, Winograd3x3)) else sel.predict(None)


# -- 5. label record files -----------------------------------------------------------

def _record_dict():
    from search.selection.dataset import LabelRecord
    return LabelRecord(_layer(), "V100-SXM2", "direct", None, CFG, 2.0, True).to_dict()


@pytest.mark.parametrize("line, words", [
    ("xx", "not JSON"), ("[1]", "JSON object"), (json.dumps({"schema": 99}), "schema 99"),
    (json.dumps({"schema": 1, "device": "v"}), "missing layer"),
    (json.dumps({**{"schema": 1}, **_record_dict(), "estimate": "false"}), "estimate")])
def test_read_records_names_the_file_and_line(tmp_path, line, words):
    from search.selection.record_file import read_records, write_records
    path = tmp_path / "labels.jsonl"
    write_records(path, [])
    path.write_text(json.dumps({"schema": 1, **_record_dict()}) + "\n" + line + "\n")
    with pytest.raises(InvalidInputError, match=f"labels.jsonl' line 2: .*{words}"):
        list(read_records(path))


def test_read_records_of_a_missing_file_names_it(tmp_path):
    from search.selection.record_file import read_records
    with pytest.raises(InvalidInputError, match="nothere.jsonl"):
        list(read_records(tmp_path / "nothere.jsonl"))


def test_read_records_round_trip_still_works(tmp_path):
    from search.selection.dataset import LabelRecord
    from search.selection.record_file import read_records, write_records
    rec = LabelRecord.from_dict(_record_dict())
    write_records(tmp_path / "r.jsonl", [rec, rec])
    assert list(read_records(tmp_path / "r.jsonl")) == [rec, rec]


def test_label_record_estimate_false_string_is_refused():
    from search.selection.dataset import LabelRecord
    with pytest.raises(InvalidInputError, match="estimate"):
        LabelRecord.from_dict({**_record_dict(), "estimate": "false"})
    with pytest.raises(InvalidInputError, match="needs layer"):
        LabelRecord.from_dict({})


# -- 6. Example checks its times as a label does -------------------------------------

@pytest.mark.parametrize("t", [0.0, float("nan"), -1.0, float("inf"), "1", True, 10 ** 400])
def test_example_times_follow_the_label_rule(t):
    from search.selection.dataset import LabelRecord
    with pytest.raises(InvalidInputError, match="time"):
        Example(_layer(), "V100-SXM2", {DIRECT: 1.0, W2: t})
    with pytest.raises(InvalidInputError, match="time_ms"):
        LabelRecord(_layer(), "V100-SXM2", "winograd", 2, {}, t, True)


@pytest.mark.parametrize("kwargs", [{"times": {"direct": 1.0}}, {"configs": {DIRECT: 5}},
                                    {"times": [1.0]}, {"estimate": "no"}, {"device": 5},
                                    {"layer": "conv"}])
def test_example_refuses_fields_of_the_wrong_kind(kwargs):
    args = {"layer": _layer(), "device": "V100-SXM2", "times": {DIRECT: 1.0}, **kwargs}
    with pytest.raises(InvalidInputError):
        Example(**args)


def test_best_of_an_example_with_no_time_is_named_not_min_of_empty():
    from search.selection.predictor import score
    ex = Example(_layer(), "V100-SXM2", {DIRECT: None})
    with pytest.raises(InvalidInputError, match="no candidate with a time"):
        ex.best
    with pytest.raises(InvalidInputError, match="no candidate with a time"):
        score([ex], [DIRECT])
    with pytest.raises(InvalidInputError, match="choice"):
        _seen().speedup_over_oracle("direct")


# -- 7. write_report ---------------------------------------------------------------

class _Sel:  # write_report refuses before it reads a selection
    pass


def test_write_report_refuses_a_file_as_its_folder(tmp_path):
    from search.selection.report import write_report
    blocker = tmp_path / "file"
    blocker.write_text("keep")
    for out in (blocker, blocker / "sub"):
        with pytest.raises(InvalidInputError, match="is a file"):
            write_report([_Sel()], out, "t")
    assert blocker.read_text() == "keep" and [p.name for p in tmp_path.iterdir()] == ["file"]


def test_write_report_refuses_a_title_that_is_no_text(tmp_path):
    from search.selection.report import write_report
    with pytest.raises(InvalidInputError, match="title"):
        write_report([_Sel()], tmp_path / "r", None)
    assert not (tmp_path / "r").exists()
