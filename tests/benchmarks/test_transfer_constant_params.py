"""Spaces with parameters of one value (Kernel Tuner's ``block_size_z = [1]``, a
disabled unroll factor ``[0]``: the dedispersion spaces of the FAIR benchmark hub have
both), tuned with history: such a parameter says nothing, and must break nothing.

Reference: the toy caches of ``conftest.py`` (three devices, two agreeing on the
optimum) with two one-value parameters added to every entry and to ``tune_params``;
the scores must be those of the same method on the caches without them.
"""

from __future__ import annotations

import pytest

from benchmarks.tq.runner import load_targets, run_method
from search.kt_cache import KtCache, load_cache
from search.kt_cache_write import write_cache

CONSTANT = {"block_size_z": [1], "unroll": [0]}


@pytest.fixture(scope="module")
def constant_files(cache_files, tmp_path_factory):
    root = tmp_path_factory.mktemp("constant")
    paths = []
    for p in cache_files:
        c = load_cache(p)
        entries = [{**e, **{k: v[0] for k, v in CONSTANT.items()}} for e in c.entries]
        paths.append(write_cache(root / p.name, KtCache(
            tune_params={**c.tune_params, **CONSTANT}, entries=entries,
            device_name=c.device_name, kernel_name=c.kernel_name,
            problem_size=c.problem_size)))
    return paths


@pytest.mark.parametrize("method", ["explorer", "explorer+history", "gga", "zero-shot"])
def test_one_value_parameters_change_no_score(cache_files, constant_files, method):
    plain = load_targets([str(p) for p in cache_files], ["x", "y", "z"], notify=False)
    padded = load_targets([str(p) for p in constant_files], ["x", "y", "z"], notify=False)
    for a, b in zip(plain, padded):
        assert len(a.space) == len(b.space) and len(a.history) == len(b.history)
        assert set(b.space.get(0)) == set(a.space.get(0)) | set(CONSTANT)
        got = run_method(b, method, seed=3, budgets=[4, 8]).scores
        assert all(0.0 < v <= 1.0 for v in got.values())
        assert got == run_method(a, method, seed=3, budgets=[4, 8]).scores
