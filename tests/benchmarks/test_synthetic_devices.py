"""Synthetic devices (benchmarks/synthetic_devices.py): perturbed copies of the toy caches
(tests/benchmarks/conftest.py), read back through the project's own cache reader."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings, strategies as st

from benchmarks import synthetic_devices as sd
from search.kt_cache import load_cache


def _times(cache) -> dict:
    return {tuple(e[p] for p in cache.tune_params): e["time"] for e in cache.entries}


@pytest.fixture(scope="module")
def written(cache_files, tmp_path_factory):
    out = tmp_path_factory.mktemp("synthetic")
    assert sd.main([str(cache_files[0]), "--copies", "2", "--out", str(out)]) == 0
    return out


def test_copies_keep_the_space_and_failures_and_move_the_times(cache_files, written):
    """Same configurations and failures, a new device name per copy; every time is the
    original one times exp(sum of its values' effects + noise), so not all equal to it."""
    base = load_cache(cache_files[0])
    for k in (0, 1):
        copy = load_cache(written / f"toy_0_s{k}.json.gz")
        assert copy.device_name == f"Synthetic {base.device_name} #{k}"
        assert copy.tune_params == base.tune_params
        old, new = _times(base), _times(copy)
        assert old.keys() == new.keys()
        for c, t in old.items():
            assert isinstance(new[c], float) == isinstance(t, float)
        assert any(new[c] != t for c, t in old.items() if isinstance(t, float))


def test_the_same_arguments_write_the_same_files(cache_files, written, tmp_path):
    sd.main([str(cache_files[0]), "--copies", "2", "--out", str(tmp_path)])
    for k in (0, 1):
        assert _times(load_cache(tmp_path / f"toy_0_s{k}.json.gz")) == \
            _times(load_cache(written / f"toy_0_s{k}.json.gz"))


@settings(max_examples=30, deadline=None)
@given(effects=st.lists(st.floats(-1, 1), min_size=2, max_size=2), noise=st.floats(-1, 1),
       time=st.floats(1e-3, 1e3))
def test_a_time_is_scaled_by_its_values_effects(effects, noise, time):
    entry = {"a": 16, "b": [1, 2], "time": time, "times": [time, "x"]}
    table = {("a", "16"): effects[0], ("b", "[1, 2]"): effects[1]}
    out = sd.perturbed(entry, ("a", "b"), table, noise)
    factor = math.exp(effects[0] + effects[1] + noise)
    assert out["time"] == pytest.approx(time * factor)
    assert out["times"] == [pytest.approx(time * factor), "x"]
    assert entry["time"] == time  # the input is not changed


def test_without_effects_or_noise_the_times_are_the_originals(cache_files, tmp_path):
    sd.main([str(cache_files[1]), "--copies", "1", "--effect", "0", "--noise", "0",
             "--out", str(tmp_path)])
    assert _times(load_cache(tmp_path / "toy_1_s0.json.gz")) == \
        pytest.approx(_times(load_cache(cache_files[1])))


def test_bad_arguments_are_refused(cache_files, tmp_path):
    with pytest.raises(SystemExit) as e:
        sd.main([str(cache_files[0]), "--copies", "0", "--out", str(tmp_path)])
    assert e.value.code == 2
