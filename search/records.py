"""The tuning log: one JSON line per measurement, appended and flushed as it happens.

Layout (schema ``iobound.tune-log`` version 1):

- line 1, the header: ``{"schema": "iobound.tune-log", "version": 1, "kind": "header",
  ...run description (space, measurer, strategy, seed, budget)...}``;
- every further line a record: ``{"kind": "record", "index": int, "record":
  MeasureRecord.to_dict()}``, with ``"reused": true`` for another run's record taken
  from the tuning database instead of measured (an optional key: version 1 still).

Each line is written with a single ``write`` and flushed, so a run killed at any
point (even with SIGKILL) leaves every finished measurement in the file; at most
the last line can be cut short, and :func:`read_log` drops such a line (and
:class:`search.log_writer.LogWriter` truncates it before appending). No pickle anywhere.
This module is the format and its reading; writing is :mod:`search.log_writer`, which
records are measurements :mod:`search.record_rules`, values as JSON :mod:`search.log_values`
(each re-exported here).

Examples
--------
>>> import tempfile, os
>>> from search.log_writer import LogWriter
>>> from search.measure.base import MeasureRecord
>>> path = os.path.join(tempfile.mkdtemp(), "run.jsonl")
>>> with LogWriter(path, header={"strategy": "random"}) as log:
...     log.append(3, MeasureRecord.ok({"a": 1}, costs=(2.0,)))
>>> got = read_log(path)
>>> got.header["strategy"], [(e.index, e.record.time_ms) for e in got.entries]
('random', [(3, 2.0)])
"""

from __future__ import annotations

import gzip
import json
import math
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iobound.errors import InvalidInputError
from kernels.status import Status

from .measure.base import MeasureRecord
from .option_checks import shown
from .file_bytes import is_gzip, read_capped
from .path_kind import path_kind
from .log_values import as_logged, jsonable
from .record_rules import as_measured, bad_time

__all__ = ["SCHEMA", "SCHEMA_VERSION", "LOG_HEAD", "LOG_HEAD_TEXT", "LogEntry", "TuneLog",
           "read_log",
           "has_log", "is_cut_header", "log_exists_error",
           "is_log_file", "database_not_log", "as_logged", "jsonable", "bad_time", "as_measured"]

SCHEMA = "iobound.tune-log"
_STATUS_VALUES = tuple(s.value for s in Status)
SCHEMA_VERSION = 1
#: The keys of a log's header line that say what the file is (a run adds its own).
LOG_HEAD = {"schema": SCHEMA, "version": SCHEMA_VERSION, "kind": "header"}
#: How a header line begins: :class:`~search.log_writer.LogWriter` writes these keys first,
#: so the bytes of a header cut short while written are told from any other file's.
LOG_HEAD_TEXT = json.dumps(LOG_HEAD)[:-1]


@dataclass(frozen=True)
class LogEntry:
    """One logged measurement: the index in the space, the record, and whether it was
    another run's, taken from the tuning database (``--reuse``) rather than measured.

    >>> from search.measure.base import MeasureRecord
    >>> e = LogEntry(4, MeasureRecord.ok({"a": 1}, costs=(2.0,)))
    >>> e.index, e.record.time_ms, e.reused
    (4, 2.0, False)
    """

    index: int
    record: MeasureRecord
    reused: bool = False


@dataclass(frozen=True)
class TuneLog:
    """A log read back: its header and entries in the order they were written.

    >>> import tempfile, os
    >>> from search.log_writer import LogWriter
    >>> from search.measure.base import MeasureRecord
    >>> path = os.path.join(tempfile.mkdtemp(), "run.jsonl")
    >>> with LogWriter(path) as log:
    ...     log.append(0, MeasureRecord.ok({"a": 1}, costs=(2.0,)))
    >>> with open(path, "a") as fh:  # a run killed while writing its next line
    ...     _ = fh.write('{"kind": "rec')
    >>> got = read_log(path)
    >>> got.truncated, len(got.entries)
    (True, 1)
    """

    header: dict
    entries: tuple[LogEntry, ...]
    truncated: bool = False  # whether a cut-short last line was dropped


def read_log(path: str | os.PathLike) -> TuneLog:
    """Read a tuning log (plain, or compressed with gzip: told by its first bytes, not its
    name); a cut-short last line (a killed run) is dropped.

    Every line is checked as data. A record whose time (or emulator surrogate cost) is
    not a positive finite number is read as an ``invalid`` record (it counts as
    evaluated, never as the best), and so is one whose costs are not all such times.

    Raises
    ------
    InvalidInputError
        Naming the file (and the line) when it is missing, is not a tuning log, has
        another schema version, or a line is not a well-formed record.

    >>> import json, tempfile
    >>> p = Path(tempfile.mkdtemp()) / "run.jsonl"
    >>> bad = {"kind": "record", "index": 0,
    ...        "record": {"config": {"a": 1}, "status": "ok", "costs": [-1.0]}}
    >>> _ = p.write_text(json.dumps(LOG_HEAD) + "\\n" + json.dumps(bad) + "\\n")
    >>> (e,) = read_log(p).entries
    >>> e.record.status.value, e.record.error
    ('invalid', 'logged cost -1.0 is not a positive finite number')
    """
    path = Path(path)
    where = f"log file {str(path)!r}"
    if path_kind(path, "log file") != "file":  # a name the system refuses: its own words
        raise InvalidInputError(f"{where} does not exist or is not a file")
    try:
        data = read_capped(path, where)
    except MemoryError:
        raise InvalidInputError(f"{where} is too large to read into memory") from None
    except (OSError, EOFError, zlib.error) as exc:  # unreadable, not gzip, cut short
        raise InvalidInputError(f"{where} cannot be read: "
                                f"{getattr(exc, 'strerror', None) or exc}") from None
    lines = data.split(b"\n")
    truncated = False
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines:  # no final newline: the last line was being written when the run died
        lines.pop()
        truncated = True
    if not lines:  # nothing, or one line without its newline: no log, maybe another file
        raise InvalidInputError(_other_kind(path, data) or (
            f"{where} is empty (no header)" if not data.strip() else
            f"{where} holds one unfinished line that is no log header (another kind of file, "
            "or a header cut short: no measurement is in it)"))
    try:
        header = _json_line(lines[0], f"{where}: bad header line")
    except InvalidInputError as exc:
        raise InvalidInputError(_other_kind(path, data) or str(exc)) from None
    if not isinstance(header, dict) or header.get("schema") != SCHEMA:
        raise InvalidInputError(_other_kind(path, data) or f"{where} is not an iobound tuning log")
    version = header.get("version")  # true and 1.0 are no version 1 (JSON's 1 is)
    if isinstance(version, bool) or not isinstance(version, int) or version != SCHEMA_VERSION:
        raise InvalidInputError(f"{where} has schema version {repr(header.get('version'))[:20]}; "
                                f"this iobound reads version {SCHEMA_VERSION}")
    entries = []
    for n, line in enumerate(lines[1:], start=2):
        obj = _json_line(line, f"{where} line {n}")
        if not isinstance(obj, dict):
            raise InvalidInputError(f"{where} line {n}: not a JSON object")
        if obj.get("kind") != "record":
            if "record" in obj:  # a measurement under a mistyped or missing kind: not lost
                raise InvalidInputError(f"{where} line {n}: a line holding a 'record' has kind "
                                        f"{shown(obj.get('kind'))}; expected 'record'")
            continue  # a note, a second header: no measurement in it
        entries.append(_entry(obj, f"{where} line {n}"))
    return TuneLog(header=header, entries=tuple(entries), truncated=truncated)


def _other_kind(path: Path, data: bytes) -> str | None:
    """What a file that is no tuning log is, when it is one of the other files iobound
    reads (a tuning database, a Kernel Tuner cache, a T1 or T4 file), else None."""
    from .db.merge import is_sqlite
    from .kt_cache import NoMeasurementsError, load_cache
    if is_sqlite(path):
        return database_not_log(path)
    if data.lstrip()[:1] != b"{":  # no JSON object: not worth parsing as a cache
        return None
    try:
        cache = load_cache(path)
    except NoMeasurementsError as exc:
        return f"{str(path)!r} is {exc.what}, not a run's log"
    except InvalidInputError:
        return None
    what = "a T4 results file" if cache.file_kind == "t4-results" else "a Kernel Tuner cache file"
    return (f"{str(path)!r} is {what}, not a run's log (replayed with --measure replay:FILE, "
            f"imported with iobound history import)")


def database_not_log(path: str | os.PathLike) -> str:
    """What a resumed SQLite file is said to be (ours or not, it is read with --history).

    >>> database_not_log("tuning.db")
    "'tuning.db' is an SQLite database, not a run's log (a tuning database is read with --history)"
    """
    return (f"{str(path)!r} is an SQLite database, not a run's log (a tuning database is read "
            "with --history)")


def is_log_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a tuning log: its first line, gunzipped when it is gzip's, is a
    header of :data:`SCHEMA` (a cut or damaged later line does not matter here). A path
    that names no regular file (missing, a folder, a pipe: never opened) is no log;
    a file that cannot be read (no permission, gzip data damaged where its first line is)
    is an InvalidInputError naming it.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "x.jsonl"
    >>> _ = p.write_text('{"schema": "something else"}')
    >>> is_log_file(p), is_log_file(p.parent), is_log_file(p.parent / "missing.jsonl")
    (False, False, False)
    """
    if path_kind(path, "log file") != "file":
        return False
    try:
        with open(path, "rb") as fh:
            compressed = is_gzip(fh.read(2))
            fh.seek(0)
            first = (gzip.GzipFile(fileobj=fh) if compressed else fh).readline(1 << 20)
    except (OSError, EOFError, zlib.error) as exc:  # unreadable, damaged or cut-short gzip
        raise InvalidInputError(f"log file {str(path)!r} cannot be read: "
                                f"{getattr(exc, 'strerror', None) or exc}") from None
    try:
        head = json.loads(first)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return False
    return isinstance(head, dict) and head.get("schema") == SCHEMA


def is_cut_header(data: bytes) -> bool:
    """Whether ``data``, a file's bytes with no whole line, are what a run killed before or
    while writing its header leaves (nothing, or the start of a header line): no
    measurement, written over by a new log. Any other bytes are someone's file.

    >>> is_cut_header(b""), is_cut_header(b'{"schema": "iob'), is_cut_header(b'{"my": "notes"}')
    (True, True, False)
    """
    head = LOG_HEAD_TEXT.encode()
    return head.startswith(data) or data.startswith(head)


def has_log(path: str) -> bool:
    """Whether ``path`` holds a log, or anything but a cut header (:func:`is_cut_header`):
    what a new log must not write over.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "run.jsonl"
    >>> _ = p.write_text('{"schema": "iob'); has_log(str(p))
    False
    >>> _ = p.write_text('{"my": "notes"}'); has_log(str(p))
    True
    """
    p = Path(path)
    if path_kind(p, "log") != "file" or p.stat().st_size == 0:
        return False
    with open(p, "rb") as fh:
        first = fh.readline(1 << 20)
    return first.endswith(b"\n") or not is_cut_header(first)


def log_exists_error(path: str, flag: str, resume_flag: str) -> InvalidInputError:
    """The refusal of a new log at ``path``, which :func:`has_log`: a run's log is
    continued with ``resume_flag``; any other file is not written over.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "notes.txt"
    >>> _ = p.write_text("my notes")
    >>> raise log_exists_error(str(p), "--log", "--resume")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --log '...notes.txt' exists and is no run's log; ...
    """
    try:
        ours = is_log_file(path)
    except (InvalidInputError, OSError, EOFError, zlib.error):  # unreadable, damaged gzip
        ours = False
    if ours:
        return InvalidInputError(f"{flag} {str(path)!r} exists; pass it as {resume_flag} to "
                                 "continue that run")
    return InvalidInputError(f"{flag} {str(path)!r} exists and is no run's log; it is not "
                             "written over (give a new file)")


def _json_line(line: bytes, where: str) -> Any:
    try:
        return json.loads(line)
    except RecursionError:
        raise InvalidInputError(f"{where}: nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise InvalidInputError(f"{where}: {' '.join(str(exc).split())[:120]}") from None


def _entry(obj: dict, where: str) -> LogEntry:
    """One record line checked as data (see :func:`read_log`)."""
    index, rec = obj.get("index"), obj.get("record")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < 1 << 63:
        raise InvalidInputError(f"{where}: 'index' must be a non-negative 64-bit integer")
    if not isinstance(rec, dict) or not isinstance(rec.get("config"), dict):
        raise InvalidInputError(f"{where}: 'record' must be an object with a 'config' object")
    if rec.get("status") not in _STATUS_VALUES:
        raise InvalidInputError(f"{where}: status must be one of {', '.join(_STATUS_VALUES)}")
    for key, kind in (("costs", list), ("error", str), ("estimate", bool), ("extra", dict)):
        if key in rec and not isinstance(rec[key], kind):
            raise InvalidInputError(f"{where}: {key!r} must be a {kind.__name__}")
    stamp = rec.get("timestamp", 0.0)
    if isinstance(stamp, bool) or not isinstance(stamp, (int, float)) or not _finite(stamp):
        raise InvalidInputError(f"{where}: 'timestamp' must be a finite number")
    bad = bad_time(rec)
    if bad:
        record = MeasureRecord.failed(rec["config"], Status.INVALID, f"logged {bad}",
                                      extra={"logged_status": rec["status"]})
    else:
        try:
            record = MeasureRecord.from_dict(rec)
        except InvalidInputError as exc:  # what the checks above missed: still this line's
            raise InvalidInputError(f"{where}: {exc}") from None
    return LogEntry(index, record, obj.get("reused") is True)


def _finite(number: int | float) -> bool:
    try:
        return math.isfinite(number)
    except OverflowError:  # an integer too large for a float
        return False
