"""Kernel Tuner cache reading at the edges of the format (search.kt_cache's module doc and the
Kernel Tuner format: ``tune_params_keys`` order, exact-in-float64 knob values, open caches),
each case a small file written by the test whose expected reading follows from the format."""

from __future__ import annotations

import json

import pytest

from iobound.errors import InvalidInputError
from search.kt_cache import is_param_value, load_cache
from search.kt_json import read_tuning_json


def _write(tmp_path, raw, name="c.json"):
    path = tmp_path / name
    path.write_text(raw if isinstance(raw, str) else json.dumps(raw))
    return path


def _cache(**over):
    raw = {"tune_params_keys": ["a", "b"], "tune_params": {"a": [1, 2], "b": [3]},
           "cache": {"1,3": {"a": 1, "b": 3, "time": 2.0}}}
    return {**raw, **over}


def test_an_open_cache_whose_last_entry_has_no_comma_reads(tmp_path):
    text = '{"tune_params": {"a": [1, 2]}, "cache": {\n"1": {"a": 1, "time": 2.0},\n"2": {"a": 2, "time": 3.0}'
    assert [e["time"] for e in load_cache(_write(tmp_path, text)).entries] == [2.0, 3.0]


def test_closing_that_gives_no_top_level_cache_is_not_a_cache(tmp_path):
    """'"cache"' only inside a nested object: closing the text gives no top-level cache."""
    with pytest.raises(InvalidInputError, match="not a Kernel Tuner cache file"):
        read_tuning_json(_write(tmp_path, '{"a": {"cache": 1'))


def test_a_folder_is_not_a_file(tmp_path):
    (tmp_path / "d.json").mkdir()
    with pytest.raises(InvalidInputError, match="is not a file"):
        read_tuning_json(tmp_path / "d.json")


def test_param_values_are_scalars_exact_in_float64_or_flat_lists_of_them():
    assert is_param_value(2 ** 53) and is_param_value(-(2 ** 53)) and is_param_value([1, "x", None])
    assert not is_param_value(2 ** 53 + 1)
    assert not is_param_value([[1]]) and not is_param_value([{"a": 1}]) and not is_param_value([2 ** 60])


def test_tune_params_keys_give_the_parameter_order(tmp_path):
    c = load_cache(_write(tmp_path, _cache(tune_params_keys=["b", "a"],
                                           cache={"3,1": {"a": 1, "b": 3, "time": 2.0}})))
    assert c.keys == ("b", "a")


@pytest.mark.parametrize("over, needle", [
    ({"tune_params_keys": ["a", "a"]}, "names a parameter twice"),
    ({"tune_params": {}}, "non-empty"),
    ({"cache": [1, 2]}, "'cache' must be an object"),
    ({"cache": {"1,3,4": {"time": 1.0}}}, "does not hold 2 values"),
])
def test_malformed_caches_are_named(tmp_path, over, needle):
    with pytest.raises(InvalidInputError, match=needle):
        load_cache(_write(tmp_path, _cache(**over)))


def test_a_cache_without_tune_params_is_named(tmp_path):
    with pytest.raises(InvalidInputError, match="lacks 'tune_params' or 'cache'"):
        load_cache(_write(tmp_path, {"cache": {}}))


@pytest.mark.parametrize("times, kept", [([1.9, "bad", 2.1], [1.9, 2.1]), (["x", None], [2.0])])
def test_repeats_that_are_not_times_are_dropped(tmp_path, times, kept):
    """Non-times among ``times`` are dropped; none left: the entry's own time."""
    c = load_cache(_write(tmp_path, _cache(cache={"1,3": {"a": 1, "b": 3, "time": 2.0,
                                                          "times": times}})))
    assert c.entries[0]["times"] == kept


def test_meta_holds_only_the_other_top_level_fields(tmp_path):
    c = load_cache(_write(tmp_path, _cache(device_name="G", extra={"x": 1})))
    assert c.meta == {"extra": {"x": 1}}


def test_an_imported_entrys_fields_never_override_the_records_own():
    """``extra["kt"]`` (the fields a record's entry had when imported) is written back
    without replacing the parameters, the time or the cache's own timestamp."""
    from search.kt_cache_write import cache_entry
    from search.measure.base import MeasureRecord

    rec = MeasureRecord({"a": 1}, "ok", time_ms=2.0, timestamp=7.0,
                        extra={"kt": {"a": 9, "time": 9.0, "compile_time": 1.5, "timestamp": 5.0}})
    entry = cache_entry(rec, ["a"])
    assert (entry["a"], entry["time"], entry["compile_time"], entry["timestamp"]) == (1, 2.0, 1.5, 5.0)
    assert "toolchain" not in entry and cache_entry(rec, ["a"], toolchain="nvcc 12")["toolchain"] == "nvcc 12"


def test_a_cache_of_records_skips_untimed_ok_records_and_keeps_its_toolchain(tmp_path):
    """An ok record without a time (the emulator's) has no entry; the toolchain is the
    cache's; a meta field never overrides the cache's own header when written."""
    from search.kt_cache import KtCache
    from search.kt_cache_write import records_to_cache, write_cache
    from search.measure.base import MeasureRecord

    cache = records_to_cache([MeasureRecord({"a": 1}, "ok"), MeasureRecord.ok({"a": 2}, time_ms=1.0)],
                             {"a": [1, 2]}, toolchain="nvcc 12")
    assert [e["a"] for e in cache.entries] == [2] and cache.meta == {"toolchain": "nvcc 12"}
    path = write_cache(tmp_path / "m.json", KtCache({"a": [1]}, [{"a": 1, "time": 1.0}],
                                                     device_name="Y", meta={"device_name": "X"}))
    assert json.loads(path.read_text())["device_name"] == "Y"
