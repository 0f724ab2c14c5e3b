"""The issue's goals checked on transfer runs (benchmarks/tq/goals.py) and the benchmark's
--summarise, against numpy recomputations of the same statistics."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import transfer_quality as tq_cli
from benchmarks.tq.goals import MEAN_GOALS, check_goals, goals_markdown
from benchmarks.tq.report import summarise
from benchmarks.tq.runner import TargetRun

score = st.floats(0.05, 1.0)


@st.composite
def run_sets(draw):
    """Runs of explorer and explorer+history on 1-3 targets, 2-6 seeds, budgets 10/25/50."""
    targets = [f"t{k}" for k in range(draw(st.integers(1, 3)))]
    seeds = range(draw(st.integers(2, 6)))
    runs = [TargetRun(t, m, s, {b: draw(score) for b in (10, 25, 50)})
            for t in targets for m in ("explorer", "explorer+history") for s in seeds]
    return runs, targets, list(seeds)


@settings(max_examples=60, deadline=None)
@given(run_sets())
def test_goals_match_numpy(data):
    """Every cell below is one whose paired mean difference is negative (numpy), flagged
    significant exactly when it is beyond two paired standard errors; the mean goals hold
    exactly when numpy's mean of per-target means reaches them."""
    runs, targets, seeds = data
    got = check_goals(runs)
    s = {(r.target, r.method, r.seed): r.scores for r in runs}
    want = []
    for t in targets:
        for b in (10, 25, 50):
            d = np.array([s[(t, "explorer+history", k)][b] - s[(t, "explorer", k)][b]
                          for k in seeds])
            if d.mean() < 0:
                se = d.std(ddof=1) / np.sqrt(len(d))
                want.append((t, b, bool(d.mean() < -2 * se)))
    assert [(c["target"], c["budget"], c["significant"]) for c in got["below"]] == want
    for c in got["checks"]:
        if c["budget"] in MEAN_GOALS:
            mean = np.mean([np.mean([s[(t, "explorer+history", k)][c["budget"]] for k in seeds])
                            for t in targets])
            assert c["met"] == (mean >= MEAN_GOALS[c["budget"]])
        else:
            assert c["met"] == (not want)


def test_a_clear_loss_is_significant_and_zero_shot_is_checked_at_ten():
    runs = [TargetRun("a", m, s, {10: v + 0.01 * s, 25: v}) for s in range(5)
            for m, v in (("explorer", 0.8), ("explorer+history:decay=0.5", 0.6),
                         ("zero-shot", 0.95))]
    g = check_goals(runs)
    (cell, *_) = g["below"]
    assert cell["method"] == "explorer+history:decay=0.5" and cell["significant"]
    zs = [c for c in g["checks"] if c["method"] == "zero-shot"]
    assert zs and zs[0]["budget"] == 10 and zs[0]["met"]
    # every method with history has its mean goals checked, at the budgets it ran only
    means = [(c["budget"], c["met"]) for c in g["checks"]
             if c["method"] == "explorer+history:decay=0.5" and c["budget"]]
    assert means == [(25, False)]
    text = goals_markdown(g)
    assert "NOT met" in text and "| a | explorer+history:decay=0.5 | 10 |" in text


def test_a_mean_needs_every_target():
    """A method that scored only some targets has no mean over the targets: its goal is
    unmet and the targets without a score are named (a mean over the others would claim
    more than was measured); so is zero-shot on a target with no history (its scores None)."""
    runs = [TargetRun("a", "explorer+history", 0, {25: 1.0}),
            TargetRun("b", "explorer", 0, {25: 0.5})]
    (check,) = check_goals(runs)["checks"]
    assert check["measured"] is None and not check["met"] and check["unscored"] == ["b"]
    assert ("- explorer+history at 25: no score on b, so no mean over the targets; NOT met"
            in goals_markdown(check_goals(runs)))
    runs = [TargetRun("a", "zero-shot", 0, {10: 1.0}), TargetRun("b", "zero-shot", 0, {10: None})]
    (check,) = check_goals(runs)["checks"]
    assert check["unscored"] == ["b"] and not check["met"]
    assert not [r for r in summarise(runs) if r["target"] == "mean"]


def test_summarise_writes_an_earlier_runs_files_table_and_goals(cache_files, tmp_path, capsys):
    """--summarise runs nothing and writes the same table as the run that made the file,
    with the goals below it; a file that is not a runs file is one error line."""
    assert tq_cli.main(["--spaces", *map(str, cache_files), "--budgets", "4", "--seeds", "2",
                        "--methods", "explorer", "explorer+history", "--no-plot",
                        "--out", str(tmp_path / "a"), "--tag", "x"]) == 0
    first = (tmp_path / "a" / "x.md").read_text()
    assert "Goals of issue 12 on these 3 targets" in first
    capsys.readouterr()
    runs = tmp_path / "a" / "x_runs.json"
    assert tq_cli.main(["--summarise", str(runs), "--out", str(tmp_path / "b"),
                        "--no-plot"]) == 0
    assert (tmp_path / "b" / "x.md").read_text() == first
    assert "never below explorer" in capsys.readouterr().out
    summary = json.loads((tmp_path / "b" / "x_summary.json").read_text())
    assert summary["goals"]["targets"] == ["toy_0", "toy_1", "toy_2"]
    bad = tmp_path / "bad_runs.json"
    bad.write_text('{"runs": [{"target": "a"}]}')
    with pytest.raises(SystemExit, match="not a runs file of this benchmark") as e:
        tq_cli.main(["--summarise", str(bad)])
    assert "\n" not in str(e.value)


def test_targets_with_their_shape_in_the_history_are_left_out_of_a_second_check(tmp_path):
    """A leave-network-out target whose shape a history layer has is tuned with records of
    its own problem: the goals are checked again without it, and only then."""
    import json

    from benchmarks.tq.runner import TargetRun
    from benchmarks.tq.runs_file import write_outputs
    runs = [TargetRun(t, m, s, {25: v, 50: v})
            for s in range(2) for t, v in (("own", 1.0), ("new", 0.9))
            for m in ("explorer", "explorer+history")]
    meta = {"seeds": 2, "targets": [{"target": "own", "same_shape_in_history": ["h.conv1"]},
                                    {"target": "new", "same_shape_in_history": []}]}
    text = write_outputs(tmp_path, "t", runs, meta, "T", plot=False)
    assert "Goals of issue 12 on these 2 targets" in text
    assert "no history layer has the shape of, these 1 targets" in text
    second = json.loads((tmp_path / "t_summary.json").read_text())["goals_new_shapes"]
    assert second["targets"] == ["new"] and second["checks"][0]["measured"] == 0.9
    meta["targets"][0]["same_shape_in_history"] = []
    assert "no history layer" not in write_outputs(tmp_path, "u", runs, meta, "T", plot=False)
