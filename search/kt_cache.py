"""Kernel Tuner cache files: read (fast: json + numpy-friendly lists) and write.

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
===========================  ========================

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

import gzip
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from iobound.errors import InvalidInputError
from kernels.status import Status

from .measure.base import MeasureRecord

__all__ = ["KtCache", "load_cache", "write_cache", "cache_key", "entry_status", "recorded_time",
           "records_to_cache", "FAILURE_STATUS", "STATUS_FAILURE"]

#: Kernel Tuner failure string -> our status.
FAILURE_STATUS = {
    "InvalidConfig": Status.INVALID,
    "CompilationFailedConfig": Status.COMPILE_ERROR,
    "RuntimeFailedConfig": Status.RUNTIME_ERROR,
}
#: our failure status -> Kernel Tuner failure string (lossy for timeout/wrong_result).
STATUS_FAILURE = {
    Status.INVALID: "InvalidConfig",
    Status.COMPILE_ERROR: "CompilationFailedConfig",
    Status.RUNTIME_ERROR: "RuntimeFailedConfig",
    Status.TIMEOUT: "RuntimeFailedConfig",
    Status.WRONG_RESULT: "RuntimeFailedConfig",
}
_FAILURE_BY_VALUE = {s.value: s for s in STATUS_FAILURE}


@dataclass(frozen=True)
class KtCache:
    """The contents of a Kernel Tuner cache file.

    ``entries`` keeps the file's order; each entry is the file's dict (parameters,
    ``time``, ``times``, ...). ``tune_params`` maps each parameter to its value list,
    in ``tune_params_keys`` order.
    """

    tune_params: dict
    entries: list
    device_name: str = ""
    kernel_name: str = ""
    problem_size: Any = None
    objective: str = "time"
    path: str = ""
    meta: dict = field(default_factory=dict)

    @property
    def keys(self) -> tuple[str, ...]:
        """The parameter names (``tune_params_keys``)."""
        return tuple(self.tune_params)

    def __len__(self) -> int:
        return len(self.entries)

    def recorded_optimum(self) -> float | None:
        """The best (smallest) recorded time of the file in ms; ``None`` if nothing ran.

        >>> KtCache({"a": [1, 2]}, [{"a": 1, "time": 2.5}, {"a": 2, "time": "InvalidConfig"}]).recorded_optimum()
        2.5
        """
        times = [t for t in map(recorded_time, self.entries) if t is not None]
        return min(times) if times else None


def cache_key(config: Mapping[str, Any], keys: Sequence[str]) -> str:
    """The cache key of ``config``: its values in ``keys`` order, comma-joined."""
    return ",".join(str(config[k]) for k in keys)


def recorded_time(entry: Mapping[str, Any]) -> float | None:
    """The recorded ``time`` of a cache entry in ms; ``None`` for a failure (a string or a
    missing, non-finite or non-numeric time)."""
    t = entry.get("time")
    if isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t):
        return float(t)
    return None


def entry_status(entry: Mapping[str, Any]) -> Status:
    """Our status for a cache entry (see the module table); a float time is ``OK``."""
    t = entry.get("time")
    if isinstance(t, str):
        stored = _FAILURE_BY_VALUE.get(entry.get("status"))
        return stored or FAILURE_STATUS.get(t, Status.RUNTIME_ERROR)
    if t is None:
        return Status.INVALID
    return Status.OK


def _open(path: Path, mode: str):
    if path.suffix == ".gz":
        return gzip.open(path, mode + "t", encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def load_cache(path: str | os.PathLike) -> KtCache:
    """Read a Kernel Tuner cache file (``.json`` or ``.json.gz``).

    Raises
    ------
    ValueError
        When the file is not a cache file (missing ``tune_params`` or ``cache``).
    """
    path = Path(path)
    if not path.is_file():
        raise InvalidInputError(f"replay file {str(path)!r} does not exist")
    try:
        with _open(path, "r") as fh:
            raw = json.load(fh)
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"replay file {str(path)!r} is not a Kernel Tuner cache file: {exc}") from exc
    if isinstance(raw, dict) and "ConfigurationSpace" in raw and "cache" not in raw:
        raise InvalidInputError(f"replay file {str(path)!r} is a T1 tuning-problem description "
                         f"(parameters and restrictions, no measurements); replay needs a "
                         f"Kernel Tuner cache file with recorded times")
    if not isinstance(raw, dict) or "cache" not in raw or "tune_params" not in raw:
        raise InvalidInputError(f"replay file {str(path)!r} lacks 'tune_params' or 'cache'")
    keys = raw.get("tune_params_keys") or list(raw["tune_params"])
    tune_params = {k: list(raw["tune_params"][k]) for k in keys}
    entries = []
    for key, entry in raw["cache"].items():
        if not all(k in entry for k in keys):  # parameters only in the key: recover them
            vals = key.split(",")
            entry = dict(entry)
            for k, v in zip(keys, vals):
                entry.setdefault(k, _parse_value(v, tune_params[k]))
        entries.append(entry)
    meta = {k: v for k, v in raw.items() if k not in
            ("cache", "tune_params", "tune_params_keys", "device_name", "kernel_name",
             "problem_size", "objective")}
    return KtCache(tune_params=tune_params, entries=entries,
                   device_name=str(raw.get("device_name", "")),
                   kernel_name=str(raw.get("kernel_name", "")),
                   problem_size=raw.get("problem_size"), objective=str(raw.get("objective", "time")),
                   path=str(path), meta=meta)


def _parse_value(text: str, choices: Sequence[Any]) -> Any:
    for c in choices:
        if str(c) == text:
            return c
    raise InvalidInputError(f"cache key value {text!r} is not among {list(choices)!r}")


def records_to_cache(records: Iterable[MeasureRecord], tune_params: Mapping[str, Sequence[Any]], *,
                     device_name: str = "", kernel_name: str = "", problem_size: Any = None,
                     objective: str = "time") -> KtCache:
    """A :class:`KtCache` holding measurement records (the last record of a config wins).

    Records with ``time_ms=None`` and status ``ok`` (e.g. the emulator, which does
    not time) are skipped: a cache entry needs a time or a failure string.
    """
    keys = list(tune_params)
    by_key: dict[str, dict] = {}
    for rec in records:
        if rec.is_ok and rec.time_ms is None:
            continue
        entry = {k: rec.config[k] for k in keys}
        if rec.is_ok:
            entry.update(time=rec.time_ms, times=list(rec.costs) or [rec.time_ms])
        else:
            entry.update(time=STATUS_FAILURE[rec.status], status=rec.status.value)
        if rec.estimate:
            entry["estimate"] = True
        by_key[cache_key(rec.config, keys)] = entry
    return KtCache(tune_params={k: list(v) for k, v in tune_params.items()},
                   entries=list(by_key.values()), device_name=device_name,
                   kernel_name=kernel_name, problem_size=problem_size, objective=objective)


def write_cache(path: str | os.PathLike, cache: KtCache) -> Path:
    """Write ``cache`` as a Kernel Tuner cache file (gzipped when ``path`` ends in .gz)."""
    path = Path(path)
    keys = list(cache.keys)
    raw = {
        "device_name": cache.device_name, "kernel_name": cache.kernel_name,
        "problem_size": cache.problem_size, "tune_params_keys": keys,
        "tune_params": {k: list(v) for k, v in cache.tune_params.items()},
        "objective": cache.objective,
        "cache": {cache_key(e, keys): e for e in cache.entries},
    }
    with _open(path, "w") as fh:
        json.dump(raw, fh)
    return path
