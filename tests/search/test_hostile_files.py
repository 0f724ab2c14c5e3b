"""Every file reader treats its file as data: replay caches, T1 files, tuning logs.

Any JSON shape or damaged file is one InvalidInputError naming the file; a time that
is not a positive finite number is never a measurement (and never the optimum); an
estimate stays an estimate through export and replay.
"""

import gzip
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from iobound.errors import InvalidInputError
from search.kt_cache import LEGACY_FAILURE_MS, KtCache, load_cache
from search.kt_cache_write import records_to_cache, write_cache
from search.measure.base import MeasureRecord
from search.measure.replay import ReplayMeasurer
from search.records import SCHEMA, read_log
from search.replay_space import ReplaySpace
from search.tuner import tune

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20)
TIMES = st.one_of(st.floats(), st.integers(-(10 ** 400), 10 ** 400), JSON,
                  st.sampled_from(["InvalidConfig", "RuntimeFailedConfig", "what"]))
FILE_SETTINGS = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


def _cache_dict(times, tune_params=None) -> dict:
    return {"tune_params_keys": ["a"], "tune_params": tune_params or {"a": list(range(len(times)))},
            "cache": {str(i): {"a": i, "time": t} for i, t in enumerate(times)}}


def _load(tmp_path, raw: dict | str | bytes, name="c.json"):
    path = tmp_path / name
    if isinstance(raw, bytes):
        path.write_bytes(raw)
    else:
        path.write_text(raw if isinstance(raw, str) else json.dumps(raw))
    return load_cache(path)


@FILE_SETTINGS
@given(raw=st.one_of(JSON, st.fixed_dictionaries({"tune_params": JSON, "cache": JSON}),
                     st.fixed_dictionaries({"tune_params": st.dictionaries(st.text(max_size=3), JSON),
                                            "cache": st.dictionaries(st.text(max_size=5), JSON),
                                            "tune_params_keys": JSON})))
def test_any_json_is_a_cache_or_one_error_naming_the_file(tmp_path, raw):
    """Any JSON value: a KtCache (which a ReplaySpace takes or refuses cleanly) or one
    InvalidInputError naming the file."""
    try:
        cache = _load(tmp_path, raw)
    except InvalidInputError as exc:
        assert "c.json" in str(exc) and "\n" not in str(exc)
        return
    try:
        ReplaySpace(cache)
    except InvalidInputError:
        pass


@pytest.mark.parametrize("content,needle", [
    (b"", "is empty"), (b" \n", "is empty"), (b"{", "JSONDecodeError"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b'{"tune_params": {"\xe9": [1]}, "cache": {}}', "UnicodeDecodeError"),
    (json.dumps({"ConfigurationSpace": {}}).encode(), "T1 tuning-problem description"),
    (b"[1, 2]", "lacks 'tune_params'"),
])
def test_damaged_files_are_one_line(tmp_path, content, needle):
    """Empty, deeply nested, badly encoded, T1 and list files: one line naming the cause."""
    with pytest.raises(InvalidInputError, match=needle):
        _load(tmp_path, content)


def test_truncated_gzip_names_the_file(tmp_path):
    """A cut-short gzip file is refused with its name."""
    whole = gzip.compress(json.dumps(_cache_dict([1.0, 2.0])).encode())
    (tmp_path / "c.json.gz").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(InvalidInputError, match="c.json.gz"):
        load_cache(tmp_path / "c.json.gz")


def test_space_index_past_64_bits_is_refused(tmp_path):
    """A cache whose mixed-radix index would overflow int64 is refused, not wrapped."""
    raw = {"tune_params": {f"p{k}": list(range(100)) for k in range(12)},
           "cache": {",".join(["0"] * 12): {**{f"p{k}": 0 for k in range(12)}, "time": 1.0}}}
    with pytest.raises(InvalidInputError, match="64-bit"):
        ReplaySpace(_load(tmp_path, raw))


@FILE_SETTINGS
@given(times=st.lists(TIMES, min_size=1, max_size=8))
def test_only_positive_finite_times_are_measurements(tmp_path, times):
    """Replaying every entry: ok records are exactly the positive finite times below Kernel
    Tuner's old failure marker, the best is their minimum, the marker's are runtime failures
    and the others are counted as bad times."""
    def number(t):
        if isinstance(t, bool) or not isinstance(t, (int, float)):
            return False
        try:
            return math.isfinite(float(t)) and t > 0
        except OverflowError:  # an integer past float range
            return False

    def good(t):
        return number(t) and t < LEGACY_FAILURE_MS
    cache = _load(tmp_path, _cache_dict(times))
    space = ReplaySpace(cache)
    result = tune(space, ReplayMeasurer(cache), strategy="grid", budget=len(times), seed=0)
    valid = [float(t) for t in times if good(t)]
    oks = [t.record.time_ms for t in result.trials if t.record.is_ok]
    assert sorted(oks) == sorted(valid)
    assert (result.best.record.time_ms if result.best else None) == (min(valid) if valid else None)
    strings = sum(isinstance(t, str) for t in times)
    legacy = sum(number(t) and not good(t) for t in times)
    assert cache.bad_times == len(times) - len(valid) - strings - legacy
    assert sum(t.record.status.value == "runtime_error" for t in result.trials) >= legacy


def test_kernel_tuners_old_failure_time_is_a_runtime_failure(tmp_path):
    """Older Kernel Tuner caches record a failed configuration as the time 1e20: a
    runtime failure on replay and on import, never a (very slow) measurement."""
    from search.db import TuningDB
    from search.db.importer import import_files
    cache = _load(tmp_path, _cache_dict([2.0, 1e20, 1.5]))
    recs = ReplayMeasurer(cache).measure([{"a": i} for i in range(3)])
    assert [r.status.value for r in recs] == ["ok", "runtime_error", "ok"]
    assert cache.bad_times == 0 and cache.recorded_optimum() == 1.5
    path = tmp_path / "old.json"
    path.write_text(json.dumps(_cache_dict([2.0, 1e20, 1.5])))
    with TuningDB(":memory:") as db:
        import_files(db, [path], device="old")
        got = sorted(m.record.status.value for w in db.workloads() for m in db.measurements(w))
    assert got == ["ok", "ok", "runtime_error"]


def test_negative_and_zero_times_are_invalid_entries(tmp_path):
    """The issue's cases: -3.6 ms and 0 ms are invalid, counted, and never the best."""
    cache = _load(tmp_path, _cache_dict([2.0, -3.6, 0, float("nan"), 1.5]))
    space = ReplaySpace(cache)
    assert cache.bad_times == 3 and space.describe()["statuses"] == {"ok": 2, "invalid": 3}
    recs = ReplayMeasurer(cache).measure([{"a": i} for i in range(5)])
    assert [r.status.value for r in recs] == ["ok", "invalid", "invalid", "invalid", "ok"]
    assert "-3.6" in recs[1].error


def test_estimates_survive_export_and_replay(tmp_path):
    """An analytic estimate exported to a cache file replays as an estimate."""
    recs = [MeasureRecord.ok({"a": 1}, time_ms=2.0, estimate=True),
            MeasureRecord.ok({"a": 2}, costs=(1.0, 1.2, float("nan")))]
    path = write_cache(tmp_path / "e.json", records_to_cache(recs, {"a": [1, 2]}))
    json.loads(path.read_text(), parse_constant=lambda c: pytest.fail(f"{c} in the file"))
    got = ReplayMeasurer(load_cache(path)).measure([{"a": 1}, {"a": 2}])
    assert [r.estimate for r in got] == [True, False] and got[1].costs == (1.0, 1.2)


# -- tuning logs ------------------------------------------------------------------------

HEADER = json.dumps({"schema": SCHEMA, "version": 1, "kind": "header"})


#: Any number a log may hold where a time belongs: negative, zero, NaN, inf, huge, a bool.
ANY_TIME = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 10 ** 30),
                     st.booleans(), st.none())
#: A record line of a config's time and repeats, well formed but for those numbers.
RECORD_LINE = st.builds(
    lambda i, status, t, costs: json.dumps({"kind": "record", "index": i, "record": {
        "config": {"a": i}, "status": status, "time_ms": t, "costs": costs}}),
    st.integers(0, 3), st.sampled_from(["ok", "compile_error", "invalid"]), ANY_TIME,
    st.lists(ANY_TIME, max_size=3))


@FILE_SETTINGS
@given(lines=st.lists(st.one_of(RECORD_LINE, JSON.map(json.dumps), st.text(max_size=20)),
                      max_size=4))
def test_any_log_lines_are_read_or_named(tmp_path, lines):
    """A header followed by any lines: a log, or one InvalidInputError naming the line; a
    record read as ok has a positive cost (inf: ok but untimed, never a best) and, if it
    has a time, a positive finite one, whatever numbers its line held."""
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join([HEADER, *lines]) + "\n")
    try:
        log = read_log(path)
    except InvalidInputError as exc:
        assert "run.jsonl" in str(exc) and "line" in str(exc)
        return
    for e in log.entries:
        if e.record.is_ok:
            t = e.record.time_ms
            assert e.record.cost > 0 and (t is None or (math.isfinite(t) and t > 0))


@pytest.mark.parametrize("record,status", [
    ({"config": {"a": 1}, "status": "ok", "time_ms": -1.0}, "invalid"),
    ({"config": {"a": 1}, "status": "ok", "time_ms": 0}, "invalid"),
    ({"config": {"a": 1}, "status": "ok", "time_ms": 1.0, "costs": [1.0, -2.0]}, "invalid"),
    ({"config": {"a": 1}, "status": "ok", "extra": {"surrogate_cost": float("nan")}}, "invalid"),
    ({"config": {"a": 1}, "status": "ok", "time_ms": 1.0, "costs": [1.0]}, "ok"),
])
def test_logged_bad_times_are_invalid_records(tmp_path, record, status):
    """A logged time that is not a positive finite number resumes as an invalid record."""
    path = tmp_path / "run.jsonl"
    path.write_text(HEADER + "\n" + json.dumps({"kind": "record", "index": 0, "record": record}) + "\n")
    (entry,) = read_log(path).entries
    assert entry.record.status.value == status


@pytest.mark.parametrize("line,needle", [
    ("[1]", "line 2: not a JSON object"),
    ('{"kind": "record", "index": -1, "record": {}}', "line 2: 'index'"),
    ('{"kind": "record", "index": 0, "record": {"config": 3}}', "line 2: 'record'"),
    ('{"kind": "record", "index": 0, "record": {"config": {}, "status": "great"}}', "line 2: status"),
    ("{" * 50_000, "line 2"),
])
def test_malformed_log_lines_name_the_line(tmp_path, line, needle):
    """Wrong shapes in a log are one line naming the file's line."""
    path = tmp_path / "run.jsonl"
    path.write_text(HEADER + "\n" + line + "\n")
    with pytest.raises(InvalidInputError, match=needle):
        read_log(path)


def test_log_with_a_list_header_is_refused(tmp_path):
    """A header that is not an object is 'not an iobound tuning log'."""
    (tmp_path / "run.jsonl").write_text("[]\n")
    with pytest.raises(InvalidInputError, match="not an iobound tuning log"):
        read_log(tmp_path / "run.jsonl")


def test_in_memory_cache_with_bad_time_is_invalid():
    """entry_status guards caches built in memory too (no file reader involved)."""
    m = ReplayMeasurer(KtCache(tune_params={"a": [1, 2]}, entries=[{"a": 1, "time": -1.0},
                                                                    {"a": 2, "time": 3.0}]))
    assert [r.status.value for r in m.measure([{"a": 1}, {"a": 2}])] == ["invalid", "ok"]
