"""The transfer benchmark's statistics and method strings say what was measured
(benchmarks/tq/report.py, goals.py, runner.py, transfer_quality.py).

References: the standard error of a mean over seeds (undefined for one seed), the mean
over targets of their unrounded means (what the goal check uses), and a row's label: a
method named twice would count its seeds twice; options a method does not take would
label the default method's numbers as something else.
"""

from __future__ import annotations

import re
import statistics

import pytest

from benchmarks import transfer_quality as tq_cli
from benchmarks.tq.goals import check_goals, goals_markdown
from benchmarks.tq.report import markdown_table, summarise
from benchmarks.tq.runner import TargetRun, parse_method


def test_one_seed_has_no_standard_error_and_is_never_beyond_two_of_them():
    runs = [TargetRun("A", "explorer", 0, {10: 0.80}),
            TargetRun("A", "explorer+history", 0, {10: 0.79})]
    goals = check_goals(runs)
    (cell,) = goals["below"]
    assert cell["se"] is None and not cell["significant"]
    assert "| A | explorer+history | 10 | -0.010 | n/a | 1 | no |" in goals_markdown(goals)
    rows = summarise(runs)
    assert all(r["se"] is None for r in rows)
    assert "| A | explorer | 0.800 |" in markdown_table(rows)


def test_the_mean_row_is_the_mean_of_the_unrounded_target_means():
    values = (("A", 0.94456), ("B", 0.94456), ("C", 0.94436))
    runs = [TargetRun(t, "explorer+history", 0, {25: v}) for t, v in values]
    mean = statistics.fmean(v for _, v in values)  # 0.944493..., 0.945 from rounded means
    cell = markdown_table(summarise(runs)).splitlines()[-1].split("|")[3].strip()
    assert cell == f"{mean:.3f}" == "0.944"
    (check,) = [c for c in check_goals(runs)["checks"] if c["budget"] == 25]
    assert check["measured"] == pytest.approx(mean, abs=1e-12)  # unrounded: printed once


@pytest.mark.parametrize("spec, said", [
    ("zero-shot:order=model", "takes no options"),
    ("explorer:decay=0.5", "takes no options"),
    ("gga:decay=0.5", "takes no options"),
    ("explorer+history:nonsense=1", "nonsense is not an option of explorer+history"),
    ("explorer+history:decay=7", "decay"),
])
def test_options_a_method_does_not_take_are_refused(spec, said):
    with pytest.raises(ValueError, match=re.escape(said)):
        parse_method(spec)


def test_a_method_named_twice_is_refused(cache_files, tmp_path):
    with pytest.raises(SystemExit, match="names explorer twice"):
        tq_cli.main(["--spaces", *map(str, cache_files), "--budgets", "4", "--seeds", "1",
                     "--no-plot", "--methods", "explorer", "explorer", "--out", str(tmp_path)])
