"""The target's own measurements never reach its history, whatever its device is called
(benchmarks/tq/runner.py).

References: the benchmark's contract (a target's history is the other devices' records)
and Kernel Tuner's T4 files: a results file beside its cache holds the cache's very
measurements and takes its device name from the metadata file beside it, in nvidia-smi's
or rocm-smi's spelling, which need not be the cache's (the CUDA or HIP runtime's). Before,
two files that both carried a name were taken at their word and the T4 file's records
reached the cache's history.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.tq.runner import load_targets
from search.kt_cache import KtCache, load_cache
from search.kt_cache_write import write_cache
from tests.benchmarks.conftest import PARAMS, _entries


def _cache(path, device, best, scale=1.0):
    return write_cache(path, KtCache(tune_params=PARAMS, entries=_entries(*best, scale),
                                     device_name=device, kernel_name="toy_kernel",
                                     problem_size=[64, 64]))


def _t4_beside(cache_path, stem, gpu_name):
    """``stem``-results.json with the cache's measurements, ``stem``-metadata.json naming
    ``gpu_name`` (nvidia-smi's layout)."""
    cache = load_cache(cache_path)
    results = [{"configuration": {k: e[k] for k in cache.keys},
                "invalidity": "runtime" if isinstance(e["time"], str) else "correct",
                "objectives": ["time"],
                "measurements": [] if isinstance(e["time"], str) else
                [{"name": "time", "value": e["time"], "unit": "ms"}]} for e in cache.entries]
    res = cache_path.parent / f"{stem}-results.json"
    res.write_text(json.dumps({"schema_version": "1.0.0", "results": results}))
    (cache_path.parent / f"{stem}-metadata.json").write_text(json.dumps(
        {"schema_version": "1.0.0", "metadata": {"environment": {
            "device_query": {"nvidia_smi_log": {"gpu": {"product_name": gpu_name}}}}}}))
    return res


@pytest.mark.parametrize("cache_name, smi_name", [
    ("NVIDIA A100-PCIE-40GB", "A100-PCIE-40GB"),  # one preset, two spellings
    ("gfx90a", "AMD Instinct MI250X"),             # HIP's name and rocm-smi's, no preset
])
def test_a_t4_results_file_with_metadata_stays_out_of_its_caches_history(tmp_path, cache_name,
                                                                         smi_name):
    x = _cache(tmp_path / "x.json", cache_name, (64, 4))
    y = _cache(tmp_path / "y.json", "GPU Y", (64, 4), 1.02)
    z = _cache(tmp_path / "z.json", "GPU Z", (16, 1))
    res = _t4_beside(x, "x", smi_name)
    assert load_cache(res).device_name == smi_name
    got = {t.name: {m.device for m in t.history} for t in load_targets(
        [str(x), str(y), str(z), str(res)], ["x", "y", "z", "x_t4"], notify=False)}
    assert got["x"] == {"GPU Y", "GPU Z"} and got["x_t4"] == {"GPU Y", "GPU Z"}
    assert got["y"] == {cache_name, smi_name, "GPU Z"}


def test_one_preset_spelled_two_ways_in_two_caches_is_one_device(tmp_path):
    """Two caches naming one preset differently (the vendor prefix) are one device: neither
    is the other's history, even where their measurements differ (two runs)."""
    x = _cache(tmp_path / "x.json", "NVIDIA RTX A4000", (64, 4))
    x2 = _cache(tmp_path / "x2.json", "RTX-A4000", (64, 4), 1.05)
    z = _cache(tmp_path / "z.json", "GPU Z", (16, 1))
    got = {t.name: {m.device for m in t.history}
           for t in load_targets([str(x), str(x2), str(z)], ["x", "x2", "z"], notify=False)}
    assert got == {"x": {"GPU Z"}, "x2": {"GPU Z"}, "z": {"NVIDIA RTX A4000", "RTX-A4000"}}


def test_zero_shot_order_is_chosen_on_each_targets_own_history(cache_files):
    """The order is chosen once per target object and its history (kept on the Target), not
    per target name for the process: a second load with another history chooses again."""
    from benchmarks.tq.runner import run_method
    from search.zero_shot_order import choose_orders
    x, y, z = map(str, cache_files)
    budgets = [2, 3]
    only_z = load_targets([x, z], ["x", "z"], notify=False)[0]
    full = load_targets([x, y, z], ["x", "y", "z"], notify=False)[0]
    run_method(only_z, "zero-shot", 0, budgets)
    run_method(full, "zero-shot", 0, budgets)
    for t in (only_z, full):
        assert t.zero_shot_orders == {tuple(budgets): choose_orders(
            t.space, t.history, budgets, t.space.cache.problem_size)}
    assert only_z.zero_shot_orders != full.zero_shot_orders  # the histories choose apart
