"""Output paths checked before any work starts (a file to write, a folder to write into),
and files written whole or not at all (:func:`write_atomic`).

An empty path, a folder where a file is wanted (or a file where a folder is), a missing
or unwritable parent, or an unwritable place is an
:class:`~iobound.errors.InvalidInputError` naming the option, so a run never fails at
its end for a path it could have refused at its start. Writability is tested with a
real create (removed again), since permissions do not stop root. One file named by two
options (``--log`` and ``--export-cache``, say: the second write would destroy the
first) is refused too (:func:`check_distinct_files`).

Examples
--------
>>> import tempfile
>>> d = tempfile.mkdtemp()
>>> check_output_file("--log", os.path.join(d, "run.jsonl")).name
'run.jsonl'
"""

from __future__ import annotations

import math
import os
import secrets
import tempfile
import zlib
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from iobound.arg_checks import check_path, check_type
from iobound.errors import InvalidInputError

__all__ = ["check_output_file", "check_not_tuning_data", "check_output_dir", "check_distinct_files",
           "json_safe", "write_atomic"]


def _nonempty(flag: str, path: str | os.PathLike) -> Path:
    text = check_path(flag, path)  # a NUL refused too
    if not text.strip():
        raise InvalidInputError(f"{flag}: the path is empty")
    return Path(text)


def _writable_parent(flag: str, path: Path) -> None:
    parent = path.parent
    if not parent.exists():
        raise InvalidInputError(f"{flag} {str(path)!r}: the folder {str(parent)!r} does not exist")
    if not parent.is_dir():
        raise InvalidInputError(f"{flag} {str(path)!r}: {str(parent)!r} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InvalidInputError(f"{flag} {str(path)!r}: the folder {str(parent)!r} is not writable")


def check_not_tuning_data(flag: str, path: str | os.PathLike, cache_export: bool = False) -> None:
    """Refuse an output that would replace an existing SQLite database, tuning log or
    Kernel Tuner cache (measurements named by mistake: the output replaces the file whole,
    and the measurements in it would be lost). A cache export (``cache_export``) may
    replace a cache whose measurements it keeps; that is checked when it is written
    (:func:`search.kt_cache_write.check_keeps_measurements`).

    >>> check_not_tuning_data("--export-cache", "/no/such/file.json")
    """
    from .db.merge import is_sqlite  # lazily: the database modules build on this one
    from .records import is_log_file
    path = check_path(flag, path)  # an int would be taken for an open file's number
    try:
        # a pipe is not read (that would wait or take its bytes)
        regular = os.path.isfile(path)
        what = ("an SQLite database" if regular and is_sqlite(Path(path))
                else "a tuning log" if regular and is_log_file(path)
                else "a Kernel Tuner cache" if regular and not cache_export and _is_cache(path)
                else None)
    except (OSError, ValueError, EOFError, zlib.error):  # refused, or a damaged .gz: not ours
        return
    if what:
        raise InvalidInputError(f"{flag} {str(path)[:80]!r} is {what}; writing would replace it "
                                "and its measurements: give another file")


def _is_cache(path: str | os.PathLike) -> bool:
    """Whether ``path`` reads as a Kernel Tuner cache with at least one measurement."""
    from .kt_cache import load_cache
    try:
        return bool(load_cache(path).entries)
    except InvalidInputError:
        return False


def check_output_file(flag: str, path: str | os.PathLike) -> Path:
    """Refuse an output file path that cannot be written, before any work starts.

    An empty path, a folder, a missing or unwritable parent folder, or an existing file
    that is not writable is an :class:`~iobound.errors.InvalidInputError` naming ``flag``.

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> check_output_file("--emit", d)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --emit '...' is a folder; give a file name
    >>> check_output_file("--emit", os.path.join(d, "k.cu")).name
    'k.cu'
    """
    p = _nonempty(flag, path)
    try:
        if p.is_dir():
            raise InvalidInputError(f"{flag} {str(p)!r} is a folder; give a file name")
        if p.exists():  # through symbolic links (/dev/stdout is one, to a pipe or a tty)
            if not p.is_file() and not p.is_char_device() and not p.is_fifo():
                raise InvalidInputError(f"{flag} {str(p)!r} is not a regular file")
            if not os.access(p, os.W_OK):
                raise InvalidInputError(f"{flag} {str(p)!r} is not writable")
            if p.is_file():
                open(p, "ab").close()  # appending nothing changes nothing, but proves we can
                # write_atomic replaces the file (a link's target) from beside it
                real = Path(os.path.realpath(p))
                _writable_parent(flag, real)
                tempfile.TemporaryFile(dir=real.parent).close()
            return p  # a device or a pipe is written into (opening a pipe would wait)
        # a link to a file not made yet is written through: the file it names is created
        target = Path(os.path.realpath(p)) if p.is_symlink() else p
        _writable_parent(flag, target)
        open(target, "xb").close()  # permissions do not stop root; a real create tells the truth
        target.unlink()
    except OSError as exc:  # a name too long, a read-only file system, /proc...
        raise InvalidInputError(f"{flag} {str(p)[:80]!r}: {exc.strerror or exc}") from None
    return p


def check_output_dir(flag: str, path: str | os.PathLike) -> Path:
    """Refuse an output folder that cannot be used, before any work starts.

    An empty path, an existing non-folder, a missing or unwritable parent (for a folder
    still to be created) or an unwritable folder is an
    :class:`~iobound.errors.InvalidInputError` naming ``flag``.

    >>> import tempfile
    >>> f = tempfile.mkstemp()[1]
    >>> check_output_dir("--out-dir", f)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --out-dir '...' is a file; give a folder
    """
    p = _nonempty(flag, path)
    try:
        if p.exists():
            if not p.is_dir():
                raise InvalidInputError(f"{flag} {str(p)!r} is a file; give a folder")
            if not os.access(p, os.W_OK | os.X_OK):
                raise InvalidInputError(f"{flag} {str(p)!r} is not writable")
            tempfile.TemporaryFile(dir=p).close()  # a real write: permissions do not stop root
            return p
        _writable_parent(flag, p)
        tempfile.TemporaryFile(dir=p.parent).close()
    except OSError as exc:
        raise InvalidInputError(f"{flag} {str(p)[:80]!r}: {exc.strerror or exc}") from None
    return p


def _identity(path: str | os.PathLike) -> tuple:
    """What makes two paths one file: device and inode of an existing file (hard and
    symbolic links included), else the absolute path with its links resolved. Of the path
    as it is written (``Path`` drops a trailing ``/`` and ``/.``: "h.db/" writes h.db, and
    was taken for another file)."""
    path = Path(os.fspath(path))
    try:
        st = os.stat(path)
        return ("inode", st.st_dev, st.st_ino)
    except (OSError, ValueError):
        return ("path", os.path.realpath(path))


def check_distinct_files(named: Sequence[tuple[str, str | os.PathLike | None]]) -> None:
    """Refuse one file named by two of the options ``named`` (``(flag, path)`` pairs; a
    ``None`` or empty path is skipped, and so is a flag named twice with one path).

    Each of these files is written (or read) whole by its own step, so a file given twice
    would be overwritten by the other step, or read as what it is not.

    >>> d = tempfile.mkdtemp()
    >>> check_distinct_files([("--log", os.path.join(d, "a")), ("--history", os.path.join(d, "b"))])
    >>> check_distinct_files([("--log", os.path.join(d, "a")),
    ...                       ("--export-cache", os.path.join(d, ".", "a"))])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --export-cache '...a' is also given as --log; give each its own file
    """
    seen: dict[tuple, str] = {}
    for flag, path in named:
        if path is not None:
            path = check_path(flag, path)
        if path is None or not path.strip():
            continue
        other = seen.setdefault(_identity(path), flag)
        if other != flag:
            raise InvalidInputError(f"{flag} {str(os.fspath(path))[:80]!r} is also given as "
                                    f"{other}; give each its own file")


def write_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` whole or not at all.

    The bytes go to a temporary file in the same folder, which then replaces ``path``
    (``os.replace``): a reader, or a write that fails, never leaves a cut-off file, and
    an existing file stays as it was until the new one is complete. A symbolic link is
    written through (the file it points to is replaced, the link stays), and a path that
    is no regular file (``/dev/null``, a pipe, ``/dev/stdout``) is written into: replacing
    it would put a regular file where the device was.

    >>> d = tempfile.mkdtemp()
    >>> write_atomic(os.path.join(d, "a.txt"), b"hi").read_bytes(), os.listdir(d)
    (b'hi', ['a.txt'])
    """
    path = Path(check_path("path", path))
    check_type("data", data, (bytes, bytearray, memoryview))
    if path.exists() and not path.is_file():  # a device or a pipe: write into it
        with open(path, "wb") as fh:
            fh.write(data)
        return path
    if path.is_symlink():  # replace what it points to, not the link
        path = Path(os.path.realpath(path))
    # the name's first 200 bytes, not characters: 80 CJK characters are 240 bytes, a name
    # the file system takes, but with the temporary's marks past its NAME_MAX (255 bytes)
    stem = os.fsdecode(os.fsencode(path.name)[:200])
    tmp = path.with_name(f".{stem}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
    except OSError as exc:  # said of the folder: "No such file" of an existing file misled
        raise OSError(exc.errno, f"no file can be created in its folder {str(path.parent)!r} "
                                 f"({exc.strerror or exc})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def json_safe(obj: Any) -> Any:
    """``obj`` with every NaN or infinite float replaced by None, so the output is valid
    JSON (``json.dumps`` would write the non-standard tokens NaN and Infinity); numpy
    scalars and arrays become the Python numbers and lists they hold.

    >>> import json
    >>> json.dumps(json_safe({"a": [1.5, float("nan")], "b": float("inf")}))
    '{"a": [1.5, null], "b": null}'
    >>> json.dumps(json_safe([np.float32("nan"), np.int64(3), np.array([1.0, np.inf])]))
    '[null, 3, [1.0, null]]'
    """
    if isinstance(obj, np.ndarray):
        return json_safe(obj.tolist())
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj
