"""Writing a tuning log (its format and reading: :mod:`search.records`): a
:class:`LogWriter` appends one flushed line per record under an exclusive lock, and a
resumed run's records are copied into a new log whole or not at all (:func:`copy_log`).

Examples
--------
>>> import tempfile, os
>>> from search.measure.base import MeasureRecord
>>> from search.records import read_log
>>> path = os.path.join(tempfile.mkdtemp(), "run.jsonl")
>>> with LogWriter(path, header={"strategy": "random"}) as log:
...     log.append(3, MeasureRecord.ok({"a": 1}, costs=(2.0,)))
>>> [e.index for e in read_log(path).entries]
[3]
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import stat
from pathlib import Path
from typing import Any, Mapping

from iobound.arg_checks import check_type, shown
from iobound.errors import InvalidInputError, OutputWriteError

from .measure.base import MeasureRecord
from .file_bytes import is_gzip
from .option_checks import check_count, check_flag
from .outputs import json_safe
from .records import LOG_HEAD, LOG_HEAD_TEXT, as_logged, is_cut_header, jsonable, read_log

__all__ = ["LogWriter", "header_line", "record_line", "COPY_MARK", "copy_log", "copy_entries",
           "hold_log", "check_not_written", "check_appendable"]


def check_appendable(path: str | os.PathLike) -> None:
    """InvalidInputError when ``path`` is a compressed log: appended to, its records would
    be lost (a run continuing a log in place appends to it).

    >>> import gzip, tempfile
    >>> p = Path(tempfile.mkdtemp()) / "run.jsonl.gz"
    >>> with gzip.open(p, "wt") as fh:
    ...     _ = fh.write(header_line({}) + "\\n")
    >>> check_appendable(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: log file '...run.jsonl.gz' is compressed (gzip): ...
    >>> check_appendable(p.with_suffix(""))  # a plain or missing file: nothing to say
    """
    path = Path(path)
    if path.is_file():
        with open(path, "rb") as fh:
            if is_gzip(fh.read(2)):
                raise InvalidInputError(
                    f"log file {str(path)!r} is compressed (gzip): a run cannot append to it; "
                    f"decompress it (gunzip) and resume from the plain file")


def header_line(header: Mapping[str, Any]) -> str:
    """A log's header line: :data:`~search.records.LOG_HEAD_TEXT` first (what tells a cut
    header from another file's bytes), then the run's keys, sorted as every line's. A
    value that is no JSON (NaN, an infinity, an object JSON cannot hold) is refused,
    naming its key: the log is read by strict JSON readers too.

    >>> header_line({"strategy": "random"})
    '{"schema": "iobound.tune-log", "version": 1, "kind": "header", "strategy": "random"}'
    >>> header_line({"goal": float("nan")})
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: the log header's 'goal' is nan, which JSON cannot hold
    """
    check_type("header", header, Mapping)
    rest = {k: v for k, v in header.items() if k not in LOG_HEAD}
    for key, value in rest.items():
        try:
            json.dumps({key: value}, allow_nan=False, default=jsonable)
        except (TypeError, ValueError):
            raise InvalidInputError(f"the log header's {str(key)[:40]!r} is {shown(value)}, "
                                    f"which JSON cannot hold") from None
    try:
        text = json.dumps(rest, sort_keys=True, allow_nan=False, default=jsonable)
    except (TypeError, ValueError) as exc:  # keys of mixed kinds cannot be sorted
        raise InvalidInputError(f"the log header cannot be written as JSON ({exc})") from None
    return LOG_HEAD_TEXT + (", " + text[1:] if text != "{}" else "}")


def record_line(obj: Mapping[str, Any]) -> str:
    """The log line of ``obj`` (a record entry) in strict JSON: a NaN or an infinity where no
    time is read (a measurer's ``extra``) is written as null, as :func:`json_safe` writes
    it, never as the tokens NaN and Infinity that strict JSON readers (jq, browsers)
    refuse. Times need no such care: a record whose time cannot be a measurement is
    logged as ``invalid`` (:func:`~search.records.as_measured`).

    >>> record_line({"index": 0, "record": {"extra": {"traffic": float("nan")}}})
    '{"index": 0, "record": {"extra": {"traffic": null}}}'
    """
    try:
        return json.dumps(obj, sort_keys=True, allow_nan=False, default=jsonable)
    except ValueError:  # a NaN or an infinity, numpy's too
        return json.dumps(json_safe(as_logged(obj)), sort_keys=True, allow_nan=False)


class LogWriter:
    """Appends records to a tuning log, one flushed line each.

    Parameters
    ----------
    path : path
        The log file, plain text whatever its name. A new file gets ``header`` (so does
        an empty one, or one holding only a cut header: no measurement was logged); an
        existing one (resume) is appended to after dropping a cut-short last line; a
        compressed one (``gzip run.jsonl``) is refused, left as it is.
    header : dict
        The run description written on the first line of a new file.

    Examples
    --------
    >>> import tempfile, os
    >>> from search.records import read_log
    >>> path = os.path.join(tempfile.mkdtemp(), "run.jsonl")
    >>> with LogWriter(path, header={"seed": 0}) as log:
    ...     log.append(0, MeasureRecord.ok({"a": 1}, costs=(2.0,)))
    >>> with LogWriter(path, header={"seed": 1}) as log:  # resumed: appended, header kept
    ...     log.append(1, MeasureRecord.ok({"a": 2}, costs=(3.0,)), reused=True)
    >>> got = read_log(path)
    >>> got.header["seed"], [(e.index, e.reused) for e in got.entries]
    (0, [(0, False), (1, True)])
    """

    def __init__(self, path: str | os.PathLike, header: Mapping[str, Any] | None = None):
        self.path = Path(path)
        self._held = None  # a resumed log this one continues (:meth:`hold`)
        self._started = False  # whether this writer began the file (wrote its header)
        self.appended = 0  # records written by this writer
        self._header_line = header_line(header or {})  # checked before the file is touched
        try:
            self._open()
        except OSError as exc:  # a folder, a missing parent that cannot be made, read-only
            raise InvalidInputError(f"cannot write the log {str(path)!r}: "
                                    f"{exc.strerror or exc}") from None

    def _open(self) -> None:
        check_appendable(self.path)
        if self.path.parent and not self.path.parent.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
        # opened to append (every line lands at the end) and nothing cut before the lock is
        # ours: a log another process still writes is refused, never written over
        self._fh = open(self.path, "a", encoding="utf-8")
        try:
            fd = self._fh.fileno()
            regular = stat.S_ISREG(os.fstat(fd).st_mode)  # a device or a pipe is only written
            if regular:
                _lock_log(fd, self.path)
            data = self.path.read_bytes() if regular else b""
            if b"\n" in data:  # a header at least: append, after a cut-short last line
                if not data.endswith(b"\n"):
                    os.ftruncate(fd, data.rfind(b"\n") + 1)
            else:  # new, empty, or only a cut header (killed while writing it): a new log
                if not is_cut_header(data):
                    raise InvalidInputError(f"the log {str(self.path)!r} holds a file that is no "
                                            "run's log; it is not written over")
                if data:
                    os.ftruncate(fd, 0)
                self._write_line(self._header_line)
                self._started = regular
        except BaseException:
            self._fh.close()
            raise

    def _write(self, obj: Mapping[str, Any]) -> None:
        self._write_line(record_line(obj))

    def _write_line(self, text: str) -> None:
        try:
            self._fh.write(text + "\n")
            self._fh.flush()
        except OSError as exc:
            raise self._failed(exc) from None

    def _failed(self, exc: OSError) -> OutputWriteError:
        """A write the system refused mid-run (a full disk, a file-size limit): what the
        log holds is kept, a cut last line is dropped when it is resumed."""
        return OutputWriteError(f"could not write the log {str(self.path)!r} "
                                f"({exc.strerror or exc}); the records written before are "
                                f"kept in it (resume with --resume {self.path})")

    def append(self, index: int, record: MeasureRecord, reused: bool = False) -> None:
        """Write one record line and flush it (``reused``: another run's record, marked so
        that a resume tells the run's own measurements from its history's). An index that
        is no integer from 0 (``1.7`` was logged as 1), a record that is no
        :class:`MeasureRecord` or a ``reused`` that is no bool is an InvalidInputError
        naming it, and nothing is written."""
        index = check_count("index", index)  # the log reader's range: 0 to 2**63 - 1
        check_type("record", record, MeasureRecord)
        line = {"kind": "record", "index": index, "record": record.to_dict()}
        self._write({**line, "reused": True} if check_flag("reused", reused) else line)
        self.appended += 1

    def hold(self, held) -> None:
        """Keep ``held`` (a :func:`hold_log` handle) open, and so locked, while this writer
        lives: the resumed log a run continues into this new one."""
        self._held = held

    def close(self, drop_unused: bool = False) -> None:
        """Close the file (and the resumed log it holds). ``drop_unused``: a log this
        writer began and wrote no record into is removed, while it is still locked, so
        that a run that failed before measuring anything leaves no log behind refusing
        the same ``--log`` again; a resumed log or one holding records is always kept.

        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "run.jsonl")
        >>> LogWriter(path, header={"seed": 0}).close(drop_unused=True); os.path.exists(path)
        False
        """
        held, self._held = self._held, None
        try:
            if drop_unused and self._started and not self.appended and not self._fh.closed:
                with contextlib.suppress(OSError):  # the file only: what it would drop is no record
                    os.unlink(self.path)
            if not self._fh.closed:
                self._fh.close()
        except OSError as exc:  # the last flush
            raise self._failed(exc) from None
        finally:
            if held is not None:
                held.close()

    def __enter__(self) -> "LogWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _written_elsewhere(path) -> InvalidInputError:
    return InvalidInputError(
        f"log file {str(path)!r} is being written by another run that is still going; "
        f"resume it once that run has ended, or give this run its own log")


def _lock_log(fd: int, path: Path) -> None:
    """Hold an exclusive lock on the log open at ``fd`` while this writer lives (released
    when it is closed or its process ends); ``InvalidInputError`` when another writer, of
    this process or another, holds it. A file system without locks is written unlocked."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise _written_elsewhere(path) from None
    except OSError:  # no locks here
        pass


def check_not_written(path: str | os.PathLike) -> None:
    """``InvalidInputError`` when a live run writes the log at ``path`` (holds its lock):
    resumed meanwhile, its configurations would be measured by both runs.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "run.jsonl")
    >>> with LogWriter(path):
    ...     check_not_written(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: log file '...run.jsonl' is being written by another run ...
    >>> check_not_written(path)  # that writer is closed
    """
    if _is_locked(str(path)):
        raise _written_elsewhere(path)


def hold_log(path: str | os.PathLike):
    """The log at ``path`` opened and locked as its writer locks it, so that no other run
    writes or resumes it while the handle is open (a run that continues it into a new
    log, :meth:`LogWriter.hold`); ``InvalidInputError`` when a live run holds it; ``None``
    when it cannot be opened (a device, gone): there is nothing to hold.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "run.jsonl")
    >>> LogWriter(path).close()
    >>> held = hold_log(path)
    >>> LogWriter(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: log file '...run.jsonl' is being written by another run ...
    >>> held.close(); hold_log(os.path.dirname(path)) is None  # a folder: nothing to hold
    True
    """
    try:
        fh = open(path, "rb")
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            fh.close()
            return None
    except OSError:
        return None
    try:
        _lock_log(fh.fileno(), Path(path))
    except BaseException:
        fh.close()
        raise
    return fh


#: The mark in the name of a log being copied (see :func:`copy_log`).
COPY_MARK = "iobound-resume"


def copy_log(resume: str | os.PathLike, log: str | os.PathLike,
             header: Mapping[str, Any]) -> int | None:
    """Every entry of the log ``resume`` into the new log ``log`` (starting with
    ``header``), written beside it and renamed into place: a run killed (SIGKILL) while
    copying leaves no log holding only some of them (resumed, it would measure the others
    again). How many were copied; None where ``log`` is no regular file (a device, a pipe)
    or nothing can be written beside it: the caller copies into its own writer.

    The copy is named ``.NAME.iobound-resume.`` + 8 random hex digits + ``.copy`` and
    created as a new log is (its mode from the umask): the leftovers of a killed copy are
    removed by the next, and nothing else is (a fixed name could be the resumed log
    itself, or a file of the user's; a copy another run is still writing holds its lock).

    >>> import tempfile, os
    >>> from search.records import read_log
    >>> d = tempfile.mkdtemp()
    >>> with LogWriter(os.path.join(d, "old.jsonl"), header={"seed": 0}) as log:
    ...     log.append(5, MeasureRecord.ok({"a": 1}, costs=(2.0,)))
    >>> copy_log(os.path.join(d, "old.jsonl"), os.path.join(d, "new.jsonl"), {"seed": 1})
    1
    >>> got = read_log(os.path.join(d, "new.jsonl"))
    >>> got.header["seed"], [e.index for e in got.entries], sorted(os.listdir(d))
    (1, [5], ['new.jsonl', 'old.jsonl'])
    """
    import glob
    target = os.path.realpath(log)  # a link is written through, as write_atomic does
    if os.path.exists(target) and not os.path.isfile(target):
        return None
    folder, base = os.path.dirname(target) or ".", os.path.basename(target)
    prefix = f".{base}.{COPY_MARK}."
    try:
        os.makedirs(folder, exist_ok=True)
        for stale in glob.glob(os.path.join(glob.escape(folder), glob.escape(prefix)
                                            + "[a-z0-9_]" * 8 + ".copy")):
            if os.path.isfile(stale) and not os.path.samefile(stale, resume) \
                    and not _is_locked(stale):
                os.unlink(stale)
        tmp = os.path.join(folder, f"{prefix}{secrets.token_hex(4)}.copy")
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # the umask applies
    except OSError:  # a folder that cannot be made or written to
        return None
    try:
        with LogWriter(tmp, header) as writer:
            copied = copy_entries(writer, resume)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return copied


def _is_locked(path: str) -> bool:
    """Whether a writer (:func:`_lock_log`) holds the file at ``path``: a live copy."""
    try:
        with open(path, "rb") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:  # gone meanwhile, or no locks here
        return False
    return False


def copy_entries(writer: LogWriter, log: str | os.PathLike) -> int:
    """Append every entry of the log at ``log`` to ``writer`` (a run resumed into a new
    log, which then holds the whole run); how many were copied.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> with LogWriter(os.path.join(d, "old.jsonl")) as log:
    ...     log.append(0, MeasureRecord.ok({"a": 1}, costs=(2.0,)))
    ...     log.append(1, MeasureRecord.ok({"a": 2}, costs=(3.0,)), reused=True)
    >>> with LogWriter(os.path.join(d, "new.jsonl")) as new:
    ...     copy_entries(new, os.path.join(d, "old.jsonl"))
    2
    """
    entries = read_log(log).entries
    for e in entries:
        writer.append(e.index, e.record, reused=e.reused)
    return len(entries)
