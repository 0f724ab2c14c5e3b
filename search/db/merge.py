"""Another tuning database read for import: the databases of several machines merged.

:func:`read_database` opens the file read-only and gives its records as
:class:`~search.db.importer.FileImport` s, one per (workload, device), each record as it
is stored (workload, device, toolchain, status, time, run, source, features), so that
:func:`search.db.importer.import_files` stores them like any file's: a record the target
already holds (the same digest) adds nothing.

Examples
--------
>>> import os, tempfile
>>> from search.measure.base import MeasureRecord
>>> from search.db import Measurement, Workload
>>> path = os.path.join(tempfile.mkdtemp(), "other.db")
>>> w = Workload("k", [8], ("x",))
>>> with TuningDB(path) as other:
...     other.add([Measurement(w, "v100", "t", MeasureRecord.ok({"x": 1}, time_ms=2.0))])
1
>>> is_sqlite(Path(path)), [(f.kind, f.device, f.read) for f in read_database(path)]
(True, [('tuning-db', 'v100', 1)])
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from iobound.errors import InvalidInputError

from ..option_checks import check_path, shown
from ..path_kind import path_kind
from .importer import FileImport, file_device
from .conv_template import CONV_TEMPLATE, conv_algorithm, conv_config_fault, stored_layer
from .model import check_device_name
from .db_file import SQLITE_MAGIC, DatabaseFileError
from .store import TuningDB

__all__ = ["is_sqlite", "read_database"]


def is_sqlite(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a regular file that starts as an SQLite database file does: a
    folder, a missing file or a pipe (never read: that would wait) is none. A ``path`` that
    is no path, one the system refuses to look up (a name too long) or a file it cannot
    read is an InvalidInputError naming it.

    >>> is_sqlite("/"), is_sqlite("/no/such/file.db")
    (False, False)
    """
    name = check_path("path", path)
    if path_kind(name, "path") != "file":
        return False
    try:
        with open(name, "rb") as fh:
            return fh.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError as exc:  # no permission, an I/O error
        raise InvalidInputError(f"path {shown(name)}: cannot read it: "
                                f"{exc.strerror or exc}") from None


def read_database(path: str | os.PathLike, device: str | None = None) -> list[FileImport]:
    """A tuning database's records, one :class:`FileImport` per (workload, device), opened
    read-only (an older schema is read as it would be migrated; the file never changes).
    Every record names its device: with ``device`` given, a database holding another
    device's records is refused, as a file naming another device is.

    >>> import tempfile
    >>> from search.db import Measurement, Workload
    >>> from search.measure.base import MeasureRecord
    >>> path = os.path.join(tempfile.mkdtemp(), "v100.db")
    >>> with TuningDB(path) as other:
    ...     _ = other.add([Measurement(Workload("k", [8], ("x",)), "Tesla V100-SXM2-16GB", "t",
    ...                    MeasureRecord.ok({"x": 1}, time_ms=2.0))])
    >>> [f.device for f in read_database(path, device="v100")]  # a name of the same preset
    ['Tesla V100-SXM2-16GB']
    >>> read_database(path, device="a100")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: ...v100.db records device 'Tesla V100-SXM2-16GB'; --device \
'a100' disagrees (a file's records are never stored under another device)

    Raises
    ------
    InvalidInputError
        Naming the file: not an iobound tuning database, damaged, or another device's; a
        ``path`` that is no path, or that the system refuses to look up (a name too long).
    """
    path = Path(check_path("path", path))
    if device is not None:
        check_device_name(device)
    path_kind(path, "path")  # a lookup refused (a name too long): bad input, named here
    try:
        with TuningDB(path, readonly=True) as db:
            groups: dict[tuple, FileImport] = {}
            layers: dict = {}  # our conv template's workloads: their layer, algorithm
            for m in db.measurements():
                f = groups.get((m.workload, m.device))
                if f is None:
                    file_device(path, m.device, device)
                    if m.workload.template == CONV_TEMPLATE:
                        layers[m.workload] = (stored_layer(m.workload.problem),
                                              conv_algorithm(m.workload.params))
                    f = groups[(m.workload, m.device)] = FileImport(
                        str(path), "tuning-db", m.device, m.workload,
                        tune_params={m.workload: db.tune_params(m.workload)})
                layer, algorithm = layers.get(m.workload, (None, None))
                fault = conv_config_fault(m.record, layer, algorithm) if layer else ""
                if fault:  # as a tuning log's record is refused (log_reader)
                    raise InvalidInputError(f"{path}: a measurement of {m.workload.label()} on "
                                            f"{m.device!r}: {fault}")
                f.measurements.append(m)
    except DatabaseFileError as exc:
        raise InvalidInputError(f"{path}: {exc.reason}") from None
    except sqlite3.Error as exc:
        raise InvalidInputError(f"{path}: cannot read the database: "
                                f"{' '.join(str(exc).split())}") from None
    except InvalidInputError as exc:
        msg = str(exc)
        raise InvalidInputError(msg if str(path) in msg else f"{path}: {msg}") from None
    return sorted(groups.values(), key=lambda f: (f.workload.label(), f.device))
