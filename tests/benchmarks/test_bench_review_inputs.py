"""Benchmark scripts refuse bad input before any work or write: one line, exit 2
(search/cli/script_entry.run_script), and fail instead of passing on nothing.

Regressions of a review of benchmarks/: each case used to be a traceback, a run made
twice, an output overwritten or an empty check that exited 0. The expensive step of
each script is replaced by a function that fails the test if it is reached.
"""

from __future__ import annotations

import io
import json

import pytest

from search.cli.script_entry import run_script


class _Stop(Exception):
    pass


def _never(*_a, **_k):
    raise AssertionError("reached the expensive part before the arguments were checked")


def bad_input(capsys, main, argv) -> str:
    """``main(argv)`` through run_script: exit 2, one stderr line; that line."""
    code = run_script(main, argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


# 1. bounds_speed: --repeats 0 was statistics.StatisticsError after the first pass;
#    --json-out into a missing folder a traceback at the end
@pytest.mark.parametrize("argv, needle", [
    (["--repeats", "0"], "--repeats"),
    (["--json-out", "{tmp}/no/such/folder/b.json"], "does not exist"),
    (["--json-out", "{tmp}"], "is a folder"),
])
def test_bounds_speed_checks_repeats_and_json_out_first(capsys, monkeypatch, tmp_path, argv, needle):
    from benchmarks import bounds_speed
    monkeypatch.setattr(bounds_speed, "_all_reports", _never)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert needle in bad_input(capsys, bounds_speed.main, argv)


# 2. explorer_ranking: --variants was never checked (a traceback after the traced runs)
@pytest.mark.parametrize("variants", ['[1, 2]', '{}', '{"a": 3}', '{"a": {"no_such_field": 1}}',
                                      '{"a": {"max_depth": 0}}'])
def test_explorer_ranking_checks_variants_before_tracing(capsys, monkeypatch, cache_files, variants):
    from benchmarks import explorer_ranking
    monkeypatch.setattr(explorer_ranking, "traced", _never)
    assert "--variants" in bad_input(capsys, explorer_ranking.main, [
        "--spaces", str(cache_files[0]), "--seeds", "1", "--checkpoints", "2",
        "--variants", variants])


# 3. explorer_stalls: a strategy without a walk optimizer was an AttributeError
@pytest.mark.parametrize("strategy", ["random", "ga", "gga", "grid", "zero_shot", "nosuch"])
def test_explorer_stalls_refuses_strategies_without_optimizer(capsys, monkeypatch, tmp_path,
                                                              cache_files, strategy):
    from benchmarks import explorer_stalls
    monkeypatch.setattr(explorer_stalls, "trace_run", _never)
    err = bad_input(capsys, explorer_stalls.main, [
        "--spaces", str(cache_files[0]), "--seeds", "1", "--budget", "8",
        "--strategy", strategy, "--out", str(tmp_path / "out")])
    assert "explorer, sa" in err
    assert not (tmp_path / "out").exists()


def test_explorer_stalls_traces_the_model_based_strategies():
    from benchmarks import explorer_stalls
    assert explorer_stalls.traceable_strategies() == ["explorer", "sa"]


# 4. search_quality: unknown names ran every other run, then wrote the outputs and exited 1
@pytest.mark.parametrize("names", [["random", "foo"], ["random", "kt:foo"]])
def test_search_quality_refuses_unknown_strategies_before_any_run(capsys, monkeypatch, tmp_path,
                                                                  cache_files, names):
    from benchmarks import search_quality as sq
    from benchmarks.sq.kt_runner import kt_available
    if any(n.startswith("kt:") for n in names) and not kt_available():
        pytest.skip("kernel_tuner is not installed")
    monkeypatch.setattr(sq, "code_version", lambda: {})
    monkeypatch.setattr(sq, "run_all", _never)
    out = tmp_path / "out"
    err = bad_input(capsys, sq.main, ["--spaces", str(cache_files[0]), "--strategies", *names,
                                      "--budgets", "1", "--seeds", "1", "--jobs", "1",
                                      "--no-plot", "--out", str(out)])
    assert names[-1] in err
    assert not out.exists()


# 5. explorer_screen: --budgets 3 3 made each run twice, counted as seeds
def test_explorer_screen_runs_each_budget_once(monkeypatch, capsys, cache_files):
    from benchmarks import explorer_screen
    assert explorer_screen.parse_args(["--budgets", "3", "3", "1"]).budgets == [1, 3]
    asked = []

    def screen(path, strategy, options, budgets, seeds):
        asked.append(list(budgets))
        raise _Stop
    monkeypatch.setattr(explorer_screen, "screen", screen)
    with pytest.raises(_Stop):
        explorer_screen.main(["--spaces", str(cache_files[0]), "--budgets", "3", "3",
                              "--seeds", "2"])
    assert asked == [[3]]


# 6. synthetic_devices: same file stems overwrote each other; a missing input was a traceback
def test_synthetic_devices_refuses_clashing_stems_and_missing_inputs(capsys, tmp_path, cache_files):
    from benchmarks import synthetic_devices as sd
    (tmp_path / "a").mkdir()
    twin = tmp_path / "a" / cache_files[0].name
    twin.write_bytes(cache_files[0].read_bytes())
    out = tmp_path / "out"
    err = bad_input(capsys, sd.main, [str(cache_files[0]), str(twin), "--out", str(out)])
    assert "rename one" in err
    err = bad_input(capsys, sd.main, [str(cache_files[0]), str(tmp_path / "none.json"),
                                      "--out", str(out)])
    assert "none.json" in err
    assert not out.exists()


# 7. kernel_traffic: --budgets 0 printed an empty table, exit 0 (the check passed on nothing)
LAYER = "cin=4,hin=8,cout=8,kh=3,pad=1"


def test_kernel_traffic_refuses_budgets_below_one(capsys, monkeypatch, tmp_path):
    from benchmarks import kernel_traffic as kt
    monkeypatch.setattr(kt, "row", _never)
    assert "--budgets" in bad_input(capsys, kt.main, ["--budgets", "0", "--layers", LAYER,
                                                      "--out", str(tmp_path / "k.json")])


def test_kernel_traffic_fails_without_rows_or_with_a_cell_without_config(capsys, monkeypatch,
                                                                        tmp_path):
    from benchmarks import kernel_traffic as kt
    out = tmp_path / "k.json"
    monkeypatch.setattr(kt, "row", lambda layer, algorithm, budget, device: None)
    assert kt.main(["--budgets", "8", "--layers", LAYER, "--out", str(out)]) == 1
    assert "FAILED" in capsys.readouterr().err and not out.exists()

    good = {"layer": "L", "algorithm": "direct", "budget_words": 512, "config": {"e": 2},
            "onchip_words": 1, "counted_traffic": 2, "formula_traffic": 2, "traffic_matches": True,
            "numerics_ok": True, "flops_matches": True, "lower_bound": 1.0, "bound_method": "m", "ratio": 2.0,
            "seconds": 0.0}
    monkeypatch.setattr(kt, "row", lambda layer, algorithm, budget, device:
                        dict(good, algorithm=algorithm) if budget == 512 else None)
    assert kt.main(["--budgets", "8", "512", "--layers", LAYER, "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "FAILED: no kernel configuration within the budget for 2 cells" in err
    assert len(json.loads(out.read_text())["rows"]) == 2


# 8. history_network_scale / history_scale / selection_quality: bad input found only after
#    the database or the caches were filled, as a traceback
@pytest.mark.parametrize("argv, needle", [
    (["--network", "nonet"], "--network"),
    (["--history-network", "nonet"], "--history-network"),
    (["--device", "nosuch"], "--device"),
    (["--history-devices", "v100", "nosuch"], "--history-devices"),
    (["--budget", "0"], "--budget"),
    (["--per-layer", "0"], "--per-layer"),
])
def test_history_network_scale_checks_before_filling(capsys, monkeypatch, tmp_path, argv, needle):
    from benchmarks import history_network_scale as hns
    monkeypatch.setattr(hns, "fill", _never)
    assert needle in bad_input(capsys, hns.main, [*argv, "--out", str(tmp_path / "h.json")])


def test_history_scale_checks_budget_before_writing_caches(capsys, monkeypatch, tmp_path):
    from benchmarks import history_scale as hs
    monkeypatch.setattr(hs, "write_caches", _never)
    assert "--budget" in bad_input(capsys, hs.main, ["--devices", "2", "--size", "tiny",
                                                     "--budget", "0",
                                                     "--out", str(tmp_path / "h.json")])


def test_a_failed_iobound_command_is_one_line_with_its_exit_code(capsys):
    from benchmarks import history_network_scale as hns
    from benchmarks.history_scale import IoboundFailed, run_iobound
    with pytest.raises(IoboundFailed):
        hns._iobound(["tune", "--budget", "0"])
    err = bad_input(capsys, lambda argv: run_iobound(argv, io.StringIO()),
                    ["tune", "--budget", "0", "--json"])
    assert err.startswith("error: iobound tune exited 2: ") and "--budget" in err


def test_selection_quality_checks_max_leaves_first(capsys, monkeypatch, tmp_path):
    from benchmarks import selection_quality as sq
    monkeypatch.setattr(sq, "preset_layers", _never)
    assert "--max-leaves" in bad_input(capsys, sq.main, [
        "--seeds", "1", "--max-leaves", "0", "--labels", str(tmp_path / "l.jsonl"),
        "--out", str(tmp_path / "s.json")])


def test_kernel_traffic_fails_when_a_kernel_s_flops_are_not_the_model_s(capsys, monkeypatch,
                                                                         tmp_path):
    from benchmarks import kernel_traffic as kt
    row = {"layer": "L", "algorithm": "direct", "budget_words": 512, "config": {"x": 1},
           "onchip_words": 1, "counted_traffic": 2, "formula_traffic": 2, "traffic_matches": True,
           "numerics_ok": True, "lower_bound": 1.0, "bound_method": "m", "ratio": 2.0,
           "seconds": 0.0}
    out = tmp_path / "k.json"
    for matches, code in ((True, 0), (False, 1)):
        monkeypatch.setattr(kt, "row", lambda layer, algorithm, budget, device:
                            dict(row, algorithm=algorithm, flops_matches=matches))
        assert kt.main(["--budgets", "512", "--layers", "cin=2,hin=6,cout=2,kh=1",
                        "--out", str(out)]) == code
        assert ("FAILED" in capsys.readouterr().err) == (not matches)
