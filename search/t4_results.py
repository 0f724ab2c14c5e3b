"""T4 results files (Kernel Tuner's ``store_output_file``) read as Kernel Tuner caches.

Kernel Tuner writes, beside or instead of its cache, a results file in the T4
auto-tuning output format: ``{"schema_version", "results": [{"configuration": {...},
"invalidity": ..., "measurements": [{"name", "value", "unit"}, ...], "objectives", ...}]}``.
It holds no value lists, device, kernel name or problem size; :func:`as_cache_dict` turns
it into the dict a cache file holds (each parameter's values as the results show them,
sorted; the device and kernel empty; each result's ``timestamp`` kept), so replay,
import and the benchmarks read both alike. The device is in the T4 *metadata* file Kernel Tuner writes beside it
(``store_metadata_file``: nvidia-smi's or rocm-smi's report of the machine's GPUs): when
``NAME-results.json[.gz]`` has a ``NAME-metadata.json[.gz]`` (or ``_results`` /
``_metadata``) whose GPUs all have one name, :func:`metadata_device` gives it; else the
device stays empty, and ``history import`` takes ``--device`` or the file's name.

=================  ===========================================================
T4 ``invalidity``  Kernel Tuner cache ``time`` (and our ``status``)
=================  ===========================================================
``correct``        the ``time`` measurement in ms (its ``unit``: s, ms, us or ns;
                   ``""`` or none is ms, as Kernel Tuner writes it); ``times.runtimes``,
                   the timed launches, as ``times``
``compile``        ``CompilationFailedConfig``
``runtime``        ``RuntimeFailedConfig``
``timeout``        ``RuntimeFailedConfig``, status ``timeout``
``correctness``    ``RuntimeFailedConfig``, status ``wrong_result``
``constraints``    ``InvalidConfig``
=================  ===========================================================

Configurations are told apart by their values (``1`` and ``"1"`` are two, as in a
replayed space: :func:`search.kt_keys.value_key`), not by how they print.

Examples
--------
>>> t4 = {"schema_version": "1.0.0", "results": [
...     {"configuration": {"bx": 32}, "invalidity": "correct",
...      "measurements": [{"name": "time", "value": 1.5, "unit": "ms"}]},
...     {"configuration": {"bx": 16}, "invalidity": "compile", "measurements": []}]}
>>> is_t4_results(t4)
True
>>> d = as_cache_dict(t4, "f.json")
>>> d["tune_params"], d["cache"]["16"]["time"], d["cache"]["32"]["time"]
({'bx': [16, 32]}, 'CompilationFailedConfig', 1.5)
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from iobound.errors import InvalidInputError
from kernels.status import Status

from .kt_keys import STATUS_FAILURE, cache_key, is_param_value, value_key

__all__ = ["is_t4_results", "as_cache_dict", "T4_FAILURE", "T4_STATUS", "TIME_UNITS_MS",
           "metadata_file", "metadata_device", "query_device"]

#: T4 ``invalidity`` of a configuration that failed -> Kernel Tuner's failure string.
T4_FAILURE = {"compile": STATUS_FAILURE[Status.COMPILE_ERROR],
              "runtime": STATUS_FAILURE[Status.RUNTIME_ERROR],
              "constraints": STATUS_FAILURE[Status.INVALID]}
#: T4 ``invalidity`` Kernel Tuner has no failure string for -> our status: the entry is
#: ``RuntimeFailedConfig`` with the status beside it, as our export writes it
#: (:mod:`search.kt_cache`, "On export").
T4_STATUS = {"timeout": Status.TIMEOUT, "correctness": Status.WRONG_RESULT}
#: A time measurement's ``unit`` -> its factor to ms (Kernel Tuner writes "ms", or "").
TIME_UNITS_MS = {"s": 1e3, "ms": 1.0, "": 1.0, "us": 1e-3, "ns": 1e-6}


def is_t4_results(raw: Any) -> bool:
    """Whether ``raw`` (a file's JSON) is a T4 results file rather than a cache.

    >>> is_t4_results({"results": []}), is_t4_results({"results": [], "cache": {}})
    (True, False)
    """
    return isinstance(raw, dict) and isinstance(raw.get("results"), list) and "cache" not in raw


def _time(result: dict, objective: str, where: str, n: int) -> dict:
    """A result's Kernel Tuner ``time`` (the measured ``time`` in ms, or its failure
    string) and, where the string does not say it, our ``status`` (module table)."""
    bad = result.get("invalidity", "correct")
    if bad != "correct":
        if isinstance(bad, str) and bad in T4_STATUS:
            return {"time": STATUS_FAILURE[T4_STATUS[bad]], "status": T4_STATUS[bad].value}
        if not isinstance(bad, str) or bad not in T4_FAILURE:
            raise InvalidInputError(f"{where}: result {n} has invalidity {str(bad)[:40]!r}; "
                                    f"expected correct, {', '.join([*T4_FAILURE, *T4_STATUS])}")
        return {"time": T4_FAILURE[bad]}
    ms = result.get("measurements") or []
    if not isinstance(ms, list):
        raise InvalidInputError(f"{where}: result {n} has 'measurements' that is not a list")
    measured = {m["name"]: m for m in ms if isinstance(m, dict) and isinstance(m.get("name"), str)}
    if "time" not in measured:
        raise InvalidInputError(f"{where}: result {n} has no 'time' measurement (objective "
                                f"{objective!r}); replay and history need times")
    value, unit = measured["time"].get("value"), measured["time"].get("unit", "")
    if not isinstance(unit, str) or unit not in TIME_UNITS_MS:
        raise InvalidInputError(f"{where}: result {n} has a time in unit {str(unit)[:40]!r}; "
                                f"expected one of {', '.join(repr(u) for u in TIME_UNITS_MS)}")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and unit not in ("ms", ""):
        try:  # anything else: load_cache classifies it
            value = value * TIME_UNITS_MS[unit]
        except OverflowError:  # an integer past float range: no time either
            value = float("inf")
    out = {"time": value}
    timings = result.get("times")
    runtimes = timings.get("runtimes") if isinstance(timings, dict) else None
    if isinstance(runtimes, list) and runtimes:  # the timed launches, in the time's unit
        out["times"] = [_in_ms(r, TIME_UNITS_MS[unit]) for r in runtimes]
    return out


def _in_ms(value: Any, factor: float) -> Any:
    """A number times ``factor`` (inf past float range); anything else as it is (load_cache
    drops a repeat that is not a time)."""
    if factor == 1.0 or isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    try:
        return value * factor
    except OverflowError:
        return float("inf")


def _values(seen: list) -> list:
    try:
        return sorted(seen)
    except TypeError:  # values of mixed types: the order the results show them
        return seen


def _timestamp(result: dict, where: str, n: int):
    """A result's ``timestamp`` (None when it has none): a text or a number, else
    InvalidInputError naming the result."""
    stamp = result.get("timestamp")
    if stamp is not None and (isinstance(stamp, bool) or not isinstance(stamp, (str, int, float))):
        raise InvalidInputError(f"{where}: result {n} has a timestamp that is no text or "
                                f"number: {json.dumps(stamp)[:60]}")
    return stamp


def as_cache_dict(raw: dict, where: str) -> dict:
    """The Kernel Tuner cache dict of the T4 results ``raw`` (see the module doc); the first
    result of a configuration that appears twice is kept. A configuration's cache key is
    Kernel Tuner's (its values joined by commas), or its values as a JSON list when an
    earlier configuration's key prints alike (``{"a": 1}``, ``{"a": "1"}``: keys ``1``
    and ``["1"]``); :func:`search.kt_cache.load_cache` checks no T4 key.

    >>> r = [{"configuration": {"a": v}, "invalidity": "constraints"} for v in (1, "1", 1.0)]
    >>> list(as_cache_dict({"results": r}, "f.json")["cache"])
    ['1', '["1"]']
    >>> as_cache_dict({}, "f.json")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: f.json: not a T4 results file (no 'results' list)
    """
    if not isinstance(raw, dict) or not isinstance(raw.get("results"), list):
        raise InvalidInputError(f"{where}: not a T4 results file (no 'results' list)")
    keys: list[str] = []
    seen: dict[str, list] = {}
    cache: dict[tuple, dict] = {}
    objective = "time"
    for n, result in enumerate(raw["results"]):
        config = result.get("configuration") if isinstance(result, dict) else None
        if not isinstance(config, dict) or not config:
            raise InvalidInputError(f"{where}: result {n} has no 'configuration' object")
        if not keys:
            keys = list(config)
            seen = {k: [] for k in keys}
            objectives = result.get("objectives") or ["time"]
            if not isinstance(objectives, list):
                raise InvalidInputError(f"{where}: result {n} has 'objectives' that is not a list")
            objective = str(objectives[0])
        if set(config) != set(keys):
            raise InvalidInputError(f"{where}: result {n} has parameters {sorted(config)}; the "
                                    f"first has {sorted(keys)}")
        for k in keys:
            if config[k] not in seen[k]:
                seen[k].append(config[k])
        entry = {**{k: config[k] for k in keys}, **_time(result, objective, where, n)}
        stamp = _timestamp(result, where, n)
        if stamp is not None:  # when it was measured (a cache entry's)
            entry["timestamp"] = stamp
        # 1 and 1.0 one configuration, 1 and "1" two; a value that is no parameter value
        # (load_cache refuses it) by its JSON
        same = tuple(value_key(v) if is_param_value(v) else json.dumps(v, sort_keys=True)
                     for v in (config[k] for k in keys))
        cache.setdefault(same, entry)
    out: dict[str, dict] = {}
    for e in cache.values():
        key = cache_key(e, keys)  # Kernel Tuner's
        if key in out:  # an earlier configuration's prints alike
            key = json.dumps([e[k] for k in keys])
        while key in out:  # so does the JSON (a string value spelling it): keep both
            key += " "
        out[key] = e
    if not keys:
        raise InvalidInputError(f"{where}: a T4 results file with no results")
    return {"device_name": "", "kernel_name": "", "problem_size": None, "objective": objective,
            "tune_params_keys": keys, "tune_params": {k: _values(seen[k]) for k in keys},
            "cache": out,
            "t4_schema_version": raw.get("schema_version")}


def metadata_file(results_path: str | os.PathLike) -> Path | None:
    """The T4 metadata file beside a results file (module doc), None when there is none.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> (d / "a6000-metadata.json").write_text("{}") and None
    >>> metadata_file(d / "a6000-results.json.gz").name, metadata_file(d / "other.json")
    ('a6000-metadata.json', None)
    """
    path = Path(results_path)
    name = path.name
    for end in (".gz", ".json"):
        name = name[: -len(end)] if name.endswith(end) else name
    for sep in ("-", "_"):
        if name.endswith(f"{sep}results"):
            stem = name[: -len("results")] + "metadata"
            for end in (".json", ".json.gz"):
                candidate = path.with_name(stem + end)
                if candidate.is_file():
                    return candidate
    return None


def query_device(query: Any) -> str:
    """The GPU name of a T4 metadata ``device_query`` (nvidia-smi's XML as JSON:
    ``nvidia_smi_log.gpu[].product_name``; rocm-smi's JSON: each ``cardN``'s ``Card
    series`` or ``Device Name``), when every GPU listed has one and the same name; ``""``
    when there is none or they differ (which one ran is not recorded).

    >>> query_device({"nvidia_smi_log": {"gpu": {"product_name": "NVIDIA RTX A6000"}}})
    'NVIDIA RTX A6000'
    >>> query_device({"card0": {"Card series": "AMD Instinct MI250X"},
    ...               "card1": {"Card Series": "AMD Instinct MI250X"}})
    'AMD Instinct MI250X'
    >>> query_device({"nvidia_smi_log": {"gpu": [{"product_name": "A"}, {"product_name": "B"}]}})
    ''

    Kernel Tuner 1.x nests each tool's output under its name (``{"nvidia-smi": {...},
    "rocm-smi": {...}}``); the GPUs of both count:

    >>> query_device({"nvidia-smi": {"nvidia_smi_log": {"gpu": {"product_name": "NVIDIA A100"}}}})
    'NVIDIA A100'
    """
    names = _query_names(query)
    if names and all(isinstance(n, str) and n.strip() for n in names) and len(set(names)) == 1:
        return names[0].strip()
    return ""


def _query_names(query: Any) -> list:
    """Every GPU's name in a ``device_query`` (None where a GPU lists none)."""
    if not isinstance(query, dict):
        return []
    tools = [query[k] for k in ("nvidia-smi", "rocm-smi") if k in query]
    if tools:
        return [n for tool in tools for n in _query_names(tool)]
    log = query.get("nvidia_smi_log")
    if isinstance(log, dict):
        gpus = log.get("gpu")
        gpus = gpus if isinstance(gpus, list) else [gpus]
        return [g.get("product_name") if isinstance(g, dict) else None for g in gpus]
    names = []
    for key, card in query.items():
        if str(key).lower().startswith("card") and isinstance(card, dict):
            fields = {str(k).lower(): v for k, v in card.items()}
            names.append(fields.get("card series") or fields.get("device name"))
    return names


def metadata_device(results_path: str | os.PathLike) -> str:
    """The device of a results file's T4 metadata file (:func:`metadata_file`,
    :func:`query_device`); ``""`` when there is none, it cannot be read, or it names no
    single GPU (the results are then stored as a file naming no device).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> query = {"nvidia_smi_log": {"gpu": {"product_name": "NVIDIA RTX A6000"}}}
    >>> meta = {"metadata": {"environment": {"device_query": query}}}
    >>> _ = (d / "a6000-metadata.json").write_text(json.dumps(meta))
    >>> metadata_device(d / "a6000-results.json"), metadata_device(d / "other.json")
    ('NVIDIA RTX A6000', '')
    """
    from .kt_json import read_tuning_json
    path = metadata_file(results_path)
    if path is None:
        return ""
    try:
        raw = read_tuning_json(path)
    except InvalidInputError:
        return ""
    meta = raw.get("metadata") if isinstance(raw, dict) else None
    env = meta.get("environment") if isinstance(meta, dict) else None
    return query_device(env.get("device_query")) if isinstance(env, dict) else ""
