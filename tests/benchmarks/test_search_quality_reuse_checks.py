"""--reuse-kt takes only Kernel Tuner cells made on this very recording with every seed
asked (benchmarks/sq/reuse.py).

References: the benchmark's comparison (README "How good is the search": the same seeds
and budgets on the same space for every strategy). A summary cell some of whose runs
failed averages fewer seeds than its file's ``seeds`` and was reused as a whole cell; and
results were matched by the space's file name alone, so another recording of the same
name had its Kernel Tuner cells scored against the wrong optimum.
"""

from __future__ import annotations

import json

from benchmarks.sq.kt_runner import kt_version
from benchmarks.sq.reuse import reusable_kt

SPACE = {"name": "s", "path": "/a/s.json", "device": "GPU", "size": 96, "n_ok": 90,
         "optimum_ms": 1.5, "params": ["a", "b"]}


def _row(n_runs, space="s"):
    return {"space": space, "strategy": "kt:pso", "budget": 25, "n_runs": n_runs,
            "mean_score": 0.9, "std_score": 0, "se_score": 0, "min_score": 0.9,
            "frac_within_5pct": 0, "median_evals_to_5pct": None, "n_reached": 0,
            "mean_evals": 25, "mean_wall_s": 0}


def _summary(tmp_path, rows, errors=(), spaces=(SPACE,)):
    meta = {"kernel_tuner": kt_version(), "seeds": [0, 1, 2],
            "failed_entries": "part of the space", "spaces": list(spaces)}
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"meta": meta, "summary": rows, "errors": list(errors)}))
    return path


def test_a_cell_some_of_whose_runs_failed_is_run_again(tmp_path):
    errors = [{"space": "s", "strategy": "kt:pso", "budget": 25, "seed": s, "error": "boom"}
              for s in (1, 2)]
    path = _summary(tmp_path, [_row(1)], errors)
    assert reusable_kt(path, False, [0, 1, 2], {"s": SPACE})[1] == {}
    whole = _summary(tmp_path, [_row(3)])
    assert list(reusable_kt(whole, False, [0, 1, 2], {"s": SPACE})[1]) == [("s", "kt:pso", 25)]


def test_another_recording_of_the_same_name_is_not_reused(tmp_path):
    path = _summary(tmp_path, [_row(3)])
    moved = {**SPACE, "path": "/elsewhere/s.json"}  # the same recording elsewhere: reused
    assert reusable_kt(path, False, [0, 1, 2], {"s": moved})[1]
    for key, value in (("optimum_ms", 1.2), ("size", 95), ("n_ok", 91), ("device", "GPU 2")):
        other = {**SPACE, key: value}
        assert reusable_kt(path, False, [0, 1, 2], {"s": other})[1] == {}, key
    runs = tmp_path / "runs.json"
    runs.write_text(json.dumps({"meta": {"kernel_tuner": kt_version(), "spaces": [SPACE]},
                                "runs": [{"space": "s", "strategy": "kt:pso", "budget": 25,
                                          "seed": 0, "score": 0.5}]}))
    assert reusable_kt(runs, False, [0], {"s": SPACE})[0]
    assert reusable_kt(runs, False, [0], {"s": {**SPACE, "optimum_ms": 9.0}})[0] == {}
