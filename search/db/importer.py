"""Import Kernel Tuner cache files, T4 results files, our tuning logs and other tuning
databases into the tuning database (a T4 results file, Kernel Tuner's
``store_output_file``, is read as a cache by :mod:`search.t4_results`; it names no device
or kernel).

:func:`read_file` turns one file into measurements without touching the database;
:func:`read_path` does the same for any file, a tuning database giving one
:class:`FileImport` per workload and device it holds (:mod:`.merge`: the databases of
several machines merged, every record keeping its device, toolchain, run and source);
:func:`import_files` reads every file first and then stores them all in one
transaction, so a file that cannot be read leaves the database as it was.
Importing the same file again adds nothing (each measurement has a digest), and so does
a database's record that the target already holds.

Which device a file's measurements belong to: the file's own device name (a
cache's ``device_name``, a log header's ``device``); for a file without one,
``device`` if given, else the file's name without its extensions. A file that
names a device other than ``device`` is refused: its records never go under
another device's name.

A tuning log's records must hold exactly the log's parameters, each a number,
string or flat list (as a cache entry does); a record that does not refuses the
file.

A cache's measurements have the toolchain ``kernel_tuner`` unless the file says
another (a top-level or an entry's ``toolchain``, written by our export).

Only ``ok`` records with a positive, finite time count as timings; an ``ok`` cache
entry with another time (zero, negative, NaN, infinite) is skipped and counted in
:attr:`FileImport.skipped`. NaN or Infinity elsewhere in an entry (``compile_time``,
a log record's ``extra``) is stored as null; in the problem (the workload's
identity) it refuses the file.

Examples
--------
>>> import os, tempfile
>>> from search.kt_cache import KtCache
>>> from search.kt_cache_write import write_cache
>>> path = os.path.join(tempfile.mkdtemp(), "k_A100.json")
>>> _ = write_cache(path, KtCache(tune_params={"x": [1, 2]}, kernel_name="k", entries=[
...     {"x": 1, "time": 2.0, "times": [2.0]}, {"x": 2, "time": "InvalidConfig"}]))
>>> db = TuningDB(":memory:")
>>> [(r.device, r.read, r.added) for r in import_files(db, [path])]
[('k_A100', 2, 2)]
>>> [(r.device, r.added) for r in import_files(db, [path])]
[('k_A100', 0)]
"""

from __future__ import annotations

import gzip
import json
import math
import os
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from iobound.errors import InvalidInputError
from kernels.status import Status

from ..kt_cache import (NoMeasurementsError, entry_status, file_stem, is_param_value, load_cache,
                        named)
from ..measure.base import MeasureRecord
from ..records import SCHEMA as LOG_SCHEMA
from ..records import read_log
from .model import (CONV_TEMPLATE, Measurement, Workload, check_device_name, config_fault,
                    finite, problem_fault, recorded_workload)
from .schema import write
from .store import TuningDB, insert

__all__ = ["FileImport", "file_device", "read_file", "read_path", "store_files",
           "import_files", "KT_TOOLCHAIN"]

#: The toolchain of measurements read from a Kernel Tuner cache (the file does not say more).
KT_TOOLCHAIN = "kernel_tuner"
_TIME_KEYS = ("time", "times", "status", "estimate", "toolchain")


@dataclass
class FileImport:
    """One file read (and, after :func:`import_files`, stored)."""

    path: str
    kind: str  # "kt-cache", "t4-results", "tune-log" or "tuning-db"
    device: str
    workload: Workload
    measurements: list = field(repr=False, default_factory=list)
    tune_params: dict = field(repr=False, default_factory=dict)
    skipped: int = 0
    added: int = 0

    @property
    def read(self) -> int:
        """How many measurements the file holds (skipped ones not counted)."""
        return len(self.measurements)


def file_device(path: Path, own: str, device: str | None) -> str:
    """The device a file's records go under (module doc); refused when ``device`` disagrees.
    A blank name in the file is no name; one with a line break is refused, like ``--device``'s."""
    own = named(own)
    if own and device and own != device:
        raise InvalidInputError(f"{path} records device {own!r}; --device {device!r} disagrees "
                         f"(a file's records are never stored under another device)")
    return check_device_name(own or device or file_stem(path))


def _is_log(path: Path) -> bool:
    with open(path, "rb") as fh:  # gzip told by its first bytes, as read_log does
        compressed = fh.read(2) == b"\x1f\x8b"
    with (gzip.open if compressed else open)(path, "rb") as fh:
        first = fh.readline(1 << 20)
    try:
        head = json.loads(first)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):  # not a log; the cache reader names it
        return False
    return isinstance(head, dict) and head.get("schema") == LOG_SCHEMA


def read_file(path: str | os.PathLike, device: str | None = None) -> FileImport:
    """Read one cache file or tuning log into measurements (see module doc).

    Raises
    ------
    ValueError
        Naming the file and what is wrong with it.
    """
    path = Path(path)
    if device is not None:
        check_device_name(device)  # 5 and "5": one device row, two digests
    if not path.is_file():
        what = "not a regular file" if path.exists() else "no such file"
        raise InvalidInputError(f"{path}: {what}")
    try:
        return _read_log(path, device) if _is_log(path) else _read_cache(path, device)
    except NoMeasurementsError:  # kept apart: a folder's import passes it over
        raise
    except ValueError as exc:
        msg = str(exc)
        raise InvalidInputError(msg if str(path) in msg else f"{path}: {msg}") from exc
    except RecursionError:
        raise InvalidInputError(f"{path}: cannot read it: nested too deeply") from None
    except (OSError, EOFError, zlib.error, KeyError, TypeError, AttributeError) as exc:
        raise InvalidInputError(f"{path}: cannot read it: {type(exc).__name__}: {exc}") from exc


def read_path(path: str | os.PathLike, device: str | None = None) -> list[FileImport]:
    """Read any importable file: a tuning database (:func:`search.db.merge.read_database`),
    else one cache file or tuning log (:func:`read_file`)."""
    from .merge import is_sqlite, read_database  # merge builds on this module's FileImport
    p = Path(path)
    try:
        database = p.is_file() and is_sqlite(p)
    except OSError:  # unreadable: read_file names the file and why
        database = False
    return read_database(p, device) if database else [read_file(p, device)]


#: The files of a folder given to import: these endings, its subfolders not entered.
IMPORT_ENDINGS = (".json", ".json.gz", ".jsonl", ".db", ".sqlite", ".sqlite3")


def read_paths(paths: Sequence[str | os.PathLike], device: str | None = None,
               db_path: str | None = None) -> tuple[list[FileImport], list[tuple[str, str]]]:
    """:func:`read_path` of every path, a folder standing for its files of
    :data:`IMPORT_ENDINGS` (sorted): (what was read, the folders' files passed over with
    why). A folder's T4 metadata and T1 description files hold no measurements and are
    passed over (a metadata file still names its results file's device), and the database
    ``db_path`` is left out when it lies in the folder; a file given by name is read or
    refused whatever it is, and a folder with nothing to read is refused.

    >>> import tempfile
    >>> read_paths([tempfile.mkdtemp()])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: folder '...' holds no cache file, tuning log or tuning database (.json, .json.gz, .jsonl, .db, .sqlite, .sqlite3)
    """
    files: list[FileImport] = []
    passed: list[tuple[str, str]] = []
    target = Path(db_path).resolve() if db_path and db_path != ":memory:" else None
    for p in map(Path, paths):
        if not p.is_dir():
            files += read_path(p, device)
            continue
        inside = sorted(c for c in p.iterdir() if c.is_file() and c.name.endswith(IMPORT_ENDINGS)
                        and (target is None or c.resolve() != target))
        read = []
        for child in inside:
            try:
                read += read_path(child, device)
            except NoMeasurementsError as exc:  # "... is a T4 metadata file (...); give ..."
                passed.append((str(child), str(exc).split(" is ", 1)[-1].split(";")[0]))
        if not read:
            raise InvalidInputError(f"folder {str(p)!r} holds no cache file, tuning log or tuning "
                                    f"database ({', '.join(IMPORT_ENDINGS)})")
        files += read
    return files, passed


def _check_problem(problem: Any, what: str) -> None:
    fault = problem_fault(problem)
    if fault:
        raise InvalidInputError(f"{what} {fault}")


def _kt_timestamp(value: Any) -> float:
    """A cache entry's timestamp as Unix time; one that is not a finite number or an ISO
    time is absent (0.0). An ISO time without a zone is UTC: a local zone would give
    other rows, so duplicates, when the file is imported again elsewhere."""
    if isinstance(value, bool):
        return 0.0
    if isinstance(value, (int, float)):
        try:
            stamp = float(value)
        except OverflowError:  # an integer too large for a float
            return 0.0
        return stamp if math.isfinite(stamp) else 0.0
    try:
        when = datetime.fromisoformat(str(value))
    except ValueError:
        return 0.0
    return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).timestamp()


def _kt_record(entry: dict, keys: Sequence[str]) -> MeasureRecord | None:
    config = {k: entry[k] for k in keys}
    other = finite({k: v for k, v in entry.items() if k not in keys and k not in _TIME_KEYS})
    status = entry_status(entry)
    stamp = _kt_timestamp(entry.get("timestamp", 0.0))
    if status is not Status.OK:
        rec = MeasureRecord.failed(config, status, str(entry.get("time")), extra={"kt": other})
    else:
        t = entry["time"]
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t <= 0:
            return None
        costs = [float(c) for c in entry.get("times") or [] if isinstance(c, (int, float))
                 and math.isfinite(c)]
        rec = MeasureRecord.ok(config, costs, time_ms=float(t), extra={"kt": other})
    return MeasureRecord(**{**rec.__dict__, "timestamp": stamp,
                            "estimate": bool(entry.get("estimate", False))})


def _toolchain(value: Any, default: str) -> str:
    """A cache's (or entry's) ``toolchain`` field: ours, written by export; else ``default``."""
    return value if isinstance(value, str) and value else default


def _read_cache(path: Path, device: str | None) -> FileImport:
    cache = load_cache(path)
    dev = file_device(path, cache.device_name, device)
    _check_problem(cache.problem_size, "problem_size")
    w = recorded_workload(cache.kernel_name, cache.problem_size, cache.keys)
    tool = _toolchain(cache.meta.get("toolchain"), KT_TOOLCHAIN)
    kind = "t4-results" if "t4_schema_version" in cache.meta else "kt-cache"
    out = FileImport(str(path), kind, dev, w, tune_params={w: cache.tune_params})
    for entry in cache.entries:
        rec = _kt_record(entry, cache.keys)
        if rec is None or "invalid_reason" in entry:  # a bad time (load_cache)
            out.skipped += 1
            continue
        out.measurements.append(Measurement(w, dev, _toolchain(entry.get("toolchain"), tool), rec,
                                            source=path.name))
    return out


def _log_workload(header: dict) -> tuple[Workload, dict]:
    space = header.get("space") or {}
    params = tuple(space.get("params") or ())
    values = space.get("values") or {}
    if not isinstance(values, dict) or not all(
            isinstance(v, list) and all(map(is_param_value, v)) for v in values.values()):
        raise InvalidInputError("the header's space 'values' must map each parameter to a list "
                                "of numbers, strings or flat lists")
    if space.get("kind") == "replay":
        problem = header.get("problem_size")
        if problem is None and header.get("replay"):
            try:  # the recorded problem size lives in the replayed file
                problem = load_cache(header["replay"]).problem_size
            except ValueError:
                problem = None
        return recorded_workload(str(space.get("kernel") or ""), problem, params), values
    if "layer" in header:
        return Workload(CONV_TEMPLATE, header["layer"], params), values
    template = header.get("template")  # null is absent
    template = space.get("kind") if template is None else template
    return Workload("" if template is None else str(template), header.get("problem"),
                    params), values


def _check_config(index: int, config: dict, params: Sequence[str]) -> None:
    """Refuse a log record whose config is not the log's parameters with plain values."""
    fault = config_fault(config, params)
    if fault:
        raise InvalidInputError(f"the record at index {index}: {fault}; the log's parameters "
                                f"are {', '.join(params)}")


def _read_log(path: Path, device: str | None) -> FileImport:
    log = read_log(path)
    h = log.header
    meas = h.get("measurer") or {}
    own = str(h.get("device") or meas.get("device") or (h.get("space") or {}).get("device") or "")
    dev = file_device(path, own, device)
    w, values = _log_workload(h)
    _check_problem(w.problem, "the header's problem (layer or problem_size)")
    toolchain = str(meas.get("toolchain") or meas.get("name") or "")
    run = f"{h.get('strategy', '')}:seed{h.get('seed', '')}"
    out = FileImport(str(path), "tune-log", dev, w, tune_params={w: values} if values else {})
    for e in log.entries:
        _check_config(e.index, e.record.config, w.params)
        r = e.record
        bad_time = r.status is Status.INVALID and "logged_status" in r.extra  # marked by read_log
        if bad_time or (r.is_ok and r.time_ms is not None and not r.time_ms > 0):
            out.skipped += 1
            continue
        r = MeasureRecord(**{**r.__dict__, "extra": finite(r.extra)})
        out.measurements.append(Measurement(w, dev, toolchain, r, run=run, source=path.name))
    return out


def store_files(db: TuningDB, files: Sequence[FileImport]) -> list[FileImport]:
    """Store files read by :func:`read_file` in one transaction; sets each one's ``added``.

    >>> store_files(TuningDB(":memory:"), [])
    []
    """
    def store(conn) -> None:
        for f in files:  # a file with nothing usable adds no (empty) workload either
            f.added = insert(conn, f.measurements, f.tune_params if f.measurements else {})

    write(db.connection, store)
    return list(files)


def check_not_itself(paths: Sequence[str | os.PathLike], db_path: str) -> None:
    """Refuse to import the database into itself (a mistake, never a merge)."""
    if db_path == ":memory:" or not Path(db_path).exists():
        return
    for p in paths:
        if Path(p).exists() and Path(p).resolve() == Path(db_path).resolve():
            raise InvalidInputError(f"{p} is the database imported into; nothing to merge")


def import_files(db: TuningDB, paths: Sequence[str | os.PathLike] | str | os.PathLike,
                 device: str | None = None) -> list[FileImport]:
    """Read every file, then store all of them in one transaction (see module doc).

    ``paths`` is a list of files, or one file (a ``str`` or a path) given alone; a
    tuning database among them gives one :class:`FileImport` per workload and device; a
    folder stands for the files in it (:func:`read_paths`: description files passed over).
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    check_not_itself(paths, db.path)
    return store_files(db, read_paths(paths, device, db.path)[0])
