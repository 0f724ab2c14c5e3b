"""Tests of Kernel Tuner cache reading, writing and export of our records."""

import json

import pytest

from iobound.errors import InvalidInputError

from search.kt_cache import KtCache, cache_key, entry_status, load_cache
from search.kt_cache_write import records_to_cache, write_cache
from search.measure.base import MeasureRecord


def test_load_synthetic(synth_cache_path):
    """The loader keeps every entry, the parameter order and the header fields."""
    c = load_cache(synth_cache_path)
    assert len(c) == 102 and c.keys == ("bx", "by", "tile", "shm")
    assert c.device_name == "Synthetic GPU" and c.problem_size == [64, 64]


def test_failure_strings_map_to_statuses():
    """Kernel Tuner's failure strings become our statuses."""
    assert [entry_status({"time": t}).value for t in
            ("InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig", 1.5)] == \
        ["invalid", "compile_error", "runtime_error", "ok"]


def test_write_then_load_round_trip(tmp_path, synth_cache_path):
    """A written cache loads back with the same entries and keys in tune_params_keys order."""
    c = load_cache(synth_cache_path)
    out = write_cache(tmp_path / "copy.json", c)
    raw = json.loads(out.read_text())
    assert raw["tune_params_keys"] == list(c.keys)
    assert all(k == cache_key(e, c.keys) for k, e in raw["cache"].items())
    assert load_cache(out).entries == c.entries


def test_export_records_round_trip(tmp_path):
    """Exported records keep times and exact statuses (even timeout) when re-imported; our
    ``status`` is written beside Kernel Tuner's string only where the string does not say it."""
    recs = [MeasureRecord.ok({"a": 1, "b": 2}, costs=(1.0, 2.0, 3.0)),
            MeasureRecord.failed({"a": 2, "b": 2}, "timeout", "slow"),
            MeasureRecord.failed({"a": 4, "b": 2}, "compile_error")]
    cache = records_to_cache(recs, {"a": [1, 2, 4], "b": [2]}, device_name="dev")
    back = load_cache(write_cache(tmp_path / "x.json.gz", cache))
    assert [entry_status(e).value for e in back.entries] == ["ok", "timeout", "compile_error"]
    assert [e.get("status") for e in back.entries] == [None, "timeout", None]
    assert back.entries[0]["time"] == 2.0 and back.entries[1]["time"] == "RuntimeFailedConfig"


def test_not_a_cache_file(tmp_path):
    """A JSON file without tune_params/cache is rejected with the file named."""
    p = tmp_path / "bad.json"
    p.write_text("{}")
    with pytest.raises(ValueError, match="bad.json"):
        load_cache(p)


def test_t1_description_is_named_not_parsed(tmp_path):
    """A T1 tuning-problem file (restrictions, no times) is refused with a clear message."""
    p = tmp_path / "t1.json"
    p.write_text(json.dumps({"General": {}, "ConfigurationSpace": {"TuningParameters": [],
                             "Conditions": [{"Expression": "__import__('os').system('x')"}]}}))
    with pytest.raises(ValueError, match="T1 tuning-problem description"):
        load_cache(p)


def test_key_only_entries_recover_parameters(tmp_path):
    """Entries that hold only a time get their parameters back from the key."""
    p = tmp_path / "k.json"
    p.write_text(json.dumps({"tune_params_keys": ["a", "b"], "tune_params": {"a": [1, 2], "b": [3]},
                             "cache": {"2,3": {"time": 1.0}}}))
    assert load_cache(p).entries[0]["a"] == 2


@pytest.mark.shared_data
def test_real_files_load(shared_data):
    """The recorded spaces load and hold thousands of entries, failed ones included."""
    for gpu in ("A100", "A4000", "A6000"):
        c = load_cache(shared_data / "tuning-spaces" / f"convolution_{gpu}.json.gz")
        statuses = {entry_status(e).value for e in c.entries}
        assert len(c) > 1000 and "ok" in statuses and statuses - {"ok"}


def test_recorded_optimum_is_the_best_recorded_time(synth_cache_path):
    """The recorded optimum is the least numeric time of the file; failures never count."""
    import gzip
    with gzip.open(synth_cache_path, "rt") as fh:
        times = [e["time"] for e in json.load(fh)["cache"].values()]
    assert any(isinstance(t, str) for t in times)
    assert load_cache(synth_cache_path).recorded_optimum() == min(
        t for t in times if isinstance(t, float))
    only_failures = KtCache({"a": [1, 2]}, [{"a": 1, "time": "InvalidConfig"}, {"a": 2, "time": None}])
    assert only_failures.recorded_optimum() is None


@pytest.mark.parametrize("time, expected", [(1.5, 1.5), (2, 2.0), ("RuntimeFailedConfig", None),
                                            (None, None), (float("nan"), None), (True, None)])
def test_recorded_time_is_a_finite_number_or_none(time, expected):
    """Only a finite number is a recorded time (Kernel Tuner writes failures as strings)."""
    from search.kt_cache import recorded_time
    assert recorded_time({"time": time}) == expected


@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_a_cache_that_cannot_be_written_leaves_the_old_file(tmp_path, suffix):
    """A value JSON cannot hold (NaN): refused before writing; the old file and folder intact."""
    path = tmp_path / f"c{suffix}"
    good = KtCache(tune_params={"x": [1]}, entries=[{"x": 1, "time": 1.0}], kernel_name="k")
    write_cache(path, good)
    before = path.read_bytes()
    bad = KtCache(tune_params={"x": [1]}, entries=[{"x": 1, "time": 1.0, "c": float("nan")}])
    with pytest.raises(InvalidInputError, match="NaN"):
        write_cache(path, bad)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    assert load_cache(path).entries == good.entries


def test_a_cache_written_over_a_folder_leaves_no_temporary_file(tmp_path):
    """The rename fails (a folder is in the way): one error, no temporary file left beside it."""
    (tmp_path / "c.json").mkdir()
    with pytest.raises(InvalidInputError, match="cannot write"):
        write_cache(tmp_path / "c.json", KtCache(tune_params={"x": [1]}, entries=[]))
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]
