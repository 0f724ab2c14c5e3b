"""Kernel Tuner cache files written: measurement records as a cache, and the file.

One record is one entry (:func:`cache_entry`), whoever writes the cache (``iobound tune
--export-cache``, ``iobound history export``): a failure is written as Kernel Tuner's
string for it, with our ``status`` beside it where the string does not say it
(:mod:`search.kt_cache`, "On export"), and beside a time of ``1e20`` ms or more, which
Kernel Tuner's old convention would take for a failure; an estimate is marked; the
record's timestamp and, at the top, the toolchain are kept, so importing the file into a
tuning database gives back the very measurements the run stored there (nothing new).

Examples
--------
>>> import os, tempfile
>>> from search.kt_cache import load_cache
>>> cache = records_to_cache([MeasureRecord.ok({"a": 1}, time_ms=2.0),
...                           MeasureRecord.failed({"a": 2}, "timeout")], {"a": [1, 2]})
>>> path = write_cache(os.path.join(tempfile.mkdtemp(), "c.json"), cache)
>>> [(e["a"], e["time"]) for e in load_cache(path).entries]
[(1, 2.0), (2, 'RuntimeFailedConfig')]
>>> cache_entry(MeasureRecord({"a": 1}, "ok", time_ms=2.0, timestamp=5.0), ["a"])
{'a': 1, 'time': 2.0, 'times': [2.0], 'timestamp': 5.0}
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from iobound.errors import SYSTEM_WRITE_ERRNOS, InvalidInputError, OutputWriteError
from iobound.wording import counted

from .kt_cache import FAILURE_STATUS, LEGACY_FAILURE_MS, STATUS_FAILURE, KtCache, cache_key
from .measure.base import MeasureRecord
from .option_checks import check_path, check_type, shown
from .outputs import write_atomic
from .kt_keys import is_param_value, value_key
from .records import as_logged
from .times import as_time

__all__ = ["cache_entry", "records_to_cache", "write_cache", "check_keeps_measurements"]


def cache_entry(rec: MeasureRecord, keys: Sequence[str], toolchain: str | None = None) -> dict:
    """The Kernel Tuner cache entry of one record (see module doc). Fields the entry had
    when it was imported from a cache (``rec.extra["kt"]``: ``compile_time``, its own
    ``timestamp``, ...) are written back; ``toolchain`` is written into the entry when
    given (one that differs from the cache's).

    Parameter values are written as JSON reads them back (numpy scalars as Python
    numbers, a tuple as a list: :func:`search.records.as_logged`); a config that lacks a
    parameter, or holds a value no parameter can take (:func:`search.kt_keys.is_param_value`),
    is an InvalidInputError naming both.

    >>> import numpy as np
    >>> cache_entry(MeasureRecord({"a": np.int64(2), "b": (1, 2)}, "ok", time_ms=1.0,
    ...                           timestamp=0.0), ["a", "b"])
    {'a': 2, 'b': [1, 2], 'time': 1.0, 'times': [1.0]}
    """
    check_type("rec", rec, MeasureRecord)
    entry = _config(rec.config, keys)
    if rec.is_ok:
        times = [c for c in rec.costs if as_time(c) is not None]
        entry.update(time=rec.time_ms, times=times or [rec.time_ms])
        if as_time(rec.time_ms) is not None and rec.time_ms >= LEGACY_FAILURE_MS:
            # else read back as Kernel Tuner's old failure time (search.kt_cache)
            entry["status"] = rec.status.value
    else:
        text = rec.error if rec.error in FAILURE_STATUS else STATUS_FAILURE[rec.status]
        entry["time"] = text
        if FAILURE_STATUS[text] != rec.status:
            entry["status"] = rec.status.value
    if rec.estimate:
        entry["estimate"] = True
    kt = rec.extra.get("kt")
    if isinstance(kt, dict):
        entry.update({k: v for k, v in kt.items() if k not in entry})
    if rec.timestamp and "timestamp" not in entry:  # a cache's own timestamp came in kt
        entry["timestamp"] = rec.timestamp
    if toolchain is not None:
        entry["toolchain"] = toolchain
    return entry


def _config(config: Mapping[str, Any], keys: Sequence[str]) -> dict:
    """``config``'s values of ``keys`` as a cache entry holds them (:func:`cache_entry`)."""
    missing = [k for k in keys if k not in config]
    if missing:
        raise InvalidInputError(f"configuration {shown(dict(config))} lacks the parameter "
                                f"{missing[0]!r} of the cache")
    out = as_logged({k: config[k] for k in keys})
    for k in keys:
        if not is_param_value(out[k]):
            raise InvalidInputError(f"configuration {shown(dict(config))}: parameter {k!r} "
                                    f"holds {shown(config[k])}, which a cache entry cannot "
                                    f"hold (a number, string or flat list)")
    return out


def records_to_cache(records: Iterable[MeasureRecord], tune_params: Mapping[str, Sequence[Any]], *,
                     device_name: str = "", kernel_name: str = "", problem_size: Any = None,
                     objective: str = "time", toolchain: str | None = None) -> KtCache:
    """A :class:`KtCache` holding measurement records (the last record of a config wins),
    made by ``toolchain`` when given (the cache's top-level ``toolchain``).

    Records with ``time_ms=None`` and status ``ok`` (e.g. the emulator, which does
    not time) are skipped: a cache entry needs a time or a failure string. An
    estimate's entry carries ``"estimate": true``, which :func:`load_cache` and the
    replay measurer keep, so a replayed estimate is never taken for a measurement.
    Configurations are told apart by their values as the tuning database and
    :func:`~search.kt_cache.load_cache` tell them (:func:`search.kt_keys.value_key`:
    ``{"a": 1}`` and ``{"a": 1.0}`` are one, the later record wins).

    >>> c = records_to_cache([MeasureRecord.ok({"a": 1}, time_ms=2.0),
    ...                       MeasureRecord.ok({"a": 1.0}, time_ms=3.0)], {"a": [1]})
    >>> [(e["a"], e["time"]) for e in c.entries]
    [(1.0, 3.0)]
    """
    check_type("tune_params", tune_params, Mapping)
    keys = list(tune_params)
    by_key: dict[tuple, dict] = {}
    for rec in records:
        check_type("a record", rec, MeasureRecord)
        if rec.is_ok and rec.time_ms is None:
            continue
        entry = cache_entry(rec, keys)
        by_key[tuple(value_key(entry[k]) for k in keys)] = entry  # the later record wins
    values = as_logged({k: list(_check_values(k, v)) for k, v in tune_params.items()})
    return KtCache(tune_params=values,
                   entries=list(by_key.values()), device_name=device_name,
                   kernel_name=kernel_name, problem_size=problem_size, objective=objective,
                   meta={} if toolchain is None else {"toolchain": toolchain})


def _check_values(name: str, values: Any) -> Any:
    """``values``, a parameter's value list (not a string or a mapping); else
    InvalidInputError naming the parameter."""
    if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__iter__"):
        raise InvalidInputError(f"tune_params[{name!r}] must be a list of values, "
                                f"got {shown(values)}")
    return values


def _keyed(entries: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> dict:
    """The entries by Kernel Tuner cache key; refused when two configurations share one
    (their values print alike: ``1`` and ``"1"``, or ``"a,b"``): the file would keep one.

    >>> _keyed([{"x": 1}, {"x": "1"}], ["x"])
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: configurations {"x": 1} and {"x": "1"} have one Kernel Tuner cache key '1' (their values joined by commas): a cache file cannot hold both
    """
    out: dict[str, Mapping[str, Any]] = {}
    by_value: dict[tuple, Mapping[str, Any]] = {}
    for e in entries:
        key = cache_key(e, keys)
        if key in out:
            a, b = ({k: d[k] for k in keys} for d in (out[key], e))
            raise InvalidInputError(f"configurations {json.dumps(a)} and {json.dumps(b)} have one "
                                    f"Kernel Tuner cache key {key!r} (their values joined by "
                                    f"commas): a cache file cannot hold both")
        same = tuple(value_key(e[k]) for k in keys)  # 1 and 1.0, True and 1: load_cache's test
        if same in by_value:
            a, b = ({k: d[k] for k in keys} for d in (by_value[same], e))
            raise InvalidInputError(f"configurations {json.dumps(a)} and {json.dumps(b)} are "
                                    f"one configuration to Kernel Tuner (equal values): a cache "
                                    f"file cannot hold both")
        out[key] = e
        by_value[same] = e
    return out


def _existing_cache(path: str | os.PathLike) -> KtCache | None:
    """The Kernel Tuner cache at ``path``; None where there is no file or it is no readable
    cache (not the business of the checks below: :func:`search.outputs.check_not_tuning_data`).

    >>> _existing_cache("/no/such/cache.json") is None
    True
    """
    from .kt_cache import load_cache

    try:
        return load_cache(path) if Path(path).is_file() else None
    except (InvalidInputError, OSError):
        return None


def check_keeps_measurements(path: str | os.PathLike, cache: KtCache) -> None:
    """Refuse to replace a Kernel Tuner cache file at ``path`` unless ``cache`` holds
    every one of its measurements (the same configuration with the same recorded time).

    Writing a run's export again over the export of its first part (a resumed run, a
    second ``history export`` of a workload that gained records) loses nothing and goes
    ahead; over someone's cache of another kernel, device or run it would destroy
    measurements, and is an InvalidInputError naming how many. A file that is no cache
    is not this check's business (:func:`search.outputs.check_not_tuning_data`).

    >>> import tempfile
    >>> p = write_cache(os.path.join(tempfile.mkdtemp(), "c.json"),
    ...                 KtCache({"a": [1, 2]}, [{"a": 1, "time": 1.0}]))
    >>> check_keeps_measurements(p, KtCache({"a": [1, 2]}, [{"a": 1, "time": 1.0},
    ...                                                     {"a": 2, "time": 3.0}]))
    >>> check_keeps_measurements(p, KtCache({"a": [1, 2]}, [{"a": 2, "time": 3.0}]))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: '...c.json' is a Kernel Tuner cache with 1 measurement this export does not hold (a=1); writing would lose it: give another file
    """
    old = _existing_cache(path)
    if old is None:
        return
    same_knobs = set(old.keys) == set(cache.keys)
    new = {cache_key(e, old.keys): e.get("time") for e in cache.entries} if same_knobs else {}
    absent = object()
    lost = [e for e in old.entries if new.get(cache_key(e, old.keys), absent) != e.get("time")]
    if lost:
        first = ",".join(f"{k}={lost[0][k]}" for k in old.keys)
        n = len(lost)
        raise InvalidInputError(
            f"{str(path)[:80]!r} is a Kernel Tuner cache with {counted(n, 'measurement')} "
            f"this export does not hold ({first[:60]}); writing would lose "
            f"{'them' if n != 1 else 'it'}: give another file")


def check_same_workload(path: str | os.PathLike, meta: Mapping[str, Any]) -> None:
    """Refuse, before a run measures anything, a cache export onto a cache of another
    device, kernel or problem than ``meta`` (the run's ``device_name``, ``kernel_name`` and
    ``problem_size``, as :func:`search.session.storage.cache_meta` gives them): its times are
    not this run's, so the export could not hold them (:func:`check_keeps_measurements`
    would refuse it only once the run is over). A layer's name is no part of its problem.
    A file that is no cache, or holds no measurement, is not this check's business.

    >>> import tempfile
    >>> meta = {"device_name": "V100", "kernel_name": "k", "problem_size": [64]}
    >>> p = write_cache(os.path.join(tempfile.mkdtemp(), "c.json"),
    ...                 KtCache({"a": [1, 2]}, [{"a": 1, "time": 1.0}], **meta))
    >>> check_same_workload(p, meta)  # a run of the same workload may hold it all
    >>> check_same_workload(p, {**meta, "device_name": "A100"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: ...of another device ('V100'; this run: 'A100'): ...
    """
    old = _existing_cache(path)
    if old is None or not old.entries:
        return
    theirs = (old.device_name, old.kernel_name, _unnamed(old.problem_size))
    ours = (meta["device_name"], meta["kernel_name"], _unnamed(meta["problem_size"]))
    for what, a, b in zip(("device", "kernel", "problem"), theirs, ours):
        if a != b:
            a, b = _first_difference(a, b)
            raise InvalidInputError(
                f"{str(path)[:80]!r} is a Kernel Tuner cache of another {what} "
                f"({a}; this run: {b}): this run's export would replace its "
                f"{counted(len(old.entries), 'measurement')}: give another file")


def _first_difference(a: Any, b: Any) -> tuple[str, str]:
    """Two problems shown where they differ: two layers by their first differing field.

    >>> _first_difference({"c_in": 4, "padding": [0, 0]}, {"c_in": 4, "padding": [1, 1]})
    ('padding [0, 0]', 'padding [1, 1]')
    """
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*b, *(k for k in a if k not in b)]:  # in the layer's own order
            if a.get(key) != b.get(key):
                name = str(key)[:40]
                return f"{name} {shown(a.get(key))}", f"{name} {shown(b.get(key))}"
    return shown(a), shown(b)


def _unnamed(problem: Any) -> Any:
    """A layer's problem without its name (one shape, many names); others as they are."""
    if isinstance(problem, dict):
        return {k: v for k, v in problem.items() if k != "name"}
    return problem


def write_cache(path: str | os.PathLike, cache: KtCache) -> Path:
    r"""Write ``cache`` as a Kernel Tuner cache file (gzipped when ``path`` ends in .gz),
    atomically (:func:`search.outputs.write_atomic`).

    ``cache`` is the last key and the file ends with ``}\n}``: Kernel Tuner's
    ``read_cache`` takes any other ending for a cache left open and appends the closing
    braces itself (a file with other fields after ``cache`` is then not JSON).

    >>> import tempfile
    >>> p = write_cache(os.path.join(tempfile.mkdtemp(), "c.json"), KtCache(
    ...     {"a": [1]}, [{"a": 1, "time": 1.0}], meta={"toolchain": "nvcc"}))
    >>> text = p.read_text(); list(json.loads(text))[-1], text[-3:]
    ('cache', '}\n}')
    >>> write_cache(None, KtCache({"a": [1]}, []))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: path must be a path (str or os.PathLike), got None
    """
    path = Path(check_path("path", path))
    check_type("cache", cache, KtCache)
    check_keeps_measurements(path, cache)
    keys = list(cache.keys)
    raw = {
        "device_name": cache.device_name, "kernel_name": cache.kernel_name,
        "problem_size": cache.problem_size, "tune_params_keys": keys,
        "tune_params": {k: list(v) for k, v in cache.tune_params.items()},
        "objective": cache.objective,
    }
    raw.update((k, v) for k, v in cache.meta.items() if k not in raw and k != "cache")
    raw["cache"] = _keyed(cache.entries, keys)  # last: see above
    try:  # a NaN would make it unreadable JSON
        data = (json.dumps(raw, allow_nan=False)[:-1] + "\n}").encode()
    except ValueError:
        raise InvalidInputError(f"cannot write the cache file {str(path)!r}: it holds NaN or "
                                f"Infinity, which JSON cannot represent") from None
    try:  # whole or not at all: an existing file is never left cut off
        write_atomic(path, gzip.compress(data) if path.suffix == ".gz" else data)
    except OSError as exc:  # a full disk is no bad input (exit 1); a read-only folder is
        error = OutputWriteError if exc.errno in SYSTEM_WRITE_ERRNOS else InvalidInputError
        raise error(f"cannot write the cache file {str(path)!r}: {exc.strerror or exc}") from None
    return path
