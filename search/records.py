"""The tuning log: one JSON line per measurement, appended and flushed as it happens.

Layout (schema ``iobound.tune-log`` version 1):

- line 1, the header: ``{"schema": "iobound.tune-log", "version": 1, "kind": "header",
  ...run description (space, measurer, strategy, seed, budget)...}``;
- every further line a record: ``{"kind": "record", "index": int, "record":
  MeasureRecord.to_dict()}``.

Each line is written with a single ``write`` and flushed, so a run killed at any
point (even with SIGKILL) leaves every finished measurement in the file; at most
the last line can be cut short, and :func:`read_log` drops such a line (and
:class:`LogWriter` truncates it before appending). No pickle anywhere.

Examples
--------
>>> import tempfile, os
>>> from search.measure.base import MeasureRecord
>>> path = os.path.join(tempfile.mkdtemp(), "run.jsonl")
>>> with LogWriter(path, header={"strategy": "random"}) as log:
...     log.append(3, MeasureRecord.ok({"a": 1}, costs=(2.0,)))
>>> got = read_log(path)
>>> got.header["strategy"], [(e.index, e.record.time_ms) for e in got.entries]
('random', [(3, 2.0)])
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from iobound.errors import InvalidInputError

from .measure.base import MeasureRecord

__all__ = ["SCHEMA", "SCHEMA_VERSION", "LogEntry", "TuneLog", "LogWriter", "read_log"]

SCHEMA = "iobound.tune-log"
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class LogEntry:
    """One logged measurement: the index in the space and the record."""

    index: int
    record: MeasureRecord


@dataclass(frozen=True)
class TuneLog:
    """A log read back: its header and entries in the order they were written."""

    header: dict
    entries: tuple[LogEntry, ...]
    truncated: bool = False  # whether a cut-short last line was dropped


def read_log(path: str | os.PathLike) -> TuneLog:
    """Read a tuning log; a cut-short last line (a killed run) is dropped.

    Raises
    ------
    ValueError
        When the file is missing, is not a tuning log, or has another schema version.
    """
    path = Path(path)
    if not path.is_file():
        raise InvalidInputError(f"log file {str(path)!r} does not exist")
    data = path.read_bytes()
    lines = data.split(b"\n")
    truncated = False
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines:  # no final newline: the last line was being written when the run died
        lines.pop()
        truncated = True
    if not lines:
        raise InvalidInputError(f"log file {str(path)!r} is empty (no header)")
    try:
        header = json.loads(lines[0])
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"log file {str(path)!r}: bad header line: {exc}") from exc
    if header.get("schema") != SCHEMA:
        raise InvalidInputError(f"log file {str(path)!r} is not an iobound tuning log")
    if header.get("version") != SCHEMA_VERSION:
        raise InvalidInputError(f"log file {str(path)!r} has schema version {header.get('version')!r}; "
                         f"this iobound reads version {SCHEMA_VERSION}")
    entries = []
    for n, line in enumerate(lines[1:], start=2):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"log file {str(path)!r} line {n}: {exc}") from exc
        if obj.get("kind") != "record":
            continue
        entries.append(LogEntry(int(obj["index"]), MeasureRecord.from_dict(obj["record"])))
    return TuneLog(header=header, entries=tuple(entries), truncated=truncated)


class LogWriter:
    """Appends records to a tuning log, one flushed line each.

    Parameters
    ----------
    path : path
        The log file. A new file gets ``header``; an existing one (resume) is
        appended to after dropping a cut-short last line.
    header : dict
        The run description written on the first line of a new file.
    """

    def __init__(self, path: str | os.PathLike, header: Mapping[str, Any] | None = None):
        self.path = Path(path)
        if self.path.is_file() and self.path.stat().st_size > 0:
            data = self.path.read_bytes()
            if not data.endswith(b"\n"):
                with open(self.path, "r+b") as fh:
                    fh.truncate(data.rfind(b"\n") + 1)
            self._fh = open(self.path, "a", encoding="utf-8")
        else:
            if self.path.parent and not self.path.parent.exists():
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "w", encoding="utf-8")
            head = {"schema": SCHEMA, "version": SCHEMA_VERSION, "kind": "header"}
            head.update(header or {})
            self._write(head)

    def _write(self, obj: Mapping[str, Any]) -> None:
        self._fh.write(json.dumps(obj, sort_keys=True, default=_jsonable) + "\n")
        self._fh.flush()

    def append(self, index: int, record: MeasureRecord) -> None:
        """Write one record line and flush it."""
        self._write({"kind": "record", "index": int(index), "record": record.to_dict()})

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()

    def __enter__(self) -> "LogWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _jsonable(obj: Any) -> Any:
    """numpy scalars and other simple objects in JSON."""
    if hasattr(obj, "item"):
        return obj.item()
    if isinstance(obj, (set, tuple)):
        return list(obj)
    raise TypeError(f"cannot write {type(obj).__name__} to a tuning log")
