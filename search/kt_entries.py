"""One entry of a Kernel Tuner cache: its status, its time, and checking it as read.

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

Examples
--------
>>> [entry_status({"time": t}).value for t in (2.5, "RuntimeFailedConfig", 1e20)]
['ok', 'runtime_error', 'runtime_error']
>>> checked_entry("2", {"time": 2.5}, ["a"], {"a": [1, 2]}, "cache")["a"]
2
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from iobound.errors import InvalidInputError
from kernels.status import Status

from .option_checks import check_type
from .times import as_time, bad_time_reason
from .kt_keys import FAILURE_STATUS, STATUS_FAILURE, cache_key, is_param_value, key_names

__all__ = ["LEGACY_FAILURE_MS", "entry_status", "recorded_time", "checked_entry"]

#: The time (ms) older Kernel Tuner versions recorded for a configuration that failed.
LEGACY_FAILURE_MS = 1e20
_FAILURE_BY_VALUE = {s.value: s for s in STATUS_FAILURE}


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


def checked_entry(key: Any, entry: Any, keys: Sequence[str], tune_params: dict, where: str,
           check_key: bool = True) -> dict:
    """The cache entry ``key`` of a file as read (``where`` names the file in errors):
    its parameters present (one only in the key is recovered from it) and plain, ``key``
    naming them (:func:`key_names`; unless not ``check_key``), a failure string of any
    field put in ``time``, a time that is no measurement made ``InvalidConfig`` with its
    reason, and repeats in ``times`` that are no times dropped.

    >>> checked_entry("1", {"a": 1, "time": -2.0}, ["a"], {"a": [1]}, "cache")["invalid_reason"]
    'recorded time -2.0 is not a positive finite number'
    """
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


def _parse_value(text: str, choices: Sequence[Any], where: str = "cache") -> Any:
    for c in choices:
        if str(c) == text:
            return c
    raise InvalidInputError(f"{where}: cache key value {text[:40]!r} is not among the "
                            f"parameter's values")
