"""``iobound tune --algorithm all``: each layer with every algorithm, the fastest kept.

Checked against what the run wrote: every (layer, algorithm) pair the kernels compute is
tuned with its own log (``run.<layer>.<algorithm>.jsonl``), the choice is the candidate
whose log holds the lowest cost, the network table's row is that candidate's with every
candidate's evaluations, a resume continues each log, and ``iobound select --history``
reads the stored run to the same choice.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from iobound.algorithms import ALGORITHMS, get_algorithm
from iobound.errors import InvalidInputError
from iobound.networks import get_layer, network_layers
from kernels.families import kernel_family
from search.cli.main import main
from search.records import read_log
from search.selection.dataset import candidates
from search.session import (TuneSettings, choose_algorithms, layer_algorithms, plan_layers,
                            tune_layers)

ALEXNET = network_layers("alexnet")


def _log_costs(path: Path) -> list[float]:
    return [e.record.cost for e in read_log(path).entries if e.record.is_ok]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(network_layers("resnet50") + ALEXNET), min_size=1, max_size=4))
def test_all_pairs_every_layer_with_each_algorithm_that_computes_it(layers):
    pairs = layer_algorithms(layers, "all")
    expected = [(layer, a) for layer in layers for a in ALGORITHMS
                if kernel_family(get_algorithm(a)).problem(layer) is None
                and a in {c.algorithm for c in candidates(layer)}]  # as select offers them
    assert pairs == expected
    assert all(a == "direct" for _, a in layer_algorithms(layers, "direct"))


def test_plan_all_names_each_job_file_by_layer_and_algorithm(tmp_path):
    conv1, conv2 = get_layer("alexnet.conv1"), get_layer("alexnet.conv2")  # stride 4; stride 1
    jobs = plan_layers([conv1, conv2], "v100", TuneSettings(log=str(tmp_path / "run.jsonl"),
                       export_cache=str(tmp_path / "c.json")), algorithm="all")
    assert [(j.layer.name, j.algorithm) for j in jobs] == [
        ("alexnet.conv1", "direct"), ("alexnet.conv2", "direct"), ("alexnet.conv2", "winograd")]
    assert [Path(j.settings.log).name for j in jobs] == [
        "run.alexnet.conv1.direct.jsonl", "run.alexnet.conv2.direct.jsonl",
        "run.alexnet.conv2.winograd.jsonl"]
    assert Path(jobs[2].settings.export_cache).name == "c.alexnet.conv2.winograd.json"
    with pytest.raises(InvalidInputError, match="unknown algorithm"):
        plan_layers([conv1], "v100", TuneSettings(), algorithm="fft")
    (tmp_path / "run.alexnet.conv2.winograd.jsonl").write_text('{"x": 1}\n')
    with pytest.raises(InvalidInputError, match="winograd.jsonl' exists"):
        plan_layers([conv2], "v100", TuneSettings(log=str(tmp_path / "run.jsonl")), algorithm="all")


def test_choice_is_the_lowest_cost_and_a_tie_keeps_the_first(tmp_path):
    layer = get_layer("alexnet.conv2")
    reports = tune_layers([layer], "v100", TuneSettings(strategy="random", budget=4),
                          algorithm="all", out_dir=str(tmp_path), verify=False)
    [choice] = choose_algorithms(reports)
    costs = {r.algorithm: r.result.best.record.cost for r in reports}
    assert choice.chosen.algorithm == min(costs, key=costs.get)
    direct, wino = reports
    best = dataclasses.replace(wino.result.best, record=dataclasses.replace(
        wino.result.best.record, time_ms=direct.result.best.record.time_ms))
    tied = dataclasses.replace(wino, result=dataclasses.replace(wino.result, best=best))
    assert choose_algorithms([direct, tied])[0].chosen is direct
    # two equal layers in a row are two layers, not one with four candidates
    twice = choose_algorithms([direct, wino, direct, wino])
    assert [len(c.candidates) for c in twice] == [2, 2]


def test_cli_layer_all_json_logs_and_resume(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = ["tune", "--layer", "alexnet.conv2", "--algorithm", "all", "--measure", "model",
            "--strategy", "random", "--no-verify", "--json"]
    assert main(argv + ["--budget", "4", "--log", "run.jsonl"]) == 0
    out = json.loads(capsys.readouterr().out)
    logs = {a: tmp_path / f"run.alexnet.conv2.{a}.jsonl" for a in ("direct", "winograd")}
    assert [(l["algorithm"], l["evaluations"]) for l in out["layers"]] == [("direct", 4),
                                                                        ("winograd", 4)]
    best = {a: min(_log_costs(p)) for a, p in logs.items()}
    [choice] = out["choices"]
    assert choice["algorithm"] == min(best, key=best.get)
    assert choice["best_cost"] == pytest.approx(min(best.values()))
    assert {c["algorithm"]: c["best_cost"] for c in choice["candidates"]} == pytest.approx(best)
    assert Path(choice["kernel_path"]).name == f"alexnet.conv2_{choice['algorithm']}_best.cu"

    assert main(argv + ["--budget", "6", "--resume", "run.jsonl"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert [(l["resumed"], l["evaluations"]) for l in again["layers"]] == [(4, 6), (4, 6)]
    for path in logs.values():
        indices = [e.index for e in read_log(path).entries]
        assert len(indices) == 6 == len(set(indices))  # nothing measured twice


def test_cli_layer_all_text_names_the_fastest(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["tune", "--layer", "alexnet.conv2", "--algorithm", "all", "--measure", "model",
                 "--strategy", "random", "--budget", "4", "--no-verify", "--log", "r.jsonl"]) == 0
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    best = {a: min(_log_costs(tmp_path / f"r.alexnet.conv2.{a}.jsonl"))
            for a in ("direct", "winograd")}
    won = min(best, key=best.get)
    other = "winograd" if won == "direct" else "direct"
    assert last.startswith(f"algorithm: {won} is the fastest, {best[won]:.4g}* ms "
                           f"({other} {best[other]:.4g}*)")


def test_cli_network_all_table_rows_are_the_choices(tmp_path, capsys):
    table = tmp_path / "t.json"
    assert main(["tune", "--network", "alexnet", "--algorithm", "all", "--measure", "model",
                 "--strategy", "random", "--budget", "3", "--no-verify", "--out-dir",
                 str(tmp_path / "k"), "--log", str(tmp_path / "run.jsonl"),
                 "--network-json", str(table)]) == 0
    out = capsys.readouterr().out.splitlines()
    data = json.loads(table.read_text())
    assert [row["layer"] for row in data["layers"]] == [l.name for l in ALEXNET]
    for row, layer in zip(data["layers"], ALEXNET):
        algs = [a for _, a in layer_algorithms([layer], "all")]
        assert [c["algorithm"] for c in row["candidates"]] == algs
        best = {c["algorithm"]: min(_log_costs(Path(c["log"]))) for c in row["candidates"]
                if row["same_as"] is None}
        if row["same_as"] is None:
            assert row["algorithm"] == min(best, key=best.get)
            assert row["best_cost"] == pytest.approx(min(best.values()))
            assert row["evaluations"] == 3 * len(algs)
        line = next(l for l in out if l.startswith(row["layer"] + " "))
        assert line.split()[1] == row["algorithm"]
    assert data["total_time_ms"] == pytest.approx(sum(r["best_time_ms"] for r in data["layers"]))


def test_select_history_reads_an_all_run_to_the_same_choice(tmp_path, capsys):
    db = str(tmp_path / "h.db")
    assert main(["tune", "--layer", "alexnet.conv5", "--algorithm", "all", "--measure", "model",
                 "--strategy", "random", "--budget", "5", "--no-verify", "--out-dir",
                 str(tmp_path / "k"), "--history", db, "--json"]) == 0
    [choice] = json.loads(capsys.readouterr().out)["choices"]
    assert main(["select", "--layer", "alexnet.conv5", "--history", db, "--json"]) == 0
    [picked] = json.loads(capsys.readouterr().out)["layers"]
    assert picked["source"] == "history"
    assert picked["algorithm"] == choice["algorithm"]
    assert picked["time_ms"] == pytest.approx(choice["best_cost"])
