"""Kernel Tuner cache files: the format and reading it (writing: :mod:`search.kt_cache_write`).

Format (Kernel Tuner, also ``/work/shared/data/tuning-spaces/README.md``): a JSON
object, optionally gzipped, ``{device_name, kernel_name, problem_size,
tune_params_keys, tune_params, objective, cache}`` where ``cache`` maps a key (the
configuration's values joined by commas, in ``tune_params_keys`` order) to an entry
holding the parameters, ``time`` (ms, or a failure string), ``times`` and more.

Failure strings and our statuses:

===========================  ========================
Kernel Tuner ``time``        :class:`~kernels.status.Status`
===========================  ========================
``InvalidConfig``            ``INVALID``
``CompilationFailedConfig``  ``COMPILE_ERROR``
``RuntimeFailedConfig``      ``RUNTIME_ERROR``
``1e20`` (or more)           ``RUNTIME_ERROR`` (``OK`` with our ``status`` ``ok``)
any other string             ``RUNTIME_ERROR``
===========================  ========================

Kernel Tuner 1.x writes a failure's string in ``__error__`` and no ``time``; as its
``read_cache`` does, any field (not a parameter) holding a failure string (or
``ErrorConfig``) marks the entry failed, read as if ``time`` held it.

Kernel Tuner before its failure strings stored a failed compile or run as the time
``1e20`` (:data:`LEGACY_FAILURE_MS`); no kernel takes that long (3e9 years), so such an
entry is read as ``RuntimeFailedConfig``, never as a measurement; unless the entry says
``"status": "ok"``, which our export writes beside an ``ok`` record's time of ``1e20``
or more (a tuning log or database may hold one: any positive finite time is a
measurement there), so that it comes back as the measurement it was.

On export, ``TIMEOUT`` and ``WRONG_RESULT`` (which Kernel Tuner has no string for)
are written as ``RuntimeFailedConfig``; the entry also keeps our ``status`` (its
string value) so that re-importing our own files restores it exactly.

Examples
--------
>>> cache = KtCache(tune_params={"a": [1, 2], "b": [0]}, entries=[
...     {"a": 1, "b": 0, "time": 2.5, "times": [2.5]},
...     {"a": 2, "b": 0, "time": "RuntimeFailedConfig"}])
>>> cache_key({"a": 2, "b": 0}, cache.keys)
'2,0'
>>> [entry_status(e).value for e in cache.entries]
['ok', 'runtime_error']
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from iobound.errors import InvalidInputError
from kernels.status import Status

from .file_names import file_stem
from .option_checks import check_type, shown
from .times import as_time, bad_time_reason
from .kt_json import read_tuning_json
from .kt_keys import (FAILURE_STATUS, STATUS_FAILURE, cache_key, is_param_value, key_names,
                      value_key)
from .t4_results import as_cache_dict, is_t4_results, metadata_device

__all__ = ["KtCache", "NoMeasurementsError", "LEGACY_FAILURE_MS", "named", "load_cache",
           "cache_key", "value_key", "key_names",
           "entry_status", "recorded_time", "is_param_value", "FAILURE_STATUS", "STATUS_FAILURE"]

#: The time (ms) older Kernel Tuner versions recorded for a configuration that failed.
LEGACY_FAILURE_MS = 1e20
_FAILURE_BY_VALUE = {s.value: s for s in STATUS_FAILURE}


class NoMeasurementsError(InvalidInputError):
    """A file of the tuning formats that describes and holds no measurements: a T4
    metadata file (the machine and software) or a T1 description (parameters and
    restrictions). Given by name it is bad input; in a folder being imported it is
    passed over (:func:`search.db.importer.read_paths`). ``what`` says which file it is
    ("a T1 tuning-problem description (...)")."""

    def __init__(self, message: str, what: str) -> None:
        super().__init__(message)
        self.what = what


@dataclass(frozen=True)
class KtCache:
    """The contents of a Kernel Tuner cache file.

    ``entries`` keeps the file's order; each entry is the file's dict (parameters,
    ``time``, ``times``, ...). ``tune_params`` maps each parameter to its value list,
    in ``tune_params_keys`` order.

    Built directly (as :func:`load_cache` and the examples build it), it is checked as a
    file is: ``tune_params`` a mapping naming at least one parameter, each entry a mapping
    holding every parameter, and no configuration recorded twice (values compared by
    :func:`value_key`); else an InvalidInputError.

    >>> KtCache({"a": [1]}, [{"b": 1, "time": 1.0}])
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: cache (in memory): entry 0 lacks the parameter 'a'
    """

    tune_params: dict
    entries: list
    device_name: str = ""
    kernel_name: str = ""
    problem_size: Any = None
    objective: str = "time"
    path: str = ""
    meta: dict = field(default_factory=dict)  # other top-level fields; written back
    bad_times: int = 0  # entries whose time was not a positive finite number (now invalid)

    def __post_init__(self) -> None:
        where = f"cache {self.path or '(in memory)'}"
        if not isinstance(self.tune_params, Mapping) or not self.tune_params:
            raise InvalidInputError(f"{where}: tune_params must be a mapping naming at least "
                                    f"one parameter, got {shown(self.tune_params)}")
        for name, values in self.tune_params.items():
            if not isinstance(name, str) or isinstance(values, (str, bytes, Mapping)) \
                    or not hasattr(values, "__iter__"):
                raise InvalidInputError(f"{where}: tune_params must map parameter names to "
                                        f"value lists, got {shown(name)}: {shown(values)}")
        check_type(f"{where}: entries", self.entries, list)
        keys = list(self.tune_params)
        for n, entry in enumerate(self.entries):
            if not isinstance(entry, Mapping):
                raise InvalidInputError(f"{where}: entry {n} is not a mapping, got {shown(entry)}")
            missing = [k for k in keys if k not in entry]
            if missing:
                raise InvalidInputError(f"{where}: entry {n} lacks the parameter {missing[0]!r}")
        _check_once([str(n) for n in range(len(self.entries))], self.entries, keys, where)

    @property
    def keys(self) -> tuple[str, ...]:
        """The parameter names (``tune_params_keys``)."""
        return tuple(self.tune_params)

    @property
    def device(self) -> str:
        """The device the file's records belong to: ``device_name``, else the file's name
        without its endings (as ``history import`` stores a file that names no device, so
        a tuning run on the file and its import agree); ``""`` for an unnamed cache held
        only in memory.

        >>> KtCache({"a": [1]}, [], path="/x/conv_A100.json.gz").device
        'conv_A100'
        >>> KtCache({"a": [1]}, [], device_name="A100", path="/x/y.json").device
        'A100'
        """
        return named(self.device_name) or (file_stem(self.path) if self.path else "")

    @property
    def file_kind(self) -> str:
        """``"t4-results"`` for a T4 results file read as a cache, else ``"kt-cache"``."""
        return "t4-results" if "t4_schema_version" in self.meta else "kt-cache"

    def __len__(self) -> int:
        return len(self.entries)

    def recorded_optimum(self) -> float | None:
        """The best (smallest) recorded time of the file in ms; ``None`` if nothing ran.

        >>> KtCache({"a": [1, 2]}, [{"a": 1, "time": 2.5}, {"a": 2, "time": "InvalidConfig"}]).recorded_optimum()
        2.5
        """
        times = [t for t in map(recorded_time, self.entries) if t is not None]
        return min(times) if times else None


def named(name: str | None) -> str:
    """``name``, or ``""`` when it is blank: a file whose device name is only spaces names
    no device (its records go under ``--device`` or the file's name).

    >>> named("A100"), named("  "), named(None)
    ('A100', '', '')
    """
    check_type("a device name", name, (str, type(None)))
    return name if name and name.strip() else ""


def recorded_time(entry: Mapping[str, Any]) -> float | None:
    """The recorded ``time`` of a cache entry in ms; ``None`` for a failure (a string or a
    missing, non-positive, non-finite or non-numeric time, or Kernel Tuner's old failure
    time: never a measurement), by :func:`entry_status`'s rule.

    >>> recorded_time({"time": 2.5}), recorded_time({"time": -3.6}), recorded_time({"time": 1e20})
    (2.5, None, None)
    """
    return as_time(entry.get("time")) if entry_status(entry) is Status.OK else None


def entry_status(entry: Mapping[str, Any]) -> Status:
    """Our status for a cache entry (see the module table).

    A positive finite number ``time`` is ``OK``; a failure string its status (a string
    Kernel Tuner may add later: a failed run); any other time (missing, negative, zero,
    NaN, infinite, not a number) is ``INVALID``; :data:`LEGACY_FAILURE_MS` or more is
    ``RUNTIME_ERROR`` unless the entry's ``status`` is ``ok`` (as :func:`load_cache` reads it).

    >>> [entry_status({"time": t}).name for t in (1.5, "CompilationFailedConfig", "Odd", 0)]
    ['OK', 'COMPILE_ERROR', 'RUNTIME_ERROR', 'INVALID']
    >>> entry_status({"time": 1e20}).name, entry_status({"time": 1e20, "status": "ok"}).name
    ('RUNTIME_ERROR', 'OK')
    """
    check_type("a cache entry", entry, Mapping)
    t = entry.get("time")
    if isinstance(t, str):
        status = entry.get("status")  # from the file: any JSON value (a list is unhashable)
        stored = _FAILURE_BY_VALUE.get(status) if isinstance(status, str) else None
        return stored or FAILURE_STATUS.get(t, Status.RUNTIME_ERROR)
    if as_time(t) is None:
        return Status.INVALID
    if t >= LEGACY_FAILURE_MS and entry.get("status") != Status.OK.value:
        return Status.RUNTIME_ERROR  # Kernel Tuner's old failure time (module doc)
    return Status.OK


def _tune_params(raw: dict, where: str) -> dict:
    params = raw["tune_params"]
    if not isinstance(params, dict) or not params:
        raise InvalidInputError(f"{where}: 'tune_params' must be a non-empty object of value lists")
    keys = raw.get("tune_params_keys") or list(params)
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise InvalidInputError(f"{where}: 'tune_params_keys' must be a list of names")
    if len(set(keys)) != len(keys):
        raise InvalidInputError(f"{where}: 'tune_params_keys' names a parameter twice")
    out = {}
    for k in keys:
        vals = params.get(k)
        if not isinstance(vals, list) or not all(is_param_value(v) for v in vals):
            raise InvalidInputError(f"{where}: tune_params[{k[:40]!r}] must be a list of values")
        out[k] = list(vals)
    return out


def _entry(key: Any, entry: Any, keys: Sequence[str], tune_params: dict, where: str,
           check_key: bool = True) -> dict:
    """The cache entry ``key`` checked: parameters present and plain, ``key`` naming them
    (:func:`key_names`; unless not ``check_key``), time classified."""
    if not isinstance(key, str) or not isinstance(entry, dict):
        raise InvalidInputError(f"{where}: cache entry {str(key)[:40]!r} is not an object")
    if not all(k in entry for k in keys):  # parameters only in the key: recover them
        vals = key.split(",")
        if len(vals) != len(keys):
            raise InvalidInputError(f"{where}: cache entry {key[:40]!r} lacks parameters and "
                                    f"its key does not hold {len(keys)} values")
        entry = dict(entry)
        for k, v in zip(keys, vals):
            entry.setdefault(k, _parse_value(v, tune_params[k], where))
    for k in keys:
        if not is_param_value(entry[k]):
            raise InvalidInputError(f"{where}: cache entry {key[:40]!r}: parameter {k!r} has a "
                                    f"value that is not a number, string or flat list")
    if check_key and not key_names(key, cache_key(entry, keys)):
        config = json.dumps({k: entry[k] for k in keys})
        raise InvalidInputError(f"{where}: cache entry {key[:40]!r} holds the parameter values "
                                f"{config[:120]}, which the key does not name")
    error = _error_string(entry, keys)
    if error is not None and entry.get("time") != error:  # Kernel Tuner 1.x: no time string
        entry = {**entry, "time": error}
    t = entry.get("time")
    if (as_time(t) is not None and t >= LEGACY_FAILURE_MS
            and entry.get("status") != Status.OK.value):  # ours says ok: a measurement
        entry = {**entry, "time": STATUS_FAILURE[Status.RUNTIME_ERROR],
                 "status": Status.RUNTIME_ERROR.value}
    elif not isinstance(t, str) and as_time(t) is None:
        # not a measurement: keep the entry (it is part of the space) as invalid
        entry = {**entry, "time": STATUS_FAILURE[Status.INVALID], "status": Status.INVALID.value,
                 "invalid_reason": bad_time_reason(t, "recorded time")}
    elif not isinstance(t, str):
        times = entry.get("times")
        good = [x for x in times if as_time(x) is not None] if isinstance(times, list) else []
        if times is not None and (not isinstance(times, list) or len(good) != len(times)):
            entry = {**entry, "times": good or [t]}  # drop repeats that are not times
    return entry


#: Every failure string Kernel Tuner's ``read_cache`` recognises (``ErrorConfig``: a failure
#: of no finer kind, read as a failed run).
_KT_ERRORS = ("ErrorConfig", *FAILURE_STATUS)


def _error_string(entry: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    """The failure string of a cache entry as Kernel Tuner's ``read_cache`` finds it: any
    field (not a parameter) holding one. Kernel Tuner 1.x stores a failure as
    ``"__error__": "CompilationFailedConfig"`` and no ``time``; older versions put the
    string in ``time`` (or the objective); ``None`` when the entry holds none."""
    if isinstance(entry.get("time"), str) and entry["time"] in _KT_ERRORS:
        return entry["time"]
    found = [v for k, v in entry.items() if k not in keys and isinstance(v, str) and v in _KT_ERRORS]
    return found[-1] if found else None


def load_cache(path: str | os.PathLike) -> KtCache:
    """Read a Kernel Tuner cache file (``.json`` or ``.json.gz``).

    Each entry's key must name its parameter values (:func:`key_names`), and no
    configuration may be recorded twice (values compared by :func:`value_key`, as the
    replayed space does). Entries whose ``time`` is neither a failure string nor a
    positive finite number are kept as ``invalid`` (``time`` "InvalidConfig", the reason in
    ``invalid_reason``) and counted in :attr:`KtCache.bad_times`.

    Raises
    ------
    InvalidInputError
        Naming the file (and the entry) when it is not a cache file: missing, not JSON,
        truncated gzip, bad encoding, too large, wrong shapes or types, missing
        ``tune_params`` or ``cache``, a key naming other values than its entry's, a
        configuration recorded twice.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidInputError(f"a cache must be a KtCache or the path of a cache file, "
                                f"got {type(path).__name__} {path!r:.60}")
    if not os.fspath(path):  # Path("") is ".": the folder would be named
        raise InvalidInputError("a cache file path must not be empty")
    path = Path(path)
    where = f"cache file {str(path)!r}"
    raw = read_tuning_json(path)
    t4 = is_t4_results(raw)  # its cache keys are ours (as_cache_dict), not the file's
    if t4:
        raw = {**as_cache_dict(raw, where), "device_name": metadata_device(path)}
    elif isinstance(raw, dict) and "metadata" in raw and "cache" not in raw:
        what = "a T4 metadata file (the machine and software, no measurements)"
        raise NoMeasurementsError(f"{where} is {what}; give its results file or the cache", what)
    if isinstance(raw, dict) and "ConfigurationSpace" in raw and "cache" not in raw:
        what = "a T1 tuning-problem description (parameters and restrictions, no measurements)"
        raise NoMeasurementsError(f"{where} is {what}; give a Kernel Tuner cache file with "
                                  "recorded times", what)
    if isinstance(raw, dict) and "results" in raw and "cache" in raw and "tune_params" not in raw:
        raise InvalidInputError(f"{where} holds both 'results' (a T4 results file's) and "
                                f"'cache' but lacks 'tune_params': it is neither a T4 results "
                                f"file nor a Kernel Tuner cache")
    if not isinstance(raw, dict) or "cache" not in raw or "tune_params" not in raw:
        raise InvalidInputError(f"{where} lacks 'tune_params' or 'cache'")
    tune_params = _tune_params(raw, where)
    keys = list(tune_params)
    if not isinstance(raw["cache"], dict):
        raise InvalidInputError(f"{where}: 'cache' must be an object of entries")
    entries = [_entry(key, entry, keys, tune_params, where, check_key=not t4)
               for key, entry in raw["cache"].items()]
    _check_once(list(raw["cache"]), entries, keys, where)
    bad = sum(1 for e in entries if "invalid_reason" in e)
    meta = {k: v for k, v in raw.items() if k not in
            ("cache", "tune_params", "tune_params_keys", "device_name", "kernel_name",
             "problem_size", "objective")}
    if not isinstance(raw.get("device_name"), (str, type(None))):  # 5 would be device "5"
        raise InvalidInputError(f"{where}: device_name {str(raw['device_name'])[:40]!r} is not "
                                f"a device name (a string)")
    return KtCache(tune_params=tune_params, entries=entries,
                   device_name=_text(raw.get("device_name"), ""),
                   kernel_name=_text(raw.get("kernel_name"), ""),
                   problem_size=raw.get("problem_size"),
                   objective=_text(raw.get("objective"), "time"),
                   path=str(path), meta=meta, bad_times=bad)


def _check_once(names: Sequence[str], entries: Sequence[dict], keys: Sequence[str],
                where: str) -> None:
    """Refuse a configuration recorded twice (values compared by :func:`value_key`)."""
    first: dict[tuple, str] = {}
    for name, entry in zip(names, entries):
        config = tuple(value_key(entry[k]) for k in keys)
        try:
            seen = config in first
        except TypeError:  # an unhashable value (a dict, a nested list): no parameter value
            raise InvalidInputError(f"{where}: entry {name[:40]!r} holds a parameter value "
                                    f"that is no number, string or flat list") from None
        if seen:
            shown = json.dumps({k: entry[k] for k in keys})[:120]
            raise InvalidInputError(f"{where} records the configuration {shown} twice (cache "
                                    f"keys {first[config][:40]!r} and {name[:40]!r})")
        first[config] = name


def _text(value: Any, default: str) -> str:
    """A name field as text; null is absent (``default``), never the name "None". Never cut:
    a name is an identity (a device's, a workload's) the database keeps whole."""
    return default if value is None else str(value)


def _parse_value(text: str, choices: Sequence[Any], where: str = "cache") -> Any:
    for c in choices:
        if str(c) == text:
            return c
    raise InvalidInputError(f"{where}: cache key value {text[:40]!r} is not among the "
                            f"parameter's values")
