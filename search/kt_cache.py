"""Kernel Tuner cache files: the format and reading it (writing: :mod:`search.kt_cache_write`).

Format (Kernel Tuner, also ``/work/shared/data/tuning-spaces/README.md``): a JSON
object, optionally gzipped, ``{device_name, kernel_name, problem_size,
tune_params_keys, tune_params, objective, cache}`` where ``cache`` maps a key (the
configuration's values joined by commas, in ``tune_params_keys`` order) to an entry
holding the parameters, ``time`` (ms, or a failure string), ``times`` and more.

One entry, its failure strings, Kernel Tuner's old failure time ``1e20`` and our statuses:
:mod:`search.kt_entries` (re-exported here).

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

from .file_names import file_stem
from .option_checks import check_type, shown
from .kt_entries import LEGACY_FAILURE_MS, checked_entry, entry_status, recorded_time
from .kt_json import read_tuning_json
from .kt_keys import (FAILURE_STATUS, STATUS_FAILURE, cache_key, is_param_value, key_names,
                      value_key)
from .t4_results import as_cache_dict, is_t4_results, metadata_device

__all__ = ["KtCache", "NoMeasurementsError", "LEGACY_FAILURE_MS", "named", "load_cache",
           "cache_key", "value_key", "key_names",
           "entry_status", "recorded_time", "is_param_value", "FAILURE_STATUS", "STATUS_FAILURE"]


class NoMeasurementsError(InvalidInputError):
    """A file of the tuning formats that describes and holds no measurements: a T4
    metadata file (the machine and software) or a T1 description (parameters and
    restrictions). Given by name it is bad input; in a folder being imported it is
    passed over (:func:`search.db.importer.read_paths`). ``what`` says which file it is
    ("a T1 tuning-problem description (...)").

    >>> import json, tempfile
    >>> path = Path(tempfile.mkdtemp()) / "problem.json"
    >>> _ = path.write_text(json.dumps({"ConfigurationSpace": {}}))
    >>> try:
    ...     load_cache(path)
    ... except NoMeasurementsError as exc:
    ...     exc.what
    'a T1 tuning-problem description (parameters and restrictions, no measurements)'
    """

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
    objective: str | list = "time"  # a name, or Kernel Tuner's list of names
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
        """The parameter names (``tune_params_keys``).

        >>> KtCache({"block_size_y": [1, 2], "block_size_x": [32]}, []).keys  # not sorted
        ('block_size_y', 'block_size_x')
        """
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
        """``"t4-results"`` for a T4 results file read as a cache, else ``"kt-cache"``.

        >>> KtCache({"a": [1]}, []).file_kind
        'kt-cache'
        >>> KtCache({"a": [1]}, [], meta={"t4_schema_version": "1.0.0"}).file_kind
        't4-results'
        """
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
        truncated gzip, bad encoding, too large, wrong shapes or types (a ``device_name``
        or ``kernel_name`` that is no string: ``5`` is never read as the name ``"5"``),
        missing ``tune_params`` or ``cache``, a key naming other values than its entry's, a
        configuration recorded twice.

    Examples
    --------
    >>> import tempfile
    >>> from search.kt_cache_write import write_cache
    >>> path = Path(tempfile.mkdtemp()) / "toy.json"
    >>> entries = [{"a": 1, "time": 2.0}, {"a": 2, "time": "RuntimeFailedConfig"}]
    >>> _ = write_cache(path, KtCache({"a": [1, 2]}, entries, device_name="GPU X",
    ...                               kernel_name="toy", problem_size=[64]))
    >>> cache = load_cache(path)
    >>> cache.device_name, cache.kernel_name, cache.problem_size, len(cache.entries)
    ('GPU X', 'toy', [64], 2)
    """
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidInputError(f"a cache must be a KtCache or the path of a cache file, "
                                f"got {type(path).__name__} {path!r:.60}")
    if not os.fspath(path):  # Path("") is ".": the folder would be named
        raise InvalidInputError("a cache file path must not be empty")
    path = Path(path)
    where = f"cache file {str(path)!r}"
    raw = read_tuning_json(path)
    raw, t4 = _cache_dict(raw, path, where)
    tune_params = _tune_params(raw, where)
    keys = list(tune_params)
    if not isinstance(raw["cache"], dict):
        raise InvalidInputError(f"{where}: 'cache' must be an object of entries")
    entries = [checked_entry(key, entry, keys, tune_params, where, check_key=not t4)
               for key, entry in raw["cache"].items()]
    _check_once(list(raw["cache"]), entries, keys, where)
    bad = sum(1 for e in entries if "invalid_reason" in e)
    meta = {k: v for k, v in raw.items() if k not in
            ("cache", "tune_params", "tune_params_keys", "device_name", "kernel_name",
             "problem_size", "objective")}
    return KtCache(tune_params=tune_params, entries=entries, **_names(raw, where),
                   problem_size=raw.get("problem_size"), path=str(path), meta=meta,
                   bad_times=bad)


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


def _cache_dict(raw: Any, path: Path, where: str) -> tuple[dict, bool]:
    """``raw`` (a file's JSON) as a cache's dict, and whether it was a T4 results file
    (whose cache keys are ours, :func:`as_cache_dict`, not the file's); a file of another
    kind (a T4 metadata file, a T1 description: no measurements) or of no kind is refused,
    naming what it is."""
    t4 = is_t4_results(raw)
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
    return raw, t4


def _names(raw: dict, where: str) -> dict:
    """The cache's ``device_name``, ``kernel_name`` (null or absent: ``""``, never the name
    "None"; never cut: a name is an identity the database keeps whole) and ``objective``
    (Kernel Tuner writes a name, or, since it tunes several, a list of names: either is
    written back on export as read; null: ``"time"``). Anything else is refused naming the
    field: ``5`` would be stored as the device or workload ``"5"``, and ``str()`` made
    ``["time"]`` the objective ``"['time']"``."""
    for name, what in (("device_name", "a device name"), ("kernel_name", "a kernel name")):
        if not isinstance(raw.get(name), (str, type(None))):
            raise InvalidInputError(f"{where}: {name} {str(raw[name])[:40]!r} is not {what} "
                                    f"(a string; null when the file names none)")
    objective = raw.get("objective")
    if not (objective is None or isinstance(objective, str) or (
            isinstance(objective, list) and objective
            and all(isinstance(o, str) for o in objective))):
        raise InvalidInputError(f"{where}: objective {shown(objective)} is no objective "
                                f"(a name such as 'time', or a list of names; null: 'time')")
    return {"device_name": raw.get("device_name") or "",
            "kernel_name": raw.get("kernel_name") or "",
            "objective": "time" if objective is None else objective}
