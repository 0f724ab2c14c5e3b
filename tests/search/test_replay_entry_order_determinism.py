"""A seeded run of a recorded space must not depend on the order the file lists it in.

A Kernel Tuner cache is a JSON object (configuration key -> entry): its key order carries
no meaning, and the same recorded space comes back in another order from
``iobound history export`` (the database's row order: a log of the space imported before
the cache lists the log's configurations first) or from any tool that rewrites the JSON.
Replaying such a copy with the same ``--seed`` measured none of the configurations the
original's replay measured (convolution_A100, random/explorer/ga, budget 24).

Reference: the recorded space is the set of (configuration, entry) pairs; two files that
hold the same set are the same space, and a seeded run must ask for the same
configurations in the same order on both.
"""

import numpy as np
import pytest

from search.kt_cache import KtCache
from search.measure.replay import ReplayMeasurer
from search.replay_space import ReplaySpace
from search.tuner import tune

PARAMS = {"bx": [16, 32, 64, 128], "by": [1, 2, 4, 8], "t": [1, 2, 3]}


def _entries():
    out = []
    for bx in PARAMS["bx"]:
        for by in PARAMS["by"]:
            for t in PARAMS["t"]:
                if (bx * by) % 3 == 0 and t == 3:  # a restricted space: not a full grid
                    continue
                out.append({"bx": bx, "by": by, "t": t,
                            "time": 1.0 + abs(bx - 64) / 16 + abs(by - 4) + 0.1 * t})
    return out


def _cache(entries):
    return KtCache(tune_params={k: list(v) for k, v in PARAMS.items()}, device_name="gpu",
                   kernel_name="k", entries=[dict(e) for e in entries])


@pytest.mark.parametrize("strategy", ["random", "explorer", "ga"])
def test_same_recorded_space_in_another_entry_order_gives_the_same_run(strategy):
    entries = _entries()
    shuffled = [entries[k] for k in np.random.default_rng(3).permutation(len(entries))]
    runs = []
    for listed in (entries, shuffled):
        cache = _cache(listed)
        res = tune(ReplaySpace(cache), ReplayMeasurer(cache), strategy, budget=12, seed=4)
        runs.append([(t.config, t.record.time_ms) for t in res.trials])
    assert runs[0] == runs[1]


def test_index_order_is_the_configurations_not_the_files():
    entries = _entries()
    a = ReplaySpace(_cache(entries))
    b = ReplaySpace(_cache(entries[::-1]))
    assert [a.get(i) for i in range(len(a))] == [b.get(i) for i in range(len(b))]
    assert [a.status(i) for i in range(len(a))] == [b.status(i) for i in range(len(b))]
