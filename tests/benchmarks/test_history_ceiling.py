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
    assert (tmp_path / "c.md").read_text().count("| toy_") == 3 * 2  # both tables
    assert "random@5" in out and rows[0]["alone"]["size"] > 0


def test_cli_rejects_missing_files(tmp_path):
    with pytest.raises(SystemExit, match="no such file: .*nope.json.gz"):
        hc.main(["--spaces", str(tmp_path / "nope.json.gz"), "--out", str(tmp_path)])


def test_cli_without_spaces_says_where_it_looked(tmp_path, monkeypatch, cache_files):
    """A checkout not beside ../shared has no default caches: the error says so and how
    to give them (it printed "missing: []")."""
    monkeypatch.setattr(hc, "SPACES_DIR", tmp_path / "absent")
    with pytest.raises(SystemExit, match=r"none found in .*absent.*--spaces FILE"):
        hc.main(["--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="need at least two"):
        hc.main(["--spaces", str(cache_files[0]), "--out", str(tmp_path)])


@settings(max_examples=60, deadline=None)
@given(scores=st.lists(st.sampled_from([0.0, 0.2, 0.5, 0.7, 0.9, 1.0]), min_size=1, max_size=8),
       k=st.integers(1, 9))
def test_expected_best_of_random_is_the_mean_over_every_draw(scores, k):
    """The exact expectation equals the mean of the maximum over every k-subset."""
    import itertools
    if k >= len(scores):
        want = max(scores)
    else:
        subsets = list(itertools.combinations(scores, k))
        want = sum(max(c) for c in subsets) / len(subsets)
    assert hc.expected_best_of_random(scores, k) == pytest.approx(want)


def test_the_target_alone_counts_its_space(targets):
    """n>=1.0 counts the optimum (X's and Y's each once), random@K grows with K to 1.0."""
    got = hc.alone(targets[0], [1, 5, 10_000], [1.0, 0.5])
    assert got["count"][1.0] == 1 and got["count"][0.5] <= got["size"] == len(targets[0].space)
    assert got["random"][1] < got["random"][5] < got["random"][10_000] == 1.0


def test_cli_names_a_file_that_cannot_be_a_target(cache_files, tmp_path):
    """A file that is not a cache is one error line naming it, as in transfer_quality."""
    bad = tmp_path / "bad.json"
    bad.write_text('{"x": 1}')
    with pytest.raises(SystemExit, match="bad.json.*lacks 'tune_params'"):
        hc.main(["--spaces", str(cache_files[0]), str(bad), "--out", str(tmp_path)])
