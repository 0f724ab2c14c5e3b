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
file. A log or cache of our conv template must name a layer, and each record's config must
be a kernel config of integers; a timed ``ok`` one must also pass
:func:`kernels.config.check_config` for the layer (else it would be stored as the
layer's fastest). A device name that is not a string (a cache's ``device_name`` 5) is
refused, never stored as ``"5"``; so are a cache's ``kernel_name`` and a log header's
template, replayed kernel and measurer toolchain that are not strings (null or absent is
none: ``""``). A replay log must name its problem (its ``problem_size``, else a replayed
cache found as the run named it or beside the log); one that names neither is refused.

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

import os
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Sequence

from iobound.devices import canonical_device_name
from iobound.errors import InvalidInputError

from ..kt_cache import NoMeasurementsError
from ..option_checks import check_path, check_records, check_type, shown
from ..path_kind import path_kind
from .cache_reader import KT_TOOLCHAIN, read_cache
from .file_import import FileImport, file_device
from ..records import is_log_file
from .log_reader import read_log_file
from .model import check_device_name
from .insertion import insert, storable
from .store import TuningDB

__all__ = ["FileImport", "file_device", "read_file", "read_path", "store_files",
           "import_files", "import_paths", "KT_TOOLCHAIN"]


def read_file(path: str | os.PathLike, device: str | None = None) -> FileImport:
    """Read one cache file or tuning log into measurements (see module doc).

    >>> import tempfile
    >>> from search.kt_cache import KtCache
    >>> from search.kt_cache_write import write_cache
    >>> path = Path(tempfile.mkdtemp()) / "k.json"
    >>> _ = write_cache(path, KtCache(tune_params={"x": [1]}, kernel_name="k",
    ...     device_name="V100-SXM2", entries=[{"x": 1, "time": 2.0, "times": [2.0]}]))
    >>> f = read_file(path)  # nothing stored yet
    >>> f.kind, f.device, f.read, f.added
    ('kt-cache', 'V100-SXM2', 1, 0)
    >>> read_file(path, device="a100")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: ...k.json records device 'V100-SXM2'; --device 'a100' \
disagrees (a file's records are never stored under another device)

    Raises
    ------
    ValueError
        Naming the file and what is wrong with it (a ``path`` that is no path, or that the
        system refuses to look up, a name too long: InvalidInputError naming ``path``).
    """
    path = Path(check_path("path", path))
    if device is not None:
        check_device_name(device)  # 5 and "5": one device row, two digests
    kind = path_kind(path, "path")  # a refused lookup (a name too long): bad input, named
    if kind != "file":
        what = "no such file" if kind == "missing" else "not a regular file"
        raise InvalidInputError(f"{path}: {what}")
    try:
        read = read_log_file(path, device) if is_log_file(path) else read_cache(path, device)
        # what TuningDB.add would refuse is refused here, before anything is stored (a
        # cache of our conv template is checked against its layer as a log is)
        read.measurements = [storable(m) for m in read.measurements]
        return read
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
    else one cache file or tuning log (:func:`read_file`); a ``path`` that is no path, or
    that the system refuses to look up, is an InvalidInputError naming it.

    >>> import tempfile
    >>> from search.db import Measurement, Workload
    >>> from search.measure.base import MeasureRecord
    >>> path = Path(tempfile.mkdtemp()) / "other.db"
    >>> with TuningDB(path) as other:
    ...     _ = other.add([Measurement(Workload("k", [8], ("x",)), d, "t",
    ...                    MeasureRecord.ok({"x": 1}, time_ms=2.0)) for d in ("v100", "a100")])
    >>> [(f.kind, f.device, f.read) for f in read_path(path)]  # one per workload and device
    [('tuning-db', 'a100', 1), ('tuning-db', 'v100', 1)]
    """
    from .merge import is_sqlite, read_database  # merge builds on this module's FileImport
    p = Path(check_path("path", path))
    if path_kind(p, "path") != "file":  # a lookup refused (a name too long) is bad input
        return [read_file(p, device)]  # which names what is there: nothing, a folder...
    try:
        database = is_sqlite(p)
    except InvalidInputError:  # unreadable: read_file names the file and why
        database = False
    return read_database(p, device) if database else [read_file(p, device)]


#: The files of a folder given to import: these endings, its subfolders not entered.
IMPORT_ENDINGS = (".json", ".json.gz", ".jsonl", ".db", ".sqlite", ".sqlite3")


def read_paths(paths: Sequence[str | os.PathLike], device: str | None = None,
               db_path: str | None = None) -> tuple[list[FileImport], list[tuple[str, str]]]:
    """:func:`read_path` of every path, a folder standing for its files of
    :data:`IMPORT_ENDINGS` (sorted): (what was read, the folders' files passed over with
    why). ``paths`` is taken as :func:`import_files` takes it (:func:`import_paths`: one
    path given alone, or a list of them). A folder's T4 metadata and T1 description files
    hold no measurements and are passed over (a metadata file still names its results
    file's device), and the database ``db_path`` is left out when it lies in the folder; a
    file given by name is read or refused whatever it is, and a folder with nothing to read
    is refused. ``device``, the name for files that carry none, is stored as ``iobound tune
    --device`` stores it (a preset's name for any of its aliases:
    :func:`~iobound.devices.canonical_device_name`).

    >>> import tempfile
    >>> read_paths([tempfile.mkdtemp()])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: folder '...' holds no cache file, tuning log or tuning database (.json, .json.gz, .jsonl, .db, .sqlite, .sqlite3)
    """
    paths = import_paths(paths)  # "/x" is one path, never the paths "/" and "x"
    if db_path is not None:
        check_path("db_path", db_path)
    if device is not None:  # a name the user gives: a preset's stored as tune stores it
        device = canonical_device_name(check_device_name(device))
    files: list[FileImport] = []
    passed: list[tuple[str, str]] = []
    target = Path(db_path).resolve() if db_path and db_path != ":memory:" else None
    for p in map(Path, paths):
        if path_kind(p, "import") != "dir":
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


def store_files(db: TuningDB, files: Sequence[FileImport]) -> list[FileImport]:
    """Store files read by :func:`read_file` in one transaction; sets each one's ``added``.
    ``db`` must be a :class:`TuningDB` and ``files`` a sequence of :class:`FileImport`
    (else InvalidInputError naming them, and nothing is stored).

    >>> store_files(TuningDB(":memory:"), [])
    []
    """
    check_type("db", db, TuningDB)
    files = check_records("files", files, FileImport)

    def store(conn) -> None:
        for f in files:  # a file with nothing usable adds no (empty) workload either
            f.added = insert(conn, f.measurements, f.tune_params if f.measurements else {})

    db.write(store)
    return list(files)


def check_not_itself(paths: Sequence[str | os.PathLike], db_path: str) -> None:
    """Refuse to import the database into itself (a mistake, never a merge). ``paths`` as
    :func:`import_files` takes it (:func:`import_paths`), ``db_path`` a path; else
    InvalidInputError naming them.

    >>> check_not_itself(["a.json"], ":memory:")
    """
    paths = import_paths(paths)
    check_path("db_path", db_path)
    if db_path == ":memory:" or path_kind(db_path, "--db") == "missing":
        return
    for p in paths:
        if path_kind(p, "import") != "missing" and Path(p).resolve() == Path(db_path).resolve():
            raise InvalidInputError(f"{p} is the database imported into; nothing to merge")


def import_files(db: TuningDB, paths: Sequence[str | os.PathLike] | str | os.PathLike,
                 device: str | None = None) -> list[FileImport]:
    """Read every file, then store all of them in one transaction (see module doc).

    ``paths`` is a list of files, or one file (a ``str`` or a path) given alone; a
    tuning database among them gives one :class:`FileImport` per workload and device; a
    folder stands for the files in it (:func:`read_paths`: description files passed over).

    >>> import tempfile
    >>> from pathlib import Path
    >>> from search.kt_cache import KtCache
    >>> from search.kt_cache_write import write_cache
    >>> cache = Path(tempfile.mkdtemp()) / "toy.json"
    >>> entries = [{"a": a, "time": 1.0 + a} for a in (1, 2, 4)]  # Kernel Tuner's cache
    >>> _ = write_cache(cache, KtCache({"a": [1, 2, 4]}, entries, device_name="GPU X",
    ...                                kernel_name="toy", problem_size=[64]))
    >>> with TuningDB(cache.with_name("tuning.db")) as db:
    ...     [(f.kind, f.device, f.added) for f in import_files(db, cache) + import_files(db, cache)]
    [('kt-cache', 'GPU X', 3), ('kt-cache', 'GPU X', 0)]
    """
    check_type("db", db, TuningDB)
    paths = import_paths(paths)
    check_not_itself(paths, db.path)
    return store_files(db, read_paths(paths, device, db.path)[0])


def import_paths(paths) -> list:
    """``paths`` of :func:`import_files` as a list of paths: one path given alone (a
    ``str`` or an ``os.PathLike``) or a collection of them; else InvalidInputError
    (None or a number is no path, nor a list of them).

    >>> import_paths("a.json"), import_paths(["a.json", "b.db"])
    (['a.json'], ['a.json', 'b.db'])
    >>> import_paths([5])
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: paths[0] must be a path (str or os.PathLike), got 5
    """
    if isinstance(paths, (str, os.PathLike)):
        return [paths]
    if isinstance(paths, (bytes, Mapping)) or not isinstance(paths, Iterable):
        raise InvalidInputError(f"paths must be a path or a list of paths, got {shown(paths)}")
    paths = list(paths)
    for i, p in enumerate(paths):
        check_path(f"paths[{i}]", p)
    return paths
