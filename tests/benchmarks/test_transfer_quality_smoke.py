"""Smoke test of the transfer-quality benchmark on tiny synthetic caches of three "devices"
(``cache_files``, tests/benchmarks/conftest.py)."""

from __future__ import annotations

import json

import pytest

from benchmarks import transfer_quality as tq_cli
from benchmarks.tq.runner import load_targets, run_method

@pytest.fixture(scope="module")
def targets(cache_files):
    return load_targets([str(p) for p in cache_files], ["x", "y", "z"])


def test_history_never_holds_the_targets_own_records(targets, cache_devices):
    """Leave one device out: each target's history is exactly the other two devices."""
    for t in targets:
        assert t.history and {m.device for m in t.history} == set(cache_devices) - {t.device}
        assert set(t.prior.devices) == set(cache_devices) - {t.device}


def test_caches_naming_no_device_leave_their_own_records_out(cache_files, tmp_path):
    """A cache without a device name is stored under its file name (the importer's rule);
    as a target, those records (not the empty name's) leave its history."""
    from dataclasses import replace

    from search.kt_cache import load_cache
    from search.kt_cache_write import write_cache
    paths = [write_cache(tmp_path / p.name, replace(load_cache(p), device_name=""))
             for p in cache_files]
    got = load_targets([str(p) for p in paths], ["x", "y", "z"])
    stems = {"toy_0", "toy_1", "toy_2"}
    for t in got:
        assert t.device in stems
        assert {m.device for m in t.history} == stems - {t.device}


@pytest.mark.parametrize("method", ["explorer", "explorer+history", "gga", "zero-shot"])
def test_every_method_scores_in_0_1(targets, method):
    """Each method gives a score in (0, 1] per budget, never better than the optimum."""
    r = run_method(targets[0], method, seed=1, budgets=[4, 8])
    assert set(r.scores) == {4, 8}
    assert all(0.0 < v <= 1.0 for v in r.scores.values())
    assert r.scores[4] <= r.scores[8] or method == "zero-shot"


def test_agreeing_history_finds_the_optimum_at_once(targets):
    """Devices X and Y share their optimum: with history the first round reaches it."""
    assert run_method(targets[1], "explorer+history", seed=0, budgets=[4]).scores[4] == 1.0


def test_cli_writes_json_table_and_plot(cache_files, tmp_path, capsys):
    """The entry point writes runs, summary, table and plot for the requested grid."""
    rc = tq_cli.main(["--spaces", *map(str, cache_files), "--budgets", "4", "6", "--seeds", "2",
                      "--methods", "explorer", "explorer+history:decay=0.5", "--out",
                      str(tmp_path), "--tag", "t"])
    assert rc == 0
    runs = json.loads((tmp_path / "t_runs.json").read_text())["runs"]
    assert len(runs) == 3 * 2 * 2
    summary = json.loads((tmp_path / "t_summary.json").read_text())
    rows = summary["summary"]
    assert {r["target"] for r in rows} == {"toy_0", "toy_1", "toy_2", "mean"}
    seen = summary["meta"]["targets"]  # what each target's history held: never its device
    assert seen["toy_0"]["history_devices"] == ["GPU Y", "GPU Z"]
    assert all(t["device"] not in t["history_devices"] and t["history_records"] > 0
               for t in seen.values())
    assert (tmp_path / "t.png").stat().st_size > 0
    assert "explorer+history:decay=0.5" in capsys.readouterr().out


def test_cli_reuses_earlier_runs(cache_files, tmp_path):
    """--reuse takes matching runs from an earlier file and runs only the rest."""
    common = ["--spaces", *map(str, cache_files), "--budgets", "4", "--seeds", "1", "--no-plot"]
    assert tq_cli.main(common + ["--methods", "explorer", "--out", str(tmp_path / "a")]) == 0
    first = tmp_path / "a" / "transfer_quality_runs.json"
    assert tq_cli.main(common + ["--methods", "explorer", "gga", "--out", str(tmp_path / "b"),
                                 "--reuse", str(first)]) == 0
    data = json.loads((tmp_path / "b" / "transfer_quality_runs.json").read_text())
    assert data["meta"]["reused_runs"] == 3 and len(data["runs"]) == 6
    old = json.loads(first.read_text())["runs"]
    assert [r for r in data["runs"] if r["method"] == "explorer"] == old


def test_reuse_takes_only_runs_of_the_same_file_and_history(cache_files, tmp_path, capsys):
    """A run is reused only where its target's file and history are this run's (digests in
    the runs file): a target given another history (a file fewer) or another file of the
    same name runs again, with a notice; an older runs file without digests reuses none."""
    common = ["--budgets", "4", "--seeds", "1", "--no-plot", "--methods", "explorer+history"]
    x, y, z = map(str, cache_files)
    assert tq_cli.main(["--spaces", x, z, *common, "--out", str(tmp_path / "xz")]) == 0
    first = tmp_path / "xz" / "transfer_quality_runs.json"
    capsys.readouterr()
    assert tq_cli.main(["--spaces", x, y, z, *common, "--out", str(tmp_path / "xyz"),
                        "--reuse", str(first)]) == 0
    assert json.loads((tmp_path / "xyz" / "transfer_quality_runs.json").read_text())[
        "meta"]["reused_runs"] == 0
    assert "2 run(s) not reused" in capsys.readouterr().err
    again = tmp_path / "xyz" / "transfer_quality_runs.json"
    assert tq_cli.main(["--spaces", x, y, z, *common, "--out", str(tmp_path / "b"),
                        "--reuse", str(again)]) == 0
    assert json.loads((tmp_path / "b" / "transfer_quality_runs.json").read_text())[
        "meta"]["reused_runs"] == 3
    old = json.loads(again.read_text())
    for t in old["meta"]["targets"].values():
        del t["file_sha256"]
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert tq_cli.main(["--spaces", x, y, z, *common, "--out", str(tmp_path / "c"),
                        "--reuse", str(tmp_path / "old.json")]) == 0
    assert json.loads((tmp_path / "c" / "transfer_quality_runs.json").read_text())[
        "meta"]["reused_runs"] == 0


def test_cli_rejects_an_unknown_method(cache_files, tmp_path):
    """A bad method is a one-line error naming it."""
    with pytest.raises(SystemExit, match="unknown method 'bogus'"):
        tq_cli.main(["--spaces", *map(str, cache_files), "--methods", "bogus", "--out",
                     str(tmp_path)])


def test_cli_names_a_file_it_cannot_score_before_any_run(cache_files, tmp_path):
    """A file that is not a cache, or a cache with no timed configuration (no optimum to
    score against), is a one-line error naming it, before any worker starts."""
    from search.kt_cache import KtCache
    from search.kt_cache_write import write_cache
    bad = tmp_path / "bad.json"
    bad.write_text('{"x": 1}')
    failed = write_cache(tmp_path / "failed.json", KtCache(
        tune_params={"a": [16, 32], "b": [1], "c": [0]}, device_name="GPU W",
        entries=[{"a": a, "b": 1, "c": 0, "time": "RuntimeFailedConfig"} for a in (16, 32)]))
    for path, said in ((bad, "lacks 'tune_params'"), (failed, "no successful configuration")):
        with pytest.raises(SystemExit, match=said) as got:
            tq_cli.main(["--spaces", str(cache_files[0]), str(path), "--out", str(tmp_path)])
        assert str(path) in str(got.value) and "\n" not in str(got.value)


def test_files_of_one_name_in_two_folders_are_both_targets(cache_files, tmp_path):
    """Kernel folders hold files named by GPU (``convolution/A100.json.gz``,
    ``dedispersion/A100.json.gz``): both are targets, named with their folder; the same
    file given twice is an error."""
    import shutil
    other = tmp_path / "other"
    other.mkdir()
    copy = shutil.copy(cache_files[0], other / cache_files[0].name)
    names = tq_cli.space_names([cache_files[0], copy, cache_files[1]])
    assert names[2] == "toy_1" and names[0] != names[1]
    assert names[1] == "other/toy_0"
    with pytest.raises(SystemExit, match="names a file twice"):
        tq_cli.space_names([cache_files[0], cache_files[0]])


def test_the_targets_measurements_under_another_name_stay_out_of_its_history(cache_files,
                                                                             tmp_path):
    """A copy of a target's file that names no device (as a T4 results file beside its
    cache) holds the target's own measurements: neither is in the other's history, while
    the other devices keep both; files that name their devices (X and Y agree to the last
    bit) are taken at their word."""
    from dataclasses import replace

    from search.kt_cache import load_cache
    from search.kt_cache_write import write_cache
    copy = write_cache(tmp_path / "x_results.json",
                       replace(load_cache(cache_files[0]), device_name=""))
    got = load_targets([str(p) for p in [*cache_files, copy]], ["x", "y", "z", "x2"])
    devices = {t.name: {m.device for m in t.history} for t in got}
    assert devices["x"] == {"GPU Y", "GPU Z"} and devices["x2"] == {"GPU Y", "GPU Z"}
    assert devices["y"] == {"GPU X", "x_results", "GPU Z"}


def test_the_notice_of_a_twin_is_printed_once_with_workers(cache_files, tmp_path, capfd):
    """With --jobs 2 the parent prints each notice and the workers load quietly."""
    from dataclasses import replace

    from search.kt_cache import load_cache
    from search.kt_cache_write import write_cache
    copy = write_cache(tmp_path / "x_results.json",
                       replace(load_cache(cache_files[0]), device_name=""))
    spaces = [*map(str, cache_files), str(copy)]
    assert tq_cli.main(["--spaces", *spaces, "--budgets", "4", "--seeds", "2", "--jobs", "2",
                        "--methods", "explorer", "--no-plot", "--out", str(tmp_path)]) == 0
    err = capfd.readouterr().err
    assert err.count("note: toy_0: x_results hold(s)") == 1
    assert err.count("note: x_results: GPU X hold(s)") == 1


def test_the_numbers_do_not_depend_on_the_workers(cache_files, tmp_path):
    """Every run is seeded: one process and two give the same runs (what --jobs' help says)."""
    common = ["--spaces", *map(str, cache_files), "--budgets", "4", "8", "--seeds", "2",
              "--methods", "explorer+history", "zero-shot", "--no-plot"]
    runs = []
    for jobs in ("1", "2"):
        out = tmp_path / jobs
        assert tq_cli.main(common + ["--jobs", jobs, "--out", str(out)]) == 0
        runs.append(json.loads((out / "transfer_quality_runs.json").read_text())["runs"])
    assert runs[0] == runs[1]
