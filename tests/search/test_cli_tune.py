"""Tests of the ``iobound tune`` command."""

import json

import pytest

from search.cli.main import main
from search.records import read_log

SMALL = "cin=8,hin=8,cout=16,kh=3,pad=1"


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_replay_alone_works(capsys, synth_cache_path, synth_optimum):
    """--measure replay:FILE needs no layer or device and reports the documented JSON keys."""
    out = _json(capsys, ["tune", "--measure", f"replay:{synth_cache_path}", "--budget", "102",
                         "--strategy", "random", "--json"])
    assert out["best"]["time_ms"] == synth_optimum and out["best"]["status"] == "ok"
    assert out["evaluations"] == 102 and out["strategy"] == "random" and out["measure"] == "replay"
    assert out["device"] == "Synthetic GPU"


def test_replay_human_output(capsys, synth_cache_path):
    """The human output names the device from the file and the best time."""
    assert main(["tune", "--measure", f"replay:{synth_cache_path}", "--budget", "10"]) == 0
    text = capsys.readouterr().out
    assert "Synthetic GPU" in text and "best time:" in text and "rank" in text


def test_layer_with_model_writes_kernel_and_checks_it(capsys, tmp_path):
    """Model measure: estimate labelled, bound given, .cu written, emulator check passes."""
    out = _json(capsys, ["tune", "--layer", SMALL, "--measure", "model", "--budget", "12",
                         "--out-dir", str(tmp_path), "--json"])
    assert out["best"]["estimate"] is True and out["measure"] == "model"
    assert out["bound"]["lower_bound_words"] <= out["bound"]["dataflow_io_words"]
    assert (tmp_path / out["kernel_path"].split("/")[-1]).read_text().count("__global__") >= 1
    chk = out["emulator_check"]
    assert chk["checked"] and chk["matches_numpy"] and chk["traffic_matches"]


def test_log_then_resume_measures_nothing_more(capsys, tmp_path, synth_cache_path):
    """A finished run resumed from its log re-measures nothing (all trials resumed)."""
    log = tmp_path / "run.jsonl"
    args = ["tune", "--measure", f"replay:{synth_cache_path}", "--budget", "16", "--json"]
    first = _json(capsys, args + ["--log", str(log)])
    again = _json(capsys, args + ["--resume", str(log)])
    assert again["resumed"] == 16 and again["best"] == first["best"]
    assert len(read_log(log).entries) == 16


def test_history_and_export(capsys, tmp_path, synth_cache_path):
    """--history stores the run; --export-cache writes a loadable Kernel Tuner cache."""
    from search.kt_cache import load_cache
    db, cache = tmp_path / "h.sqlite", tmp_path / "out.json"
    out = _json(capsys, ["tune", "--measure", f"replay:{synth_cache_path}", "--budget", "9",
                         "--history", str(db), "--export-cache", str(cache), "--json"])
    assert out["history"]["best_ever_ms"] == out["best"]["time_ms"]
    assert len(load_cache(cache)) == 9


def test_network_tunes_every_layer(capsys, tmp_path):
    """--network gives one result per layer of the preset."""
    from iobound.networks import network_layers
    out = _json(capsys, ["tune", "--network", "alexnet", "--measure", "model", "--budget", "4",
                         "--strategy", "random", "--no-verify", "--out-dir", str(tmp_path), "--json"])
    assert [l["layer"] for l in out["layers"]] == [l.name for l in network_layers("alexnet")]


@pytest.mark.parametrize("argv, msg", [
    (["tune", "--layer", SMALL, "--strategy", "tabu"], "choose one of explorer"),
    (["tune", "--measure", "replay"], "replay:FILE"),
    (["tune", "--measure", "gpu", "--layer", SMALL], "--measure must be one of"),
    (["tune"], "--layer"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, msg):
    """Bad input: exit code 2 and a one-line message."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert msg in err and len(err.splitlines()) == 1


def test_replay_rejects_layer(capsys, synth_cache_path):
    """With replay the file is the space: --layer is refused."""
    assert main(["tune", "--measure", f"replay:{synth_cache_path}", "--layer", SMALL]) == 2
