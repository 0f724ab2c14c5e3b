"""``iobound select`` says what it evaluated (search/selection/select.py, search/cli/select_cmd.py).

References: the selection's candidates (search/selection/dataset.candidates: direct, and
Winograd e = 2, 3, 4 for kernels of 2x2 and more at stride 1) and the README's "Hostile
input" (one error line, never a traceback). Found by a review: a history's record of an
algorithm that is no candidate for the layer was a candidate all the same (Winograd for a
1x1 layer); candidates the history never tuned were printed as "n/a: not a candidate" and
left out of the JSON; a layer none of whose candidates has a configuration was a traceback.
"""

from __future__ import annotations

import json

from iobound.layer_spec import parse_layer_spec
from search.cli.main import main
from search.history import History, HistoryKey
from search.measure.base import MeasureRecord
from search.selection.dataset import candidates


def test_history_cannot_make_winograd_a_candidate_of_a_1x1_layer(tmp_path, capsys):
    spec, db = "cin=8,hin=12,cout=8,kh=1", str(tmp_path / "h.sqlite")
    assert main(["tune", "--layer", spec, "--algorithm", "winograd", "--measure", "model",
                 "--budget", "6", "--history", db, "--no-verify", "--json",
                 "--out-dir", str(tmp_path)]) == 0
    capsys.readouterr()
    assert [c.label for c in candidates(parse_layer_spec(spec))] == ["direct"]
    assert main(["select", "--layer", spec, "--history", db, "--json"]) == 0
    (sel,) = json.loads(capsys.readouterr().out)["layers"]
    assert sel["algorithm"] == "direct" and sel["untuned"] == []
    assert [c["algorithm"] for c in sel["candidates"]] == ["direct"]


def test_candidates_the_history_never_tuned_are_untuned_not_missing(tmp_path, capsys):
    spec = "cin=2,hin=6,cout=4,kh=3,pad=1"
    layer, db = parse_layer_spec(spec), str(tmp_path / "h.sqlite")
    with History(db) as h:  # Winograd e = 2 tuned only (tune --algorithm winograd)
        key = HistoryKey(json.dumps(layer.to_dict(), sort_keys=True), "V100-SXM2", "model v2")
        h.add(key, [MeasureRecord.ok({"e": 2, "x": 6, "y": 6, "z": 4, "tx": 3, "ty": 3, "tz": 1},
                                     time_ms=1.5, estimate=True)])
    assert main(["select", "--layer", spec, "--history", db, "--json"]) == 0
    (sel,) = json.loads(capsys.readouterr().out)["layers"]
    assert sel["source"] == "history" and sel["algorithm"] == "winograd"
    assert sel["untuned"] == ["direct", "winograd-e3", "winograd-e4"]
    assert main(["select", "--layer", spec, "--history", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    cell = dict(zip(reversed(lines[0].split()), reversed(lines[1].split())))
    assert cell["direct"] == cell["wino-e3"] == cell["wino-e4"] == "untuned"
    assert any(line.startswith("untuned: a candidate the history holds no record of")
               for line in lines[2:])


def test_a_layer_no_candidate_can_run_is_one_error_line(capsys):
    spec = "cin=3,hin=200,cout=8,kh=101"  # within the limits; every pruned space empty
    assert main(["select", "--layer", spec]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("iobound select: error: layer ")
    assert "no candidate algorithm has a valid configuration" in err[0]
    # the layer by its short form, as everywhere else (it was the layer's sorted JSON)
    assert err[0].startswith(f"iobound select: error: layer {parse_layer_spec(spec).short()}: ")


def test_candidates_with_no_configuration_are_unavailable_not_untuned(tmp_path, capsys):
    """A 7x7 kernel on the V100: Winograd e = 3 and 4 have no configuration after Table 1
    pruning (``domain --winograd-e 3`` says so; select prints "none"). With a
    history holding direct and e = 2 they were "untuned", with the advice to tune them,
    which can never be followed: they are unavailable, as without history."""
    spec, db = "cin=64,hin=28,cout=128,kh=7,pad=3", str(tmp_path / "h.sqlite")
    for algorithm in ("direct", "winograd"):
        assert main(["tune", "--layer", spec, "--algorithm", algorithm, "--measure", "model",
                     "--budget", "4", "--history", db, "--no-verify", "--json",
                     "--out-dir", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["select", "--layer", spec, "--json"]) == 0
    (oracle,) = json.loads(capsys.readouterr().out)["layers"]
    assert main(["select", "--layer", spec, "--history", db, "--json"]) == 0
    (sel,) = json.loads(capsys.readouterr().out)["layers"]
    assert sel["source"] == "history" and sel["untuned"] == []
    assert sel["unavailable"] == oracle["unavailable"] == ["winograd-e3", "winograd-e4"]


def test_the_table_explains_each_marker_it_prints(capsys):
    """Each cell marker has its legend line, and only a marker printed has one: "none" (a
    candidate with an empty pruned space, the JSON's "unavailable") was "-", which the
    legend never explained, and "n/a" was explained on tables that had none."""
    assert main(["select", "--layer", "cin=64,hin=28,cout=128,kh=7,pad=3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    cell = dict(zip(reversed(lines[0].split()), reversed(lines[1].split())))
    assert cell["wino-e3"] == cell["wino-e4"] == "none" and cell["wino-e2"].endswith("*")
    legend = [line.split(":")[0] for line in lines[2:]]
    assert legend == ["* analytic estimate, not a measurement", "none"]
    assert main(["select", "--layer", "cin=8,hin=12,cout=8,kh=1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines[2:]] == [
        "* analytic estimate, not a measurement", "n/a"]


def test_an_io_gap_of_no_bound_has_its_legend_line(capsys):
    """A layer whose every output lies in the padding has a bound of 0 and no io_gap."""
    assert main(["select", "--layer", "cin=2,hin=1,cout=2,kh=1,pad=2,stride=4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[-2:] == ["0", "-"]
    assert lines[-1].startswith("io_gap -: a bound of 0")
