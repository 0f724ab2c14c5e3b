"""A network's layers of one shape are tuned once: the later ones take the first's result.

What is checked: :func:`~search.session.repeats.repeats` against a direct search of the
earlier layers; a repeat measures nothing (the stand-in measurer leaves no build marker
for it, in turn or through a pool) and reports exactly what tuning it again gives with a
deterministic measurer and the same seed (``tune_repeats=True``); the totals, the network
table, an interrupted run's count and the CLI (``--network resnet18``, ``--tune-repeats``,
``--resume``) count each measurement once.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st

from iobound.layer import ConvLayer
from network_standin import StandInMeasurer, markers
from search.cli.main import main
from search.executors import ExecutorOptions
from search.interrupts import Interrupted
from search.session import Builders, Observer, TuneSettings, tune_layers
from search.session.network import network_table
from search.session.parallel import interrupted_run
from search.session.repeats import repeats

A, B = (ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=c, k_h=3, k_w=3, padding=1) for c in (16, 32))
#: a, b, a again, b again, a once more: three repeats of two shapes
LAYERS = [dataclasses.replace(layer, name=name) for layer, name in
          ((A, "net.a1"), (B, "net.b1"), (A, "net.a2"), (B, "net.b2"), (A, "net.a3"))]
BUDGET = 6


def _job(layer, device="v100", algorithm="direct", measure="model"):
    return SimpleNamespace(layer=layer, device=device, algorithm=algorithm, measure=measure)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([A, B]), st.sampled_from(["v100", "t4"]),
                          st.sampled_from(["direct", "winograd"])), max_size=8))
def test_repeats_point_at_the_first_earlier_job_of_the_same_space(specs):
    jobs = [_job(layer, device, alg) for layer, device, alg in specs]
    origin = repeats(jobs)
    for k, (job, o) in enumerate(zip(jobs, origin)):
        same = [j for j in range(k) if (jobs[j].layer, jobs[j].device, jobs[j].algorithm)
                == (job.layer, job.device, job.algorithm)]
        assert o == (same[0] if same else None)
        assert o is None or origin[o] is None


def _tune(tmp: Path, folder: str, observer=None, **kw):
    (tmp / folder).mkdir()
    builders = Builders(measurer=lambda kind, layer, device, alg: StandInMeasurer(
        SimpleNamespace(name=f"c{layer.c_out}"), tmp / folder, 0.0))  # times of the shape
    return tune_layers(LAYERS, "v100", TuneSettings(**{"strategy": "explorer", "budget": BUDGET,
                                                       "seed": 3, **kw}),
                       out_dir=str(tmp / "k"), verify=False, builders=builders,
                       observer=observer)


def _outcome(rep):
    return rep.result.best.config, rep.result.best.record.time_ms, rep.winner.kernel_path


def test_a_repeat_measures_nothing_and_reports_what_tuning_it_again_finds(tmp_path):
    once = _tune(tmp_path, "once")
    again = _tune(tmp_path, "again", tune_repeats=True)
    assert [r.same_as for r in once] == [None, None, "net.a1", "net.b1", "net.a1"]
    assert [r.evaluations for r in once] == [BUDGET, BUDGET, 0, 0, 0]
    assert len(markers(tmp_path / "once")) == 2 * BUDGET  # the stand-in built 2 layers' configs
    assert [r.same_as for r in again] == [None] * 5
    assert len(markers(tmp_path / "again")) == 5 * BUDGET
    for rep, tuned in zip(once, again):
        assert rep.layer.name == tuned.layer.name
        assert _outcome(rep)[:2] == _outcome(tuned)[:2]  # same seed, same space, same times
    assert once[2].winner.kernel_path == once[0].winner.kernel_path
    assert once[2].to_dict()["same_as"] == "net.a1" and once[2].to_dict()["evaluations"] == 0


def test_repeats_through_a_pool_are_not_measured_either(tmp_path):
    seq = _tune(tmp_path, "seq")
    par = _tune(tmp_path, "par", executor=ExecutorOptions(workers=2, parallel_layers=2))
    assert [r.layer.name for r in par] == [l.name for l in LAYERS]
    assert [r.same_as for r in par] == [r.same_as for r in seq]
    assert [_outcome(r)[:2] for r in par] == [_outcome(r)[:2] for r in seq]
    assert len(markers(tmp_path / "par")) == 2 * BUDGET


def test_the_table_and_an_interrupt_count_each_measurement_once(tmp_path):
    reports = _tune(tmp_path, "t")
    logs = [f"run.{l.name}.jsonl" for l in LAYERS]
    table = network_table(reports, logs)
    assert table["evaluations"] == 2 * BUDGET and table["tuned"] == 5
    rows = {row["layer"]: row for row in table["layers"]}
    assert rows["net.a3"]["log"] == "run.net.a1.jsonl" and rows["net.b2"]["same_as"] == "net.b1"
    assert rows["net.b2"]["best_cost"] == rows["net.b1"]["best_cost"]
    a, b = rows["net.a1"]["best_time_ms"], rows["net.b1"]["best_time_ms"]
    assert table["total_time_ms"] == pytest.approx(3 * a + 2 * b)  # the network runs every layer
    assert table["estimate"] is False
    jobs = [SimpleNamespace(resume_as="run.jsonl", per_algorithm=False)] * 5
    stopped = interrupted_run(jobs, reports[:4], {4: Interrupted(2, "run.net.a3.jsonl")})
    assert stopped.measurements == 2 * BUDGET + 2


class _CtrlCAtTheFirstRepeat(Observer):
    def finished(self, report):
        if report.same_as is not None:
            raise KeyboardInterrupt


@pytest.mark.parametrize("at_once", [None, ExecutorOptions(workers=2, parallel_layers=2)])
def test_ctrl_c_while_a_repeat_is_told_says_what_the_logs_keep(at_once, tmp_path):
    with pytest.raises(Interrupted) as stop:
        _tune(tmp_path, "c", _CtrlCAtTheFirstRepeat(), executor=at_once,
              log=str(tmp_path / "run.jsonl"))
    assert stop.value.measurements == 2 * BUDGET  # both shapes' layers ran; nothing counted twice
    assert stop.value.resume_as == str(tmp_path / "run.jsonl")


def _cli_json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_network_tunes_each_shape_once_unless_asked(tmp_path, capsys):
    base = ["tune", "--network", "resnet18", "--measure", "model", "--strategy", "random",
            "--budget", "2", "--no-verify", "--out-dir", str(tmp_path / "k"), "--json"]
    out = _cli_json(capsys, base + ["--log", str(tmp_path / "run.jsonl")])
    shapes = {json.dumps(r["layer_shape"]) for r in out["layers"]}
    assert len(out["layers"]) == 20 and out["evaluations"] == 2 * len(shapes)
    repeat = {r["layer"]: r for r in out["layers"]}["resnet18.conv2_2b"]
    assert repeat["same_as"] == "resnet18.conv2_1a" and repeat["evaluations"] == 0
    assert not (tmp_path / "run.resnet18.conv2_2b.jsonl").exists()
    resumed = _cli_json(capsys, base + ["--resume", str(tmp_path / "run.jsonl")])
    assert sum(r["resumed"] for r in resumed["layers"] if "same_as" not in r) == 2 * len(shapes)
    assert [r["best"] for r in resumed["layers"]] == [r["best"] for r in out["layers"]]
    every = _cli_json(capsys, base + ["--tune-repeats"])
    assert every["evaluations"] == 2 * 20 and not any("same_as" in r for r in every["layers"])


@pytest.mark.parametrize("argv", [["--layer", "resnet18.conv1"], ["--measure", "replay:x.json"]])
def test_tune_repeats_without_a_network_is_one_line_exit_2(argv, capsys):
    assert main(["tune", *argv, "--tune-repeats"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("--tune-repeats needs --network NAME (the layers of one run that share "
                        "a shape)") and "\n" not in err
