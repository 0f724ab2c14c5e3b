"""Tests of the ``iobound tune`` command."""

import json

import pytest

from search.cli.main import main
from search.records import read_log

from tests.search.conftest import synth_cache_dict

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


def test_replay_of_a_file_with_a_blank_device_name_takes_the_file_name(capsys, tmp_path):
    """A cache whose device name is blank is replayed, printed and stored under the file's
    name, the device `history import` would give the same file."""
    raw = synth_cache_dict() | {"device_name": "  "}
    (tmp_path / "gpu9.json").write_text(json.dumps(raw))
    db = str(tmp_path / "h.db")
    assert main(["tune", "--measure", f"replay:{tmp_path / 'gpu9.json'}", "--budget", "4",
                 "--history", db]) == 0
    assert "device gpu9 (the file names none)" in capsys.readouterr().out
    out = _json(capsys, ["history", "list", "--db", db, "--json"])
    assert [row["device"] for row in out] == ["gpu9"]


def test_replay_of_a_file_whose_device_name_breaks_lines_is_refused(capsys, tmp_path):
    """A device name with a line break is refused before anything is measured: one line,
    exit 2, naming the file (not a failure to store the run at its end)."""
    (tmp_path / "bad.json").write_text(json.dumps(synth_cache_dict() | {"device_name": "a\nb"}))
    code = main(["tune", "--measure", f"replay:{tmp_path / 'bad.json'}", "--budget", "4",
                 "--history", str(tmp_path / "h.db")])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "bad.json" in err and "device name" in err and not (tmp_path / "h.db").exists()


def test_layer_with_model_writes_kernel_and_checks_it(capsys, tmp_path):
    """Model measure: estimate labelled, bound given, .cu written, emulator check passes."""
    out = _json(capsys, ["tune", "--layer", SMALL, "--measure", "model", "--budget", "12",
                         "--out-dir", str(tmp_path), "--json"])
    assert out["best"]["estimate"] is True and out["measure"] == "model"
    assert out["bound"]["lower_bound_words"] <= out["bound"]["dataflow_io_words"]
    assert (tmp_path / out["kernel_path"].split("/")[-1]).read_text().count("__global__") >= 1
    chk = out["emulator_check"]
    assert chk["checked"] and chk["matches_numpy"] and chk["traffic_matches"]
    assert chk["flops_matches"] and chk["flops"] == chk["model_flops"] > 0


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
    (["tune", "--layer", SMALL, "--measure", "model", "--budget", "0"], "--budget must be >= 1"),
    (["tune", "--layer", SMALL, "--measure", "model", "--batch-size", "0"], "--batch-size must"),
    (["tune", "--layer", SMALL, "--measure", "model", "--patience", "0"], "--patience must"),
    (["tune", "--layer", SMALL, "--measure", "model", "--history", "/no/such/dir/h.db"],
     "--history '/no/such/dir/h.db': the folder '/no/such/dir' does not exist"),
    (["tune", "--layer", SMALL, "--measure", "model", "--resume", "/no/such/run.jsonl"],
     "--resume: no log"),
    (["tune", "--network", "alexnet", "--measure", "model", "--resume", "/no/such/run.jsonl"],
     "one per layer"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, msg):
    """Bad input: exit code 2, a one-line message, and nothing run or printed before it."""
    assert main(argv) == 2
    cap = capsys.readouterr()
    err = cap.err.strip()
    assert msg in err and len(err.splitlines()) == 1 and cap.out == ""


def test_existing_log_is_refused_before_tuning(capsys, tmp_path, synth_cache_path):
    """--log of an existing file: exit 2 at once, the file untouched; a file that is no
    run's log, with or without a whole line, is not offered to --resume."""
    log = tmp_path / "run.jsonl"
    for text in ("keep me\n", '{"my": "notes"}', "x"):
        log.write_text(text)
        assert main(["tune", "--measure", f"replay:{synth_cache_path}", "--log", str(log)]) == 2
        cap = capsys.readouterr()
        assert "exists and is no run's log; it is not written over" in cap.err
        assert cap.out == "" and log.read_text() == text


def test_t1_file_is_not_a_replay_space(capsys, tmp_path):
    """A T1 description (restrictions only) is refused in one line; nothing is evaluated."""
    t1 = tmp_path / "t1.json"
    t1.write_text(json.dumps({"ConfigurationSpace": {"Conditions": [{"Expression": "1/0"}]}}))
    assert main(["tune", "--measure", f"replay:{t1}", "--log", str(tmp_path / "run.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "T1 tuning-problem description" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "run.jsonl").exists()   # no run started, nothing logged


def test_resume_with_a_log_of_another_layer_is_refused(capsys, tmp_path):
    """Resuming layer B from layer A's log is exit 2: A's numbers are never B's."""
    log = tmp_path / "a.jsonl"
    base = ["tune", "--measure", "model", "--budget", "3", "--strategy", "random", "--no-verify",
            "--out-dir", str(tmp_path), "--json"]
    _json(capsys, base + ["--layer", SMALL, "--log", str(log)])
    before = log.read_text()
    assert main(base + ["--layer", "cin=8,hin=8,cout=32,kh=3,pad=1", "--resume", str(log)]) == 2
    assert "another space" in capsys.readouterr().err and log.read_text() == before


def test_network_resume_after_a_kill_mid_network(capsys, tmp_path):
    """A network run killed mid-way (a torn log, later layers without logs) resumes: every layer
    ends with budget unique configurations, logged ones are not measured again."""
    from iobound.networks import network_layers
    names = [l.name for l in network_layers("alexnet")]
    log = tmp_path / "net.jsonl"
    base = ["tune", "--network", "alexnet", "--measure", "model", "--budget", "4", "--strategy",
            "random", "--no-verify", "--out-dir", str(tmp_path), "--json"]
    _json(capsys, base + ["--log", str(log)])
    per_layer = [tmp_path / f"net.{n}.jsonl" for n in names]
    for p in per_layer[-2:]:
        p.unlink()  # never reached
    torn = per_layer[-3]
    lines = torn.read_text().splitlines(keepends=True)
    torn.write_text("".join(lines[:3]) + lines[3][:15])  # header, 2 records, a torn line
    out = _json(capsys, base + ["--resume", str(log)])
    got = {l["layer"]: (l["evaluations"], l["resumed"]) for l in out["layers"]}
    assert [got[n] for n in names] == [(4, 4)] * (len(names) - 3) + [(4, 2), (4, 0), (4, 0)]
    assert out["evaluations"] == 4 * len(names) and out["strategy"] == "random"
    for p in per_layer:
        idx = [e.index for e in read_log(p).entries]
        assert len(idx) == 4 == len(set(idx))


def test_replay_rejects_device(capsys, synth_cache_path):
    """With replay the file names the device: --device is refused, not silently ignored."""
    assert main(["tune", "--measure", f"replay:{synth_cache_path}", "--device", "a100"]) == 2
    assert "defines the space and the device" in capsys.readouterr().err


@pytest.mark.parametrize("algorithm", ["direct", "winograd", "all"])
def test_replay_rejects_algorithm(capsys, synth_cache_path, algorithm):
    """The recorded file is the space: an --algorithm (our kernel templates) is refused,
    not silently ignored."""
    assert main(["tune", "--measure", f"replay:{synth_cache_path}", "--algorithm", algorithm]) == 2
    err = capsys.readouterr().err
    assert "do not give --layer/--network/--device/--algorithm" in err and len(err.splitlines()) == 1


def test_replay_rejects_layer(capsys, synth_cache_path):
    """With replay the file is the space: --layer is refused."""
    assert main(["tune", "--measure", f"replay:{synth_cache_path}", "--layer", SMALL]) == 2


def test_times_print_as_every_command_prints_them(capsys, tmp_path):
    """tune's table, its best line and its legend write a time as ``history`` and ``select``
    do (:func:`search.cli.common.ms_text`: four significant digits, ``*`` an estimate)."""
    from search.cli.common import ESTIMATE_LEGEND, ms_text
    argv = ["tune", "--layer", SMALL, "--measure", "model", "--budget", "4", "--no-verify",
            "--out-dir", str(tmp_path)]
    best = _json(capsys, argv + ["--json"])["best"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    first = next(l for l in lines if l.lstrip().startswith("1 "))
    assert first.split()[1] == ms_text(best["time_ms"], estimate=True)
    assert [l.strip() for l in lines].count(ESTIMATE_LEGEND) == 1
    assert f"estimated time: {ms_text(best['time_ms'])} ms " in "\n".join(lines)
