"""Smoke test of the leave-network-out half of the transfer benchmark on small layers."""

from __future__ import annotations

import json

import pytest

from benchmarks import transfer_quality as tq_cli


def test_leave_network_out_scores_both_methods(capsys, tmp_path):
    """History from AlexNet, one VGG-16 target, tiny budgets: both methods get scores in
    (0, 1], the history is used and holds no record of the target network."""
    rc = tq_cli.main(["--leave-network-out", "--history-networks", "alexnet",
                      "--target-network", "vgg16", "--target-layers", "vgg16.conv5_1",
                      "--seeds", "1", "--budgets", "4", "8", "--history-budget", "8",
                      "--reference-budget", "8", "--out", str(tmp_path), "--no-plot"])
    assert rc == 0
    table, goals = capsys.readouterr().out.split("Goals of issue 12")  # the goals below it
    rows = [line for line in table.splitlines() if line.startswith("| vgg16")]
    assert [r.split("|")[2].strip() for r in rows] == ["explorer", "explorer+history"]
    assert "explorer+history never below explorer" in goals
    for r in rows:
        assert all(0.0 < float(c.split("±")[0]) <= 1.0 for c in r.strip("|").split("|")[2:])
    data = json.loads((tmp_path / "transfer_network_runs.json").read_text())
    (facts,) = data["meta"]["targets"]
    assert facts["target"] == "vgg16.conv5_1" and facts["history_records"] > 0
    assert data["meta"]["history_records"] == 5 * 8


def test_leave_network_out_refuses_reuse_and_other_methods(tmp_path):
    with pytest.raises(SystemExit, match="reuse"):
        tq_cli.main(["--leave-network-out", "--reuse", str(tmp_path / "x.json")])
    with pytest.raises(SystemExit, match="methods"):
        tq_cli.main(["--leave-network-out", "--methods", "gga"])


def test_leave_network_out_scores_zero_shot_when_asked(capsys, tmp_path):
    """``--methods zero-shot``: the history model's top K on the target, scored in (0, 1]."""
    rc = tq_cli.main(["--leave-network-out", "--history-networks", "alexnet",
                      "--target-network", "vgg16", "--target-layers", "vgg16.conv5_1",
                      "--seeds", "1", "--budgets", "4", "--history-budget", "8",
                      "--reference-budget", "8", "--methods", "zero-shot", "--out", str(tmp_path),
                      "--no-plot"])
    assert rc == 0
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| vgg16")]
    assert row.split("|")[2].strip() == "zero-shot"
    assert 0.0 < float(row.split("|")[3].split("±")[0]) <= 1.0


def test_leave_network_out_takes_layers_of_no_preset_network(capsys, tmp_path):
    """A target layer given as a spec (no preset network has it) is a target named by its
    shape, scored like any other; a bad spec is one error line before any run."""
    spec = "cin=24,hin=12,cout=40,kh=3,pad=1"
    rc = tq_cli.main(["--leave-network-out", "--history-networks", "alexnet",
                      "--target-layers", spec, "--seeds", "1", "--budgets", "4",
                      "--history-budget", "8", "--reference-budget", "8", "--out", str(tmp_path),
                      "--no-plot"])
    assert rc == 0
    name = "n1 24x12x12 -> 40x12x12 k3x3 s1x1 p1x1"
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith(f"| {name}")]
    assert len(rows) == 2 and all(0.0 < float(r.split("|")[3].split("±")[0]) <= 1.0 for r in rows)
    (facts,) = json.loads((tmp_path / "transfer_network_runs.json").read_text())["meta"]["targets"]
    assert facts["target"] == name and facts["same_shape_in_history"] == []
    with pytest.raises(SystemExit, match="unknown key 'cn'"):
        tq_cli.main(["--leave-network-out", "--target-layers", "cn=3,hin=8,cout=4,kh=3",
                     "--out", str(tmp_path / "x")])
    with pytest.raises(SystemExit, match="one layer twice"):
        tq_cli.main(["--leave-network-out", "--target-layers", spec, spec,
                     "--out", str(tmp_path / "x")])


@pytest.mark.parametrize("args, message", [
    (["--device", "nosuch"], "unknown device 'nosuch'"),
    (["--target-network", "nosuch"], "unknown network 'nosuch'"),
    (["--history-networks", "vgg16", "nosuch"], "unknown network 'nosuch'"),
    (["--history-networks", "resnet50", "--target-network", "resnet50"],
     "also a history network"),
    (["--target-layers", "resnet18.conv1"], "resnet18.conv1 not in the target network resnet50"),
    (["--target-layers", "resnet50.nosuch"], "unknown layer"),
])
def test_leave_network_out_refuses_bad_networks_before_any_run(args, message, tmp_path):
    """A bad device, network or target layer is one error line before any history is built;
    a target layer of another network (which the history may hold) is refused."""
    with pytest.raises(SystemExit, match=message):
        tq_cli.main(["--leave-network-out", "--out", str(tmp_path), *args])
    assert not list(tmp_path.iterdir())


def _network_args(**kw):
    import argparse
    base = dict(device="v100", history_networks=["resnet50", "vgg16"],
                target_network="ResNet50", target_layers=[], methods=["explorer"])
    return argparse.Namespace(**{**base, **kw})


def test_a_target_network_spelled_otherwise_is_still_a_history_network():
    """Preset names are case-insensitive: ``ResNet50`` with ``resnet50`` in the history is
    the target's own records as its history, refused (it passed)."""
    with pytest.raises(SystemExit, match="also a history network"):
        tq_cli._check_network_arguments(_network_args())


def test_the_leak_check_sees_the_target_networks_records_whatever_the_case():
    from benchmarks.tq.network import run_network_target
    from iobound.networks import get_layer
    from search.conv_space import ConvSpace
    from search.db import Measurement, Workload
    from search.db.conv_template import CONV_TEMPLATE
    from search.measure.model import ModelMeasurer
    from search.tuner import tune
    layer = get_layer("resnet50.conv5_1b")
    space, meas = ConvSpace(layer, "v100"), ModelMeasurer(layer, "v100")
    w = Workload(CONV_TEMPLATE, layer.to_dict(), space.params)
    own = [Measurement(w, space.device.name, meas.toolchain(), t.record, source="bench")
           for t in tune(space, meas, "explorer", budget=3, seed=0).trials]
    with pytest.raises(AssertionError, match="in the history"):
        run_network_target(layer, "v100", own, ["explorer"], 1, [2], 2, "ResNet50")
