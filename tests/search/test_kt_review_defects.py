"""Regressions from a review of reading, writing and replaying Kernel Tuner caches and
T4 results files (one test group per finding)."""

from __future__ import annotations

import gzip
import json

import pytest

from iobound import limits
from iobound.errors import InvalidInputError
from search.cli.main import main
from search.db import TuningDB
from search.db.importer import import_files
from search.kt_cache import KtCache, entry_status, load_cache
from search.kt_cache_write import write_cache
from search.kt_json import read_tuning_json

GOOD = {f"{a},{b}": {"a": a, "b": b, "time": float(a * 10 + b), "times": [float(a * 10 + b)]}
        for a in (1, 2, 3) for b in (1, 2)}


def _cache(entries, **kw):
    return {"device_name": "GPU X", "kernel_name": "k", "problem_size": [64, 64],
            "tune_params_keys": ["a", "b"], "tune_params": {"a": [1, 2, 3], "b": [1, 2]},
            "objective": "time", "cache": entries, **kw}


def _t4(results):
    return {"schema_version": "1.0.0", "results": [
        {"configuration": cfg, "invalidity": inv, "correctness": 1, "times": {},
         "objectives": ["time"],
         "measurements": [] if t is None else [{"name": "time", "value": t, **unit}]}
        for cfg, inv, t, unit in results]}


def _write(path, raw):
    path.write_text(json.dumps(raw))
    return path


# 1. our cache files: "cache" last, so Kernel Tuner's read_cache takes them as closed
@pytest.mark.parametrize("entries", [[{"a": 1, "time": 1.0, "times": [1.0]}], []])
def test_written_cache_is_read_by_kernel_tuner(tmp_path, entries):
    util = pytest.importorskip("kernel_tuner.util")
    path = write_cache(tmp_path / "c.json", KtCache({"a": [1]}, entries,
                                                    meta={"toolchain": "nvcc 12"}))
    data = util.read_cache(str(path), open_cache=False)
    assert list(data)[-1] == "cache" and len(data["cache"]) == len(entries)
    assert data["toolchain"] == "nvcc 12"
    assert load_cache(path).meta["toolchain"] == "nvcc 12"


# 2. T4: configurations whose values print alike stay two
def test_t4_configurations_printing_alike_are_kept_apart(tmp_path):
    path = _write(tmp_path / "x-results.json", _t4([({"a": 1}, "correct", 5.0, {}),
                                                    ({"a": "1"}, "correct", 1.0, {}),
                                                    ({"a": 1.0}, "correct", 9.0, {})]))
    cache = load_cache(path)
    assert [(e["a"], e["time"]) for e in cache.entries] == [(1, 5.0), ("1", 1.0)]
    assert cache.recorded_optimum() == 1.0


# 3. T4: a time's unit converted to ms; an unknown unit refused
@pytest.mark.parametrize("unit, ms", [({"unit": "s"}, 2000.0), ({"unit": "ms"}, 2.0),
                                      ({"unit": ""}, 2.0), ({}, 2.0), ({"unit": "us"}, 0.002),
                                      ({"unit": "ns"}, 2e-6)])
def test_t4_time_unit_is_converted_to_ms(tmp_path, unit, ms):
    path = _write(tmp_path / "u-results.json", _t4([({"a": 1}, "correct", 2.0, unit)]))
    assert load_cache(path).entries[0]["time"] == pytest.approx(ms)


def test_t4_unknown_time_unit_is_refused(tmp_path):
    path = _write(tmp_path / "u-results.json", _t4([({"a": 1}, "correct", 2.0, {"unit": "min"})]))
    with pytest.raises(InvalidInputError, match="result 0 has a time in unit 'min'"):
        load_cache(path)


# 4. T4: invalidity timeout / correctness read as failed runs with their statuses
def test_t4_timeout_and_correctness_keep_their_statuses(tmp_path):
    path = _write(tmp_path / "v-results.json", _t4([
        ({"a": 1}, "correct", 2.0, {}), ({"a": 2}, "timeout", None, {}),
        ({"a": 3}, "correctness", 1.0, {"unit": "ms"})]))
    assert [entry_status(e).value for e in load_cache(path).entries] == [
        "ok", "timeout", "wrong_result"]
    with TuningDB(":memory:") as db:
        (imported,) = import_files(db, [path], device="GPU T")
        assert imported.added == 3


# 5. a key must name its entry's values; no configuration twice
def test_key_naming_other_values_is_refused(tmp_path):
    entries = {k: v for k, v in GOOD.items() if k != "3,2"}
    entries["1,1"] = {"a": 3, "b": 2, "time": 0.5}
    path = _write(tmp_path / "km.json", _cache(entries))
    with pytest.raises(InvalidInputError, match=r"cache entry '1,1' holds the parameter values "
                                                r'\{"a": 3, "b": 2\}, which the key'):
        load_cache(path)


def test_key_of_a_float32_value_printed_short_is_accepted(tmp_path):
    raw = {"tune_params_keys": ["x", "y"], "tune_params": {"x": [0.10000000149011612, 1.0],
                                                           "y": ["0.1"]},
           "cache": {"0.1,0.1": {"x": 0.10000000149011612, "y": "0.1", "time": 1.0},
                     "1,0.1": {"x": 1.0, "y": "0.1", "time": 2.0}}}
    assert len(load_cache(_write(tmp_path / "f.json", raw)).entries) == 2
    raw["cache"]["0.2,0.1"] = raw["cache"].pop("0.1,0.1")
    with pytest.raises(InvalidInputError, match="cache entry '0.2,0.1'"):
        load_cache(_write(tmp_path / "f.json", raw))


def test_configuration_recorded_twice_is_refused_by_import_too(tmp_path):
    """1 and 1.0 are one configuration (as the replayed space compares values)."""
    entries = {**GOOD, "1.0,1": {"a": 1.0, "b": 1, "time": 0.5}}
    path = _write(tmp_path / "d.json", _cache(entries))
    with pytest.raises(InvalidInputError, match=r"records the configuration .* twice "
                                                r"\(cache keys '1,1' and '1.0,1'\)"):
        load_cache(path)
    with TuningDB(":memory:") as db, pytest.raises(InvalidInputError, match="twice"):
        import_files(db, [path])


# 6. replay refuses a problem size holding NaN before the run
def test_replay_refuses_nan_problem_size_up_front(capsys, tmp_path):
    path = _write(tmp_path / "nan.json", _cache(GOOD, problem_size=[float("nan"), 1]))
    log = tmp_path / "run.jsonl"
    code = main(["tune", "--measure", f"replay:{path}", "--budget", "4", "--log", str(log),
                 "--history", str(tmp_path / "h.db")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "problem_size holds NaN" in err[0], err
    assert not log.exists()


# 7. a file unpacking past the limit, or past memory: one line
def test_gzip_past_the_text_limit_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(limits, "TUNING_FILE_CHARS", 4096)
    small = tmp_path / "small.json.gz"
    small.write_bytes(gzip.compress(json.dumps(_cache(GOOD)).encode()))
    assert len(read_tuning_json(small)["cache"]) == 6
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(json.dumps(_cache(GOOD, pad="a" * 8192)).encode()))
    with pytest.raises(InvalidInputError, match="is too large: more than 4096 bytes"):
        read_tuning_json(bomb)
    code = main(["history", "import", str(bomb), "--db", str(tmp_path / "t.db")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "too large" in err[0], err


def test_compression_is_told_by_the_bytes_not_the_name(tmp_path):
    """A gzipped cache named .json reads (it was 'not a Kernel Tuner cache file:
    UnicodeDecodeError'), and a plain one named .json.gz too, as logs always did."""
    text = json.dumps(_cache(GOOD)).encode()
    packed, plain = tmp_path / "packed.json", tmp_path / "plain.json.gz"
    packed.write_bytes(gzip.compress(text))
    plain.write_bytes(text)
    assert read_tuning_json(packed) == read_tuning_json(plain) == json.loads(text)


def test_out_of_memory_reading_is_one_error(tmp_path, monkeypatch):
    import search.kt_json as kt_json

    def no_memory(path, what):
        raise MemoryError

    monkeypatch.setattr(kt_json, "read_capped", no_memory)
    with pytest.raises(InvalidInputError, match="too large to read into memory"):
        read_tuning_json(_write(tmp_path / "c.json", _cache(GOOD)))
