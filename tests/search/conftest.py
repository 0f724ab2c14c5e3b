"""Fixtures for the search tests: a small synthetic Kernel Tuner cache written by the test,
and SIGINT as an interactive Python process has it (for the tests that interrupt a run)."""

from __future__ import annotations

import gzip
import json
import signal

import pytest

SYNTH_PARAMS = {"bx": [16, 32, 64, 128, 256], "by": [1, 2, 4, 8], "tile": [1, 2, 3], "shm": [0, 1]}


def synth_time(bx: int, by: int, tile: int, shm: int) -> float | str:
    """A rugged but deterministic landscape with one optimum; some failures, some gaps."""
    if bx * by > 512:
        return None  # absent: the 'restriction' removed it
    if bx == 256 and tile == 3:
        return "CompilationFailedConfig"
    if by == 8 and shm == 1 and tile == 3:
        return "RuntimeFailedConfig"
    if bx == 16 and by == 1 and tile == 1:
        return "InvalidConfig"
    base = abs(bx.bit_length() - 7) * 0.7 + abs(by - 2) * 0.4 + abs(tile - 2) * 0.9
    return round(1.0 + base + (0.3 if shm == 0 else 0.0) + ((bx * 7 + by * 3 + tile) % 5) * 0.05, 6)


def synth_cache_dict() -> dict:
    cache = {}
    keys = list(SYNTH_PARAMS)
    for bx in SYNTH_PARAMS["bx"]:
        for by in SYNTH_PARAMS["by"]:
            for tile in SYNTH_PARAMS["tile"]:
                for shm in SYNTH_PARAMS["shm"]:
                    t = synth_time(bx, by, tile, shm)
                    if t is None:
                        continue
                    entry = {"bx": bx, "by": by, "tile": tile, "shm": shm, "time": t}
                    if not isinstance(t, str):
                        entry["times"] = [t * 0.99, t, t * 1.01]
                    cache[",".join(str(entry[k]) for k in keys)] = entry
    return {"device_name": "Synthetic GPU", "kernel_name": "synth_kernel", "problem_size": [64, 64],
            "tune_params_keys": keys, "tune_params": SYNTH_PARAMS, "objective": "time",
            "cache": cache}


@pytest.fixture
def synth_cache_path(tmp_path):
    """Path of a gzipped synthetic Kernel Tuner cache file."""
    path = tmp_path / "synth.json.gz"
    with gzip.open(path, "wt") as fh:
        json.dump(synth_cache_dict(), fh)
    return path


@pytest.fixture
def two_device_db(tmp_path, synth_cache_path):
    """``(db, first, second)``: a tuning database holding the synthetic cache on its own
    device (``first``, "Synthetic GPU") and, from ``second`` (second.json), on "Second GPU"."""
    from search.cli.main import main
    raw = synth_cache_dict()
    raw["device_name"] = "Second GPU"
    second = tmp_path / "second.json"
    second.write_text(json.dumps(raw))
    db = str(tmp_path / "t.db")
    assert main(["history", "import", str(synth_cache_path), str(second), "--db", db]) == 0
    return db, synth_cache_path, second


@pytest.fixture
def synth_space(synth_cache_path):
    from search.replay_space import ReplaySpace
    return ReplaySpace(synth_cache_path)


@pytest.fixture
def synth_measurer(synth_space):
    from search.measure.replay import ReplayMeasurer
    return ReplayMeasurer(synth_space.cache)


@pytest.fixture
def synth_optimum(synth_space):
    """The lowest recorded time of the synthetic space."""
    return synth_space.cache.recorded_optimum()


@pytest.fixture(scope="module")
def ray_session(request):
    """One local Ray for the test module: 2 CPUs, loopback only; skipped without Ray. The
    module's ``RAY_BY_VALUE`` helper modules are pickled by value (Ray's workers cannot
    import tests/)."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'iobound[distributed]')")
    from search.executors.ray_cluster import start_local_ray

    if not ray.is_initialized():
        start_local_ray(2)
    import ray.cloudpickle as cloudpickle
    for module in getattr(request.module, "RAY_BY_VALUE", ()):
        cloudpickle.register_pickle_by_value(module)
    yield ray
    ray.shutdown()


@pytest.fixture
def other_params_db(tmp_path):
    """A database holding only a workload of other parameter names (bx, by)."""
    d = synth_cache_dict()
    d["tune_params_keys"] = ["bx", "by"]
    d["tune_params"] = {"bx": d["tune_params"]["bx"], "by": d["tune_params"]["by"]}
    d["cache"] = {f"{bx},{by}": {"bx": bx, "by": by, "time": 1.0 + bx / 100}
                  for bx in d["tune_params"]["bx"] for by in d["tune_params"]["by"]}
    path = tmp_path / "two.json"
    path.write_text(json.dumps(d))
    db = tmp_path / "h2.db"
    from search.db import TuningDB
    from search.db.importer import import_files
    with TuningDB(db) as handle:
        import_files(handle, [path])
    return str(db)


@pytest.fixture
def python_sigint():
    """SIGINT as an interactive Python process has it (Python's handler, not blocked in
    this thread), whatever the worker process inherited or was left with: a shell's
    background job starts with SIGINT ignored (Python then keeps it ignored), a library may
    leave its C-level handler or the C default (CP-SAT after a solve). The test then checks
    how *our* run answers the signal. Restored afterwards."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
    yield
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    signal.signal(signal.SIGINT, old)
