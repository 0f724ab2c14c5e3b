"""``iobound tune`` with a ``--budget`` larger than the space: a notice before the loop says
every configuration will be measured (a review found a replayed space of 4,362 tuned with
--budget 5000 for minutes without a word), and the run measures each once and stops as
exhausted. A budget within the space prints no such notice (nor does --json, quiet as
for every notice)."""

from __future__ import annotations

import pytest

from search.cli.main import main

LAYER = "cin=2,hin=4,cout=2,kh=3"  # 54 configurations on the V100


@pytest.mark.parametrize("budget, noticed", [(500, True), (20, False)])
def test_a_budget_beyond_the_space_is_said_once(capsys, tmp_path, budget, noticed):
    code = main(["tune", "--layer", LAYER, "--measure", "model", "--budget", str(budget),
                 "--no-verify", "--out-dir", str(tmp_path)])
    out, err = capsys.readouterr()
    said = [line for line in err.splitlines() if "is more than the space's" in line]
    assert code == 0 and "space: direct, 54 configurations" in out
    assert said == ([f"notice: --budget {budget} is more than the space's 54 configurations: "
                     "every one is measured, then the search stops"] if noticed else [])
    evaluations = "evaluations 54 (ok 54)" if noticed else "evaluations 20 (ok 20)"
    assert evaluations in out and ("stopped: exhausted" in out) == noticed
