"""The offline judge of source likeness (benchmarks/source_similarity.py) on the toy caches
of three devices (tests/benchmarks/conftest.py), against brute force where one exists."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from benchmarks import history_ceiling as hc
from benchmarks import source_similarity as ss
from benchmarks.tq.runner import load_targets


@pytest.fixture(scope="module")
def targets(cache_files):
    return load_targets([str(p) for p in cache_files], ["x", "y", "z"])


def _brute_kendall(a, b) -> float:
    """Tau-a from the pairs (no ties in the inputs)."""
    pairs = list(itertools.combinations(range(len(a)), 2))
    s = sum(np.sign(a[i] - a[j]) * np.sign(b[i] - b[j]) for i, j in pairs)
    return s / len(pairs)


@settings(max_examples=30, deadline=None)
@given(perm=st.permutations(list(range(7))))
def test_kendall_likeness_is_the_pair_count(perm):
    src = {i: float(i) for i in range(7)}
    known = {i: float(p) for i, p in enumerate(perm)}
    assert ss.likeness(src, known, "kendall") == pytest.approx(
        _brute_kendall(np.arange(7.0), np.array(perm, dtype=float)))


@settings(max_examples=20, deadline=None)
@given(n=st.integers(4, 12))
def test_weighted_likeness_counts_the_top_most(n):
    """The same order is 1, the reverse -1; one swapped pair costs Kendall's tau the same
    wherever it is, the weighted tau more at the fastest end than at the slowest."""
    src = {i: float(i) for i in range(n)}
    same = dict(src)
    top = {**src, 0: 1.0, 1: 0.0}
    bottom = {**src, n - 2: float(n - 1), n - 1: float(n - 2)}
    assert ss.likeness(src, same, "weighted") == pytest.approx(1.0)
    assert ss.likeness(src, {i: -t for i, t in src.items()}, "weighted") == pytest.approx(-1.0)
    assert ss.likeness(src, top, "kendall") == pytest.approx(ss.likeness(src, bottom, "kendall"))
    assert ss.likeness(src, top, "weighted") < ss.likeness(src, bottom, "weighted") < 1.0


def test_likeness_needs_three_shared_configurations():
    src = {0: 1.0, 1: 2.0, 5: 3.0}
    assert ss.likeness(src, {0: 1.0, 1: 2.0, 9: 3.0}, "weighted") == 0.0
    assert ss.likeness(src, {0: 1.0, 1: 1.0, 5: 1.0}, "kendall") == 0.0  # constant target


@settings(max_examples=12, deadline=None)
@given(target=st.integers(0, 2), first=st.integers(1, 12), batch=st.integers(1, 6),
       length=st.integers(1, 40))
def test_sequences_share_the_first_picks_and_never_repeat(targets, target, first, batch, length):
    """Every sequence starts with the picker's first picks, asks each configuration once
    and is as long as asked; the picker's scores are history_ceiling's prior@K."""
    t = targets[target]
    seqs = ss.sequences(t, first, batch, length, 15.0)
    assert set(seqs) == set(ss.SEQUENCES)
    head = seqs["picker"][:min(first, length)]
    for seq in seqs.values():
        assert len(seq) == len(set(seq)) == length
        assert seq[:len(head)] == head
    ks = sorted({1, length})
    assert ss.best_at(t, seqs, ks)["picker"] == pytest.approx(hc.ceiling(t, ks)["prior"])


def test_judged_rounds_follow_the_source_that_orders_the_target(targets):
    """Y runs X's order 2% slower: once the first picks show it, both likenesses take Y's
    fastest unasked configurations next, and both find X's optimum."""
    x = targets[0]
    y = next(g for g in x.prior.groups if g.device == "GPU Y")
    y_times = dict(zip(y.indices.tolist(), y.rel_time.tolist()))
    seqs = ss.sequences(x, 4, 4, 20, 15.0)
    for kind in ss.LIKENESSES:
        judged, asked = seqs[kind][4:], set(seqs[kind][:4])
        fastest = sorted(t for i, t in y_times.items() if i not in asked)[:len(judged)]
        assert sorted(y_times[i] for i in judged) == pytest.approx(fastest)
        assert ss.best_at(x, seqs, [20])[kind][20] == 1.0


def test_cli_writes_json_and_table(cache_files, tmp_path, capsys):
    assert ss.main(["--spaces", *map(str, cache_files), "--ks", "1", "8", "--out",
                    str(tmp_path), "--tag", "s"]) == 0
    data = json.loads((tmp_path / "s.json").read_text())
    assert [r["target"] for r in data["rows"]] == ["toy_0", "toy_1", "toy_2"]
    assert data["meta"]["first"] == 8 and data["meta"]["ks"] == [1, 8]
    out = capsys.readouterr().out
    assert out.count("| mean |") == len(ss.SEQUENCES)
    assert (tmp_path / "s.md").read_text().count("| toy_") == 3 * len(ss.SEQUENCES)


@pytest.mark.parametrize("args, message", [
    (["--first", "0"], "--first and --batch must be >= 1"),
    (["--match", "-1"], "--match >= 0"),
])
def test_cli_rejects_bad_options(cache_files, tmp_path, args, message):
    with pytest.raises(SystemExit, match=message):
        ss.main(["--spaces", *map(str, cache_files), "--out", str(tmp_path), *args])


def test_cli_rejects_missing_files(tmp_path):
    with pytest.raises(SystemExit, match="no such file: .*nope.json.gz"):
        ss.main(["--spaces", str(tmp_path / "nope.json.gz"), "--out", str(tmp_path)])
