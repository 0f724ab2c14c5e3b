"""Smoke test of the search-quality benchmark on a tiny synthetic Kernel Tuner cache.

The cache is written by the test (no ../shared needed): 3 parameters, some
combinations absent (restricted), some recorded as failures. The Kernel Tuner
part runs only where kernel_tuner is installed (the ``bench`` extra).
"""

from __future__ import annotations

import json

import pytest

from benchmarks import search_quality as sq_cli
from benchmarks.sq.our_runner import OUR_DEFAULT_STRATEGIES, run_ours
from benchmarks.sq.recorded import load_recorded_space, plain_json_copy, score_run
from search.kt_cache import KtCache, load_cache
from search.kt_cache_write import write_cache

BUDGET = 8


def _entries() -> list[dict]:
    out = []
    for a in (16, 32, 48, 64, 80, 96):
        for b in (1, 2, 4, 8):
            for c in (0, 1):
                if a * b > 384:  # a restriction: never recorded
                    continue
                entry = {"a": a, "b": b, "c": c}
                if (a, b, c) in {(16, 1, 1), (96, 4, 0), (48, 8, 1)}:
                    entry["time"] = "RuntimeFailedConfig"
                else:
                    entry["time"] = 1.0 + abs(a - 64) / 32 + abs(b - 4) / 2 + 0.3 * c
                out.append(entry)
    return out


@pytest.fixture(scope="module")
def cache_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("sq") / "toy_space.json.gz"
    cache = KtCache(tune_params={"a": [16, 32, 48, 64, 80, 96], "b": [1, 2, 4, 8], "c": [0, 1]},
                    entries=_entries(), device_name="Toy GPU", kernel_name="toy_kernel",
                    problem_size=[64, 64])
    write_cache(path, cache)
    return path


@pytest.fixture(scope="module")
def space(cache_file):
    return load_recorded_space(cache_file)


def test_recorded_space_counts_failures_as_members(space):
    """The space holds every recorded entry, failed ones included, and the optimum is the best ok time."""
    assert space.size == len(_entries())
    assert space.size - space.n_ok == 3
    assert space.optimum == pytest.approx(1.0)


def test_score_run_truncates_to_budget_unique(space):
    """Repeats are free and the trace stops at the budget."""
    keys = list(space.times)
    r = score_run(space, "x", 3, 0, [keys[0], keys[0], keys[1], keys[2], keys[3]])
    assert r.trace == (keys[0], keys[1], keys[2])
    assert r.n_evals == 3


def test_score_run_rejects_unrecorded_config(space):
    """A visited configuration outside the recorded set is an error, not a silent score."""
    with pytest.raises(ValueError, match="does not record"):
        score_run(space, "x", 3, 0, ["96,8,0"])


@pytest.mark.parametrize("strategy", OUR_DEFAULT_STRATEGIES)
def test_ours_spends_exactly_the_budget(space, cache_file, strategy):
    """Each of our strategies visits exactly BUDGET distinct recorded configs; 0 < score <= 1."""
    r = run_ours(space, load_cache(cache_file), strategy, BUDGET, seed=1)
    assert r.n_evals == BUDGET == len(set(r.trace))
    assert all(k in space.times for k in r.trace)
    assert 0.0 < r.score <= 1.0


def test_ours_whole_space_finds_optimum(space, cache_file):
    """With the whole space as budget, random search measures everything and scores 1."""
    r = run_ours(space, load_cache(cache_file), "random", space.size, seed=0)
    assert r.n_evals == space.size
    assert r.score == 1.0 and r.evals_to_5pct is not None


def test_cli_writes_json_table_and_counts(cache_file, tmp_path, capsys):
    """The script's entry point writes every run and the summary for the requested grid."""
    rc = sq_cli.main(["--spaces", str(cache_file), "--budgets", "4", "6", "--seeds", "2",
                      "--strategies", "random", "--jobs", "1", "--out", str(tmp_path), "--no-plot"])
    assert rc == 0
    runs = json.loads((tmp_path / "search_quality_runs.json").read_text())["runs"]
    assert len(runs) == 2 * 2
    assert sorted(len(r["trace"]) for r in runs) == [4, 4, 6, 6]
    summary = json.loads((tmp_path / "search_quality_summary.json").read_text())["summary"]
    assert {(s["strategy"], s["budget"], s["n_runs"]) for s in summary} == {("random", 4, 2),
                                                                          ("random", 6, 2)}
    assert "toy_space" in capsys.readouterr().out


# --- Kernel Tuner (bench extra) ------------------------------------------------------------

@pytest.fixture(scope="module")
def kt_plain(space, cache_file, tmp_path_factory):
    pytest.importorskip("kernel_tuner", reason="Kernel Tuner is a benchmark-only dependency "
                                               "(the bench extra)")
    return plain_json_copy(load_cache(cache_file), tmp_path_factory.mktemp("kt"), space.name)


def test_kt_space_is_the_recorded_set(space, kt_plain):
    """Kernel Tuner searches exactly the recorded configurations, failed ones included."""
    from benchmarks.sq.kt_runner import kt_space_size

    assert kt_space_size(space, kt_plain) == space.size


@pytest.mark.parametrize("strategy", ["random_sample", "genetic_algorithm", "pso"])
def test_kt_run_respects_budget_and_seed(space, kt_plain, strategy):
    """A Kernel Tuner run stays within the budget and is reproducible for a seed."""
    from benchmarks.sq.kt_runner import run_kt

    a = run_kt(space, kt_plain, strategy, BUDGET, seed=3)
    b = run_kt(space, kt_plain, strategy, BUDGET, seed=3)
    assert 0 < a.n_evals <= BUDGET
    assert a.trace == b.trace
    assert 0.0 < a.score <= 1.0


def test_kt_random_sample_whole_space_finds_optimum(space, kt_plain):
    """Kernel Tuner's random sampling over the whole space measures everything and scores 1."""
    from benchmarks.sq.kt_runner import run_kt

    r = run_kt(space, kt_plain, "random_sample", space.size, seed=0)
    assert r.n_evals == space.size
    assert r.score == 1.0


def test_cli_reuses_recorded_kt_runs(cache_file, kt_plain, tmp_path):
    """--reuse-kt takes Kernel Tuner runs from an earlier file and refuses another failure mode."""
    first, second = tmp_path / "a", tmp_path / "b"
    common = ["--spaces", str(cache_file), "--budgets", "5", "--seeds", "2", "--jobs", "1",
              "--no-plot"]
    assert sq_cli.main(common + ["--strategies", "kt:random_sample", "--out", str(first)]) == 0
    runs_a = first / "search_quality_runs.json"
    assert sq_cli.main(common + ["--strategies", "random", "kt:random_sample", "--out",
                                 str(second), "--reuse-kt", str(runs_a)]) == 0
    data = json.loads((second / "search_quality_runs.json").read_text())
    assert data["meta"]["reused_kt_runs"] == 2
    summary = json.loads((second / "search_quality_summary.json").read_text())["summary"]
    assert [s["strategy"] for s in summary] == ["random", "kt:random_sample"]  # as asked
    kt_scores = lambda runs: sorted(r["score"] for r in runs if r["strategy"].startswith("kt:"))  # noqa: E731
    assert kt_scores(data["runs"]) == kt_scores(json.loads(runs_a.read_text())["runs"])
    with pytest.raises(SystemExit):
        sq_cli.main(common + ["--strategies", "kt:random_sample", "--out", str(second),
                              "--reuse-kt", str(runs_a), "--drop-failed"])



def test_cli_reuses_summarised_kt_cells(cache_file, kt_plain, tmp_path):
    """--reuse-kt with a summary JSON takes whole Kernel Tuner cells made with the same seeds."""
    first, second = tmp_path / "a", tmp_path / "b"
    common = ["--spaces", str(cache_file), "--budgets", "5", "--jobs", "1", "--no-plot"]
    assert sq_cli.main(common + ["--seeds", "2", "--strategies", "kt:random_sample",
                                 "--out", str(first)]) == 0
    old = json.loads((first / "search_quality_summary.json").read_text())["summary"]
    assert sq_cli.main(common + ["--seeds", "2", "--strategies", "random", "kt:random_sample",
                                 "--out", str(second), "--reuse-kt",
                                 str(first / "search_quality_summary.json")]) == 0
    data = json.loads((second / "search_quality_runs.json").read_text())
    assert data["meta"]["reused_kt_cells"] == 1
    assert {r["strategy"] for r in data["runs"]} == {"random"}  # Kernel Tuner did not run
    new = json.loads((second / "search_quality_summary.json").read_text())["summary"]
    assert [s["strategy"] for s in new] == ["random", "kt:random_sample"]
    assert new[1]["mean_score"] == old[0]["mean_score"]
    assert new[0]["mean_stall"] is not None  # our runs report their stall length


def test_cli_reruns_kt_when_the_summary_has_other_seeds(cache_file, kt_plain, tmp_path):
    """A summary made with other seeds is not reused: Kernel Tuner runs again."""
    first, second = tmp_path / "a", tmp_path / "b"
    common = ["--spaces", str(cache_file), "--budgets", "5", "--jobs", "1", "--no-plot",
              "--strategies", "kt:random_sample"]
    assert sq_cli.main(common + ["--seeds", "1", "--out", str(first)]) == 0
    assert sq_cli.main(common + ["--seeds", "2", "--out", str(second), "--reuse-kt",
                                 str(first / "search_quality_summary.json")]) == 0
    data = json.loads((second / "search_quality_runs.json").read_text())
    assert data["meta"]["reused_kt_cells"] == 0 and len(data["runs"]) == 2


def test_screen_makes_a_run_per_seed_and_budget(cache_file, capsys):
    """The screening script makes one run per seed and budget (a strategy may plan for its
    budget), each as long as its budget."""
    from benchmarks import explorer_screen

    runs = explorer_screen.screen(cache_file, "random", {}, [4, 8], [0, 1])
    assert [(r.seed, r.budget, r.n_evals) for r in runs] == [(0, 4, 4), (0, 8, 8), (1, 4, 4), (1, 8, 8)]
    assert explorer_screen.main(["--spaces", str(cache_file), "--budgets", "4", "8", "--seeds", "2",
                                 "--strategy", "random"]) == 0
    assert "mean over the spaces" in capsys.readouterr().out


def test_stall_trace_records_model_rounds(cache_file):
    """The stall tracer records every round of a run, with the model's view once it exists."""
    from benchmarks.explorer_stalls import trace_run

    r = trace_run(cache_file, seed=0, budget=16, options={"stall": None})
    assert [x["evals"] for x in r["rounds"]] == [0, 4, 8, 12]
    assert any(x.get("opt_rank") is not None or x["best"] == 1.0 for x in r["rounds"][2:])
    assert 0.0 < r["score"] <= 1.0 and 0 <= r["stall"] < 16
    assert r["end"]["top1_unmeasured"] >= 0


def test_ranking_scores_variants_on_traced_runs(cache_file, capsys):
    """The ranking measure fits each variant at each checkpoint of one traced run per seed."""
    import numpy as np

    from benchmarks import explorer_ranking

    X, cost, runs = explorer_ranking.traced(cache_file, [0, 1], 12, {})
    assert len(runs) == 2 and all(len(set(r)) == 12 for r in runs)
    got = explorer_ranking.score_variant(X, cost, runs, [8, 12], {"n_estimators": 10})
    assert set(got) == {8, 12}
    for rank, hit4, hit16 in got.values():
        assert (np.isnan(rank) or 0 <= rank < len(cost)) and 0 <= hit4 <= hit16 <= 1
    assert explorer_ranking.main(["--spaces", str(cache_file), "--seeds", "1", "--checkpoints", "8",
                                  "--variants", '{"mean": {}, "topk": {"pair_method": "topk"}}']) == 0
    assert "| topk |" in capsys.readouterr().out
