"""Tests of ``iobound history``: import, list, best, export, and one-line errors."""

from __future__ import annotations

import json
import os

import pytest

from search.cli.common import ESTIMATE_LEGEND
from search.cli.main import main
from search.db import TuningDB
from search.kt_cache import load_cache


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_import_list_best_export(capsys, tmp_path, synth_cache_path):
    """The four actions on a synthetic cache; the export has the file's entries."""
    db = str(tmp_path / "t.db")
    code, out, _ = _run(capsys, "history", "import", str(synth_cache_path), "--db", db)
    assert code == 0 and "new of" in out
    code, out, _ = _run(capsys, "history", "import", str(synth_cache_path), "--db", db, "--json")
    assert code == 0 and json.loads(out)["files"][0]["added"] == 0
    code, out, _ = _run(capsys, "history", "list", "--db", db, "--json")
    (row,) = json.loads(out)
    assert row["device"] == "Synthetic GPU" and row["best_ms"] == min(
        e["time"] for e in load_cache(synth_cache_path).entries if not isinstance(e["time"], str))
    code, out, _ = _run(capsys, "history", "best", "--db", db, "-k", "2", "--json")
    best = json.loads(out)
    assert code == 0 and len(best) == 2 and best[0]["time_ms"] <= best[1]["time_ms"]
    target = tmp_path / "out.json"
    code, out, _ = _run(capsys, "history", "export", "--db", db, str(target))
    assert code == 0 and len(load_cache(target)) == len(load_cache(synth_cache_path))


@pytest.mark.parametrize("argv, needle", [
    (["import", "{missing}"], "no such file"),
    (["import", "{fifo}"], "fifo: not a regular file"),
    (["import", "{bad}"], "bad.json"),
    (["import", "{synth}", "--device", "other"], "disagrees"),
    (["list"], "no such database"),
])
def test_errors_are_one_line_exit_2(capsys, tmp_path, synth_cache_path, argv, needle):
    """Bad input: exit 2, one stderr line naming the problem, nothing stored."""
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    os.mkfifo(tmp_path / "fifo")  # exists, but no file to read: not "no such file"
    names = {"missing": str(tmp_path / "nope.json"), "bad": str(bad), "synth": str(synth_cache_path),
             "fifo": str(tmp_path / "fifo")}
    db = tmp_path / ("t.db" if argv[0] == "import" else "absent.db")
    code, out, err = _run(capsys, "history", *[a.format(**names) for a in argv], "--db", str(db))
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1 and out == ""


def test_export_needs_a_device_when_several_hold_the_workload(capsys, tmp_path, two_device_db):
    """Two devices, no --device: refused with the list of devices."""
    db = two_device_db[0]
    capsys.readouterr()
    code, _, err = _run(capsys, "history", "export", "--db", db, str(tmp_path / "o.json"))
    assert code == 2 and "Second GPU" in err and "Synthetic GPU" in err
    code, _, _ = _run(capsys, "history", "export", "--db", db, "--device", "Second GPU",
                      str(tmp_path / "o.json"))
    assert code == 0 and load_cache(tmp_path / "o.json").device_name == "Second GPU"


def test_tune_history_file_is_a_tuning_database(capsys, tmp_path, synth_cache_path):
    """What `iobound tune --history` stores is listed by `iobound history list`."""
    db = str(tmp_path / "t.db")
    code = main(["tune", "--measure", f"replay:{synth_cache_path}", "--budget", "6", "--history",
                 db, "--json"])
    capsys.readouterr()
    assert code == 0
    code, out, _ = _run(capsys, "history", "list", "--db", db, "--json")
    (row,) = json.loads(out)
    assert (row["device"], row["template"], row["problem"], row["measurements"]) == (
        "Synthetic GPU", "synth_kernel", [64, 64], 6)


def test_export_into_a_pipe_writes_into_it(capsys, tmp_path, synth_cache_path):
    """history export to a path that is no regular file (a pipe; /dev/null is one too):
    the cache goes into it, the pipe stays a pipe (it was replaced by a regular file), and
    the entries, which cannot be read back, are not claimed."""
    import os
    import stat
    import threading
    db, fifo = tmp_path / "t.db", tmp_path / "fifo"
    assert _run(capsys, "history", "import", str(synth_cache_path), "--db", str(db))[0] == 0
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    code, out, err = _run(capsys, "history", "export", "--db", str(db), str(fifo), "--json")
    reader.join(10)
    assert code == 0 and err == "" and json.loads(out)["entries"] is None
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and len(json.loads(got[0])["cache"]) > 0


@pytest.mark.parametrize("how", ["same", "dotdot", "symlink", "hardlink", "wal"])
def test_export_refuses_to_write_over_the_database(capsys, tmp_path, synth_cache_path, how):
    """The output is the database file (by any path, or its WAL): refused, the file unchanged."""
    db = tmp_path / "t.db"
    assert _run(capsys, "history", "import", str(synth_cache_path), "--db", str(db))[0] == 0
    (tmp_path / "sub").mkdir()
    target = {"same": db, "dotdot": tmp_path / "sub" / ".." / "t.db",
              "symlink": tmp_path / "link.db", "hardlink": tmp_path / "hard.db",
              "wal": tmp_path / "t.db-wal"}[how]
    if how == "symlink":
        target.symlink_to(db)
    elif how == "hardlink":
        target.hardlink_to(db)
    before = db.read_bytes()
    code, out, err = _run(capsys, "history", "export", "--db", str(db), str(target))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "database" in err and db.read_bytes() == before
    code, out, _ = _run(capsys, "history", "list", "--db", str(db), "--json")
    assert code == 0 and json.loads(out)[0]["measurements"] == len(load_cache(synth_cache_path))


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_best_on_an_unknown_device_is_bad_input(capsys, tmp_path, synth_cache_path, json_flag):
    """best --device NOSUCH: one stderr line naming it and the devices there are, exit 2."""
    db = str(tmp_path / "t.db")
    assert _run(capsys, "history", "import", str(synth_cache_path), "--db", db)[0] == 0
    code, out, err = _run(capsys, "history", "best", "--db", db, "--device", "nosuch", *json_flag)
    assert (code, out) == (2, "") and len(err.strip().splitlines()) == 1
    assert "nosuch" in err and "Synthetic GPU" in err


def _two_param_sets(tmp_path):
    """A database with two workloads k [8] that differ only in parameter names (x,y / x,z)."""
    db = str(tmp_path / "t.db")
    for name, second, t in (("a.json", "y", 1.0), ("b.json", "z", 2.0)):
        (tmp_path / name).write_text(json.dumps({
            "device_name": "d", "kernel_name": "k", "problem_size": [8],
            "tune_params": {"x": [1], second: [1]},
            "cache": {"1,1": {"x": 1, second: 1, "time": t}}}))
        assert main(["history", "import", str(tmp_path / name), "--db", db]) == 0
    return db


def test_workloads_differing_only_in_parameters_get_distinct_labels(capsys, tmp_path):
    """Two workloads with the same template and problem: labels name their parameters, and
    each can be chosen for export by its label."""
    db = _two_param_sets(tmp_path)
    capsys.readouterr()
    code, out, _ = _run(capsys, "history", "list", "--db", db, "--json")
    assert sorted(r["workload"] for r in json.loads(out)) == ["k [8] (x,y)", "k [8] (x,z)"]
    code, _, err = _run(capsys, "history", "export", "--db", db, "--workload", "k [8]",
                        str(tmp_path / "o.json"))
    assert code == 2 and "k [8] (x,y)" in err and "k [8] (x,z)" in err
    code, _, _ = _run(capsys, "history", "export", "--db", db, "--workload", "k [8] (x,z)",
                      str(tmp_path / "o.json"))
    cache = load_cache(tmp_path / "o.json")
    assert code == 0 and cache.keys == ("x", "z") and cache.entries[0]["time"] == 2.0


def test_a_preset_alias_is_stored_and_found_under_the_presets_name(capsys, tmp_path,
                                                                     synth_cache_path):
    """``--device v100`` on a file naming no device stores ``V100-SXM2`` (what ``tune
    --device v100`` records), so a file naming ``V100-SXM2`` is the same device, not a
    disagreement; ``best``/``export --device v100`` find it."""
    raw = json.loads(__import__("gzip").open(synth_cache_path, "rt").read())
    raw.pop("device_name")
    nameless, named = tmp_path / "nameless.json", tmp_path / "named.json"
    nameless.write_text(json.dumps(raw))
    named.write_text(json.dumps({**raw, "device_name": "V100-SXM2"}))
    db = str(tmp_path / "t.db")
    code, out, err = _run(capsys, "history", "import", str(nameless), "--db", db,
                          "--device", "v100", "--json")
    assert code == 0, err
    assert json.loads(out)["files"][0]["device"] == "V100-SXM2"
    code, out, err = _run(capsys, "history", "import", str(named), "--db", db, "--device", "v100",
                          "--json")
    assert code == 0 and json.loads(out)["files"][0]["added"] == 0, err
    code, out, _ = _run(capsys, "history", "list", "--db", db, "--json")
    assert [r["device"] for r in json.loads(out)] == ["V100-SXM2"]
    code, out, _ = _run(capsys, "history", "best", "--db", db, "--device", "v100", "--json")
    assert code == 0 and {m["device"] for m in json.loads(out)} == {"V100-SXM2"}
    code, out, err = _run(capsys, "history", "export", "--db", db, "--device", "v100",
                          str(tmp_path / "out.json"))
    assert code == 0, err
    assert load_cache(tmp_path / "out.json").device_name == "V100-SXM2"


def test_list_selects_by_workload_and_device(capsys, two_device_db):
    """--device and --workload keep only their rows; a name the database does not hold
    is one error line; a pair with no measurement is exit 1."""
    db = two_device_db[0]
    capsys.readouterr()
    code, out, _ = _run(capsys, "history", "list", "--db", db, "--json")
    every = json.loads(out)
    assert code == 0 and {r["device"] for r in every} == {"Synthetic GPU", "Second GPU"}
    code, out, _ = _run(capsys, "history", "list", "--db", db, "--device", "Second GPU",
                        "--workload", "synth_kernel", "--json")
    assert code == 0 and json.loads(out) == [r for r in every if r["device"] == "Second GPU"]
    code, out, err = _run(capsys, "history", "list", "--db", db, "--device", "Third GPU")
    assert code == 2 and "Third GPU" in err and "Second GPU" in err and out == ""
    code, out, err = _run(capsys, "history", "list", "--db", db, "--workload", "gemm")
    assert code == 2 and "no workload matching --workload 'gemm'" in err

    from search.db import Measurement, TuningDB, Workload
    from search.measure.base import MeasureRecord
    with TuningDB(db) as t:  # a second workload, on the second device only
        t.add([Measurement(Workload("other", 1, ("x",)), "Second GPU", "t",
                           MeasureRecord.ok({"x": 1}, time_ms=1.0))])
    code, out, _ = _run(capsys, "history", "list", "--db", db, "--workload", "other",
                        "--device", "Synthetic GPU")
    assert code == 1 and "no measurement" in out


def test_layer_selects_a_layers_workloads_by_shape(capsys, tmp_path):
    """--layer takes a layer as tune does and selects the workloads of every stored layer
    of its shape (direct and Winograd), whatever name they were stored under."""
    from iobound.layer_spec import parse_layer_spec
    from search.db import CONV_TEMPLATE, Measurement, TuningDB, Workload
    from search.measure.base import MeasureRecord
    spec = "cin=8,hin=8,cout=8,kh=3,pad=1"
    layer, other = parse_layer_spec(spec), parse_layer_spec("cin=8,hin=8,cout=16,kh=3,pad=1")
    db = str(tmp_path / "t.db")
    direct, wino = ("x", "y", "z", "alpha", "tx", "ty", "tz"), ("e", "x", "y", "z", "tx", "ty", "tz")
    config = {direct: dict.fromkeys(direct, 2),  # kernel configs of both layers
              wino: {**dict.fromkeys(wino, 2), "tx": 1, "ty": 1}}  # tx, ty divide x/e = y/e = 1
    with TuningDB(db) as t:
        t.add([Measurement(Workload(CONV_TEMPLATE, lay.replace(name=name).to_dict(), params),
                           "V100-SXM2", "model", MeasureRecord.ok(config[params],
                                                                  time_ms=ms, estimate=True))
               for lay, name, params, ms in ((layer, "net.a", direct, 2.0),
                                             (layer, "", wino, 1.0),
                                             (other, "", direct, 0.5))])
    code, out, _ = _run(capsys, "history", "list", "--db", db, "--layer", spec, "--json")
    assert code == 0 and sorted(tuple(r["params"]) for r in json.loads(out)) == sorted([direct,
                                                                                      wino])
    code, out, _ = _run(capsys, "history", "best", "--db", db, "--layer", spec, "-k", "1",
                        "--json")
    assert code == 0 and json.loads(out)[0]["time_ms"] == 1.0  # not the other layer's 0.5
    code, _, err = _run(capsys, "history", "export", "--db", db, "--layer", spec,
                        str(tmp_path / "o.json"))
    assert code == 2 and "2 workloads matching --layer" in err
    code, _, _ = _run(capsys, "history", "export", "--db", db, "--layer", spec, "--workload",
                      "(e,", str(tmp_path / "o.json"))
    assert code == 0 and len(load_cache(tmp_path / "o.json")) == 1
    code, out, _ = _run(capsys, "history", "remove", "--db", db, "--layer", spec, "--json")
    assert code == 0 and json.loads(out)["removed"] == 2 and json.loads(out)["left"] == 1
    code, _, err = _run(capsys, "history", "list", "--db", db, "--layer", spec)
    assert code == 2 and "no workload matching --layer" in err
    code, _, err = _run(capsys, "history", "best", "--db", db, "--layer", "cin=0")
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_a_runs_log_and_exported_cache_import_as_what_it_stored(capsys, tmp_path):
    """One run kept three ways (--history, --log, --export-cache): importing the log and
    the cache adds nothing, and the database still holds one workload, the layer's."""
    db, log, cache = (str(tmp_path / name) for name in ("t.db", "run.jsonl", "run.json"))
    code, _, _ = _run(capsys, "tune", "--layer", "cin=3,hin=8,cout=4,kh=3,pad=1", "--measure",
                      "model", "--budget", "6", "--history", db, "--log", log, "--export-cache",
                      cache, "--out-dir", str(tmp_path), "--json")
    assert code == 0
    code, out, _ = _run(capsys, "history", "import", log, cache, "--db", db, "--json")
    files = json.loads(out)["files"]
    assert code == 0 and [f["added"] for f in files] == [0, 0]
    code, out, _ = _run(capsys, "history", "list", "--db", db, "--json")
    (row,) = json.loads(out)
    assert row["workload"].startswith("iobound.conv n1 3x8x8") and row["measurements"] == 6


def test_import_with_an_empty_db_path_is_one_line_and_removes_nothing(capsys, tmp_path,
                                                                      synth_cache_path, monkeypatch):
    """--db '' was a traceback (the clean-up of a failed import unlinked '.'), and the
    clean-up would go on to '-wal' and '-journal' of the working folder."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-wal").write_text("a user's file")
    code, out, err = _run(capsys, "history", "import", "--db", "", str(synth_cache_path))
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith("iobound history import: error: --db") and "the path is empty" in err
    assert (tmp_path / "-wal").read_text() == "a user's file"


@pytest.mark.parametrize("given", ["NVIDIA RTX A4000", "rtx a4000", "RTX-A4000"])
def test_import_device_naming_the_files_own_preset_agrees(capsys, tmp_path, given):
    """`--device` is stored under its preset's name, so a file naming that preset by any of
    its names agrees with it (it was refused as naming another device): the records keep
    the file's own name. A file naming another preset is still refused."""
    raw = {"device_name": "NVIDIA RTX A4000", "kernel_name": "k", "problem_size": [8],
           "tune_params_keys": ["x"], "tune_params": {"x": [1, 2]}, "objective": "time",
           "cache": {"1": {"x": 1, "time": 1.0}, "2": {"x": 2, "time": 2.0}}}
    src, db = tmp_path / "c.json", str(tmp_path / "t.db")
    src.write_text(json.dumps(raw))
    code, _, err = _run(capsys, "history", "import", str(src), "--device", given, "--db", db)
    assert code == 0, err
    with TuningDB(db, readonly=True) as t:
        assert list(t.devices()) == ["NVIDIA RTX A4000"] and t.count() == 2
    code, _, err = _run(capsys, "history", "import", str(src), "--device", "a6000", "--db", db)
    assert code == 2 and "disagrees" in err


def test_best_prints_an_aligned_table_of_the_json_rows(capsys, tmp_path, two_device_db):
    """``history best`` as text: a header and one row per pick, in the JSON's order, each
    column starting where its header does; the estimate legend only under estimates."""
    db, _, _ = two_device_db
    capsys.readouterr()  # the fixture's import
    code, out, _ = _run(capsys, "history", "best", "--db", db, "-k", "3", "--json")
    picks = json.loads(out)
    code, out, _ = _run(capsys, "history", "best", "--db", db, "-k", "3")
    header, *rows = out.splitlines()
    assert code == 0 and len(rows) == len(picks) == 3
    starts = [header.index(name) for name in ("device", "workload", "config")]
    for row, pick in zip(rows, picks):
        assert row[:starts[0]].strip() == f"{pick['time_ms']:.4g}"
        assert row[starts[0]:starts[1]].strip() == pick["device"]
        assert row[starts[1]:starts[2]].strip() == pick["workload"]
        assert row[starts[2]:] == ", ".join(f"{k}={v}" for k, v in pick["config"].items())
    assert "estimate" not in out  # the synthetic caches are measurements
    model_db = str(tmp_path / "m.db")
    assert main(["tune", "--layer", "cin=8,hin=8,cout=8,kh=3,pad=1", "--budget", "2",
                 "--measure", "model", "--history", model_db, "--no-verify"]) == 0
    capsys.readouterr()
    code, out, _ = _run(capsys, "history", "best", "--db", model_db, "-k", "1")
    header, row, legend = out.splitlines()
    assert code == 0 and row.split()[0].endswith("*")
    assert legend == ESTIMATE_LEGEND == "* analytic estimate, not a measurement"


def test_export_device_alone_picks_the_one_workload_it_holds(capsys, tmp_path, synth_cache_path):
    """Two workloads, each on its own device: ``export --device`` names the workload (it
    was "2 workloads in the database; choose one with --workload"); without --device the
    choice is still asked for."""
    db = str(tmp_path / "t.db")
    assert main(["history", "import", str(synth_cache_path), "--db", db]) == 0
    assert main(["tune", "--layer", "cin=8,hin=8,cout=8,kh=3,pad=1", "--budget", "2",
                 "--measure", "model", "--history", db, "--no-verify",
                 "--out-dir", str(tmp_path / "k")]) == 0
    capsys.readouterr()
    for device, workload in (("Synthetic GPU", "synth_kernel"), ("v100", "iobound.conv")):
        code, out, _ = _run(capsys, "history", "export", "--db", db, "--device", device,
                            str(tmp_path / f"{workload}.json"), "--json")
        assert code == 0 and json.loads(out)["workload"].startswith(workload), out
    code, _, err = _run(capsys, "history", "export", "--db", db, str(tmp_path / "out.json"))
    assert code == 2 and "2 workloads in the database; choose one with --workload" in err
