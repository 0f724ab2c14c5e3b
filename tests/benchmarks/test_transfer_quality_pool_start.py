"""transfer_quality's worker pools must not fork() the parent.

Before its pool starts, the parent has trained XGBoost (the leave-network-out history is
tuned with the explorer; in a test process, earlier tests did): its OpenMP thread pool
does not exist in a forked child. With xgboost-cpu 2.1.1 (pyproject allows >= 2.1) every
forked worker hangs for good in its first ``xgb.train`` (libgomp, inside the booster copy
``train`` returns): ``python -m benchmarks.transfer_quality --leave-network-out
--history-networks alexnet --target-network vgg16 --target-layers vgg16.conv5_1 --seeds 1
--budgets 4 --history-budget 8 --reference-budget 8 --no-plot`` never ends on a 2-CPU
machine (``--jobs`` defaults to the CPU count); Python 3.12 warns "This process is
multi-threaded, use of fork() may lead to deadlocks in the child" there. The pools are
caught before they start: which start method each asks for.
"""

from __future__ import annotations

import pytest

from benchmarks import transfer_quality as tq_cli


class _PoolAsked(Exception):
    pass


@pytest.fixture
def asked(monkeypatch):
    methods = []

    def get_context(method=None):
        methods.append(method)
        raise _PoolAsked

    monkeypatch.setattr(tq_cli.multiprocessing, "get_context", get_context)
    return methods


def _safe(method) -> bool:
    # None is the platform default: fork on Linux before Python 3.14
    return method in ("spawn", "forkserver")


def test_the_spaces_pool_does_not_fork(cache_files, tmp_path, asked):
    with pytest.raises(_PoolAsked):
        tq_cli.main(["--spaces", *map(str, cache_files), "--budgets", "4", "--seeds", "2",
                     "--jobs", "2", "--methods", "explorer", "--no-plot", "--out", str(tmp_path)])
    assert asked and all(map(_safe, asked)), asked


def test_the_network_pool_does_not_fork(tmp_path, asked, monkeypatch):
    monkeypatch.setattr(tq_cli, "network_history", lambda *args, **kw: [])
    with pytest.raises(_PoolAsked):
        tq_cli.main(["--leave-network-out", "--history-networks", "alexnet",
                     "--target-network", "vgg16", "--target-layers", "vgg16.conv5_1",
                     "--seeds", "1", "--budgets", "4", "--history-budget", "8",
                     "--reference-budget", "8", "--jobs", "2", "--out", str(tmp_path),
                     "--no-plot"])
    assert asked and all(map(_safe, asked)), asked
