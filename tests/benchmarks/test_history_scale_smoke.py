"""benchmarks/history_scale.py on its tiny gemm-shaped space: it runs end to end, every
stage timed, and the tuning with history it times finds a recorded configuration."""

from __future__ import annotations

import json

from benchmarks import history_scale as hs
from search.kt_cache import load_cache


def test_the_written_caches_are_the_restricted_space_on_distinct_devices(tmp_path):
    paths = hs.write_caches(tmp_path, 3, "tiny")
    caches = [load_cache(p) for p in paths]
    assert len({c.device_name for c in caches}) == 3
    assert all(len(c.entries) == len(hs.gemm_configs("tiny")) for c in caches)
    times = [{tuple(e[k] for k in c.tune_params): e["time"] for e in c.entries} for c in caches]
    assert times[0].keys() == times[1].keys() and times[0] != times[1]


def test_a_tiny_run_times_every_stage_and_scores_the_tuning(tmp_path):
    out = tmp_path / "scale.json"
    assert hs.main(["--size", "tiny", "--devices", "3", "--budget", "8", "--uncapped",
                    "--out", str(out)]) == 0
    got = json.loads(out.read_text())
    n = len(hs.gemm_configs("tiny"))
    assert got["space_size"] == n
    timed = [e for e in got if e.endswith("_s")]
    assert set(timed) >= {"import_s", "read_s", "prior_s", "prior_uncapped_s", "zero_shot_s",
                          "zero_shot_choice_s", "tune_s"}
    assert got["zero_shot_order"] in ("model", "sources")  # two sources: one choice made
    assert all(got[k] >= 0 for k in timed)
    assert 0 < got["history_records"] <= 2 * n  # the two sources' timed records
    assert 0 < got["tune_score"] <= 1
