"""Tiny synthetic Kernel Tuner caches of three "devices" for the transfer benchmarks' tests.

Written by the fixture (no ../shared needed): the same 3 parameters on three devices,
two of which agree on the optimum and one that does not.
"""

from __future__ import annotations

import pytest

from search.kt_cache import KtCache
from search.kt_cache_write import write_cache

PARAMS = {"a": [16, 32, 48, 64, 80, 96], "b": [1, 2, 4, 8], "c": [0, 1]}
DEVICES = {"GPU X": (64, 4), "GPU Y": (64, 4), "GPU Z": (16, 1)}  # device -> optimum (a, b)
#: Y runs everything 2% slower than X: the same order, not the same measurements
SCALE = {"GPU Y": 1.02}


def toy_time(a: int, b: int, c: int, best_a: int, best_b: int) -> float:
    """The toy kernel's time on a device whose optimum is ``(best_a, best_b, 0)``."""
    return 1.0 + abs(a - best_a) / 32 + abs(b - best_b) / 2 + 0.3 * c


def _entries(best_a: int, best_b: int, scale: float = 1.0) -> list[dict]:
    out = []
    for a in PARAMS["a"]:
        for b in PARAMS["b"]:
            for c in PARAMS["c"]:
                if a * b > 384:  # a restriction: never recorded
                    continue
                t = toy_time(a, b, c, best_a, best_b) * scale
                out.append({"a": a, "b": b, "c": c,
                            "time": "RuntimeFailedConfig" if (a, b, c) == (96, 4, 1) else t})
    return out


@pytest.fixture(scope="module")
def cache_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("tq")
    paths = []
    for k, (device, (a, b)) in enumerate(DEVICES.items()):
        path = root / f"toy_{k}.json.gz"
        entries = _entries(a, b, SCALE.get(device, 1.0))
        write_cache(path, KtCache(tune_params=PARAMS, entries=entries, device_name=device,
                                  kernel_name="toy_kernel", problem_size=[64, 64]))
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def cache_devices() -> dict:
    """Device name -> its optimum ``(a, b)``, in the order of ``cache_files``."""
    return dict(DEVICES)
