"""Statistics the benchmarks print, against independent numpy recomputations:

- the goals' table of cells below their base (benchmarks/tq/goals.py) prints the paired mean
  difference and its standard error rounded once, as the correctly rounded 3-decimal value of
  the numpy statistic (rounding to 4 decimals first moves the third decimal: -0.13149 is
  -0.131, not -0.132), and so does each goal's mean;
- search quality (benchmarks/sq/report.py): one run has no standard error (the sample
  standard deviation with ddof=1 is undefined), so the table must not print one as
  "±0.000", nor the explorer-vs-best-Kernel-Tuner gap claim a zero standard error.
"""

from __future__ import annotations

import numpy as np

from benchmarks.sq.recorded import RunResult
from benchmarks.sq.report import best_kt_gaps, markdown_tables, summarise
from benchmarks.tq.goals import check_goals, goals_markdown
from benchmarks.tq.runner import TargetRun


def test_paired_difference_and_se_are_printed_rounded_once():
    without, with_ = [0.6, 0.6], [0.5, 0.43702]
    runs = ([TargetRun("A", "explorer", s, {10: v}) for s, v in enumerate(without)]
            + [TargetRun("A", "explorer+history", s, {10: v}) for s, v in enumerate(with_)])
    d = np.subtract(with_, without)
    mean, se = d.mean(), d.std(ddof=1) / np.sqrt(len(d))  # -0.13149, 0.03149
    line = goals_markdown(check_goals(runs)).splitlines()[-1]
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[3] == f"{mean:+.3f}" == "-0.131"
    assert cells[4] == f"{se:.3f}" == "0.031"


def test_paired_difference_near_a_half_is_not_rounded_twice():
    without, with_ = [0.51249, 0.51250], [0.5, 0.5]
    runs = ([TargetRun("A", "explorer", s, {10: v}) for s, v in enumerate(without)]
            + [TargetRun("A", "explorer+history", s, {10: v}) for s, v in enumerate(with_)])
    mean = np.subtract(with_, without).mean()  # -0.012495
    line = goals_markdown(check_goals(runs)).splitlines()[-1]
    assert line.split("|")[4].strip() == f"{mean:+.3f}" == "-0.012"


def _run(strategy: str, seed: int, score: float) -> RunResult:
    return RunResult("s", strategy, 25, seed, 25, 1.0 / score, score, score >= 1 / 1.05, None)


def test_goal_mean_is_printed_rounded_once_as_the_table_mean():
    """A mean over targets of 0.96549 prints 0.965, the table's mean row, not 0.966 (from a
    stored 0.9655): the leave-network-out run printed both for the same number."""
    runs = [TargetRun("A", "explorer+history", 0, {25: 0.96549}), TargetRun("A", "explorer", 0, {25: 0.5})]
    text = goals_markdown(check_goals(runs))
    assert "explorer+history at 25: mean 0.965, goal 0.95; met" in text


def test_search_quality_one_run_prints_no_standard_error():
    rows = summarise([_run("explorer", 0, 0.8), _run("kt:pso", 0, 0.7)])
    table = markdown_tables(rows)
    explorer = next(line for line in table.splitlines() if line.startswith("| explorer |"))
    assert "±" not in explorer, explorer  # undefined for n = 1, not 0.000
    (gap,) = best_kt_gaps(rows)
    assert abs(gap["gap"] - 0.1) < 1e-12
    assert gap["gap_se"] is None or np.isnan(gap["gap_se"])


def test_search_quality_se_with_two_runs_is_the_sample_formula():
    rows = summarise([_run("explorer", 0, 0.8), _run("explorer", 1, 0.6)])
    (row,) = rows
    want = np.std([0.8, 0.6], ddof=1) / np.sqrt(2)
    assert abs(row.se_score - want) < 1e-12
    assert "0.700 ±0.100" in markdown_tables(rows)


def test_explorer_screen_does_not_merge_two_spaces_of_one_name(tmp_path, capsys):
    """Two files of one name (a/sp.json, b/sp.json) are two spaces: merged into one cell their
    runs would be reported as 2 x seeds runs of one space (mean, SE and '% within' of a
    mixture). search_quality.py refuses such a pair; the screen must too (or keep them apart)."""
    from benchmarks.explorer_screen import main
    from search.kt_cache import KtCache
    from search.kt_cache_write import write_cache

    for d, off in (("a", 0.0), ("b", 5.0)):
        (tmp_path / d).mkdir()
        write_cache(tmp_path / d / "sp.json", KtCache(
            tune_params={"x": [1, 2, 3, 4, 5, 6]}, device_name="A100", kernel_name="k",
            entries=[{"x": x, "time": 1.0 + x + off * (x % 2)} for x in range(1, 7)]))
    argv = ["--spaces", str(tmp_path / "a" / "sp.json"), str(tmp_path / "b" / "sp.json"),
            "--budgets", "2", "--seeds", "2", "--strategy", "random"]
    try:
        main(argv)
    except SystemExit as exc:
        assert "sp" in str(exc)
        return
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| random |")]
    # kept apart: a row per space, each of its own 2 runs (the last column: reached/runs)
    assert len(rows) == 2 and all(r.rstrip(" |").endswith("/2)") for r in rows), out


def test_explorer_ranking_rank_ignores_a_space_whose_runs_all_measured_the_optimum(
        monkeypatch, capsys):
    """The rank column averages each space's median rank of the unmeasured optimum; a space
    where every run has measured it has no rank (NaN), and must not turn the other spaces'
    ranks into 'nan' (numpy's nanmean: 12 here)."""
    from pathlib import Path

    import benchmarks.explorer_ranking as er

    per = {"a": {25: (float("nan"), 1.0, 1.0)}, "b": {25: (12.0, 0.5, 0.25)}}
    monkeypatch.setattr(er, "traced", lambda path, seeds, budget, options: (path.name, None, None))
    monkeypatch.setattr(er, "score_variant", lambda X, c, runs, cps, opts: per[X])
    er.main(["--spaces", str(Path("a")), str(Path("b")), "--seeds", "1", "--checkpoints", "25",
             "--variants", '{"v": {}}'])
    row = capsys.readouterr().out.splitlines()[-1]
    assert row == "| v | 12 / 0.75 / 0.62 |", row
