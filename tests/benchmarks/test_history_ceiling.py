"""The history ceiling (benchmarks/history_ceiling.py) on the toy caches of three devices,
checked against a brute force over the raw recorded times (tests/benchmarks/conftest.py)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from benchmarks import history_ceiling as hc
from benchmarks.tq.runner import load_targets
from search.kt_cache import load_cache


@pytest.fixture(scope="module")
def targets(cache_files):
    return load_targets([str(p) for p in cache_files], ["x", "y", "z"])


def _times(path) -> dict:
    """config tuple -> time, straight from a cache file (failures left out)."""
    c = load_cache(path)
    return {tuple(e[p] for p in c.tune_params): e["time"] for e in c.entries
            if isinstance(e["time"], float)}


def _brute_sources(cache_files, target: int, k: int) -> float:
    """Best target score among the configurations some other device has in its k best."""
    times = [_times(p) for p in cache_files]
    opt = min(times[target].values())
    top = set()
    for j, t in enumerate(times):
        if j != target:
            top.update(sorted(t, key=lambda c: (t[c], c))[:k])
    return max((opt / times[target][c] for c in top if c in times[target]), default=0.0)


@settings(max_examples=15, deadline=None)
@given(target=st.integers(0, 2), k=st.integers(1, 60))
def test_sources_ceiling_is_the_brute_force_one(targets, cache_files, target, k):
    """sources@K = the best target score among every source's K best, from the raw files;
    prior@K never exceeds the best score any K configurations could give."""
    got = hc.ceiling(targets[target], [k])
    assert got["sources"][k] == pytest.approx(_brute_sources(cache_files, target, k))
    scores = sorted(hc.target_scores(targets[target]), reverse=True)
    assert 0.0 < got["prior"][k] <= scores[0] == 1.0


def test_the_ceiling_tells_agreeing_from_misleading_history(targets):
    """X's optimum is Y's best: a source has it first, the prior within its first two (it
    ties with Z's best); Z's optimum is far from X's and Y's, so neither their first picks
    nor their top 5 reach it; ceilings grow with K."""
    x, z = hc.ceiling(targets[0], [2, 5, 80]), hc.ceiling(targets[2], [1, 5, 80])
    assert x["prior"][2] == hc.ceiling(targets[0], [1])["sources"][1] == 1.0
    assert z["sources"][5] < 1.0 and z["prior"][5] < 1.0
    assert z["sources"][1] <= z["sources"][5] <= z["sources"][80] == 1.0
    assert hc.best_source_rank(targets[0], [0.99]) == {0.99: 0}
    assert hc.best_source_rank(targets[2], [0.99])[0.99] > 5


def test_cli_writes_json_and_table(cache_files, tmp_path, capsys):
    """The entry point prints the table and writes it with a JSON of every row."""
    assert hc.main(["--spaces", *map(str, cache_files), "--ks", "1", "5", "--out",
                    str(tmp_path), "--tag", "c"]) == 0
    rows = json.loads((tmp_path / "c.json").read_text())["rows"]
    assert [r["target"] for r in rows] == ["toy_0", "toy_1", "toy_2"]
    out = capsys.readouterr().out
    assert "sources@5" in out and "| mean |" in out
    assert (tmp_path / "c.md").read_text().count("| toy_") == 3


def test_cli_rejects_missing_files(tmp_path):
    with pytest.raises(SystemExit, match="need at least two readable cache files"):
        hc.main(["--spaces", str(tmp_path / "nope.json.gz"), "--out", str(tmp_path)])
