"""The JSON of a tuning file (a Kernel Tuner cache or T4 results file), gzipped or not.

One :class:`~iobound.errors.InvalidInputError` naming the file for any damage (missing,
bad gzip, bad encoding, not JSON, nested too deeply, too large: more bytes than
:data:`iobound.limits.TUNING_FILE_CHARS`, gunzipped (:mod:`search.file_bytes`), or more than
memory holds); a cache Kernel Tuner left open while tuning is read closed, as Kernel Tuner
reads it. Compression is told by gzip's magic number, not by the name. What the JSON must hold is
:func:`search.kt_cache.load_cache`'s to check.
"""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path
from typing import Any

from iobound.errors import InvalidInputError

from .file_bytes import read_capped
from .path_kind import path_kind

__all__ = ["read_tuning_json"]

def read_tuning_json(path: str | os.PathLike) -> Any:
    r"""The JSON value in ``path`` (gzipped or not); one InvalidInputError for any damage
    (module doc).

    A cache Kernel Tuner left open (it appends each entry while tuning and closes the
    object at the end: a run interrupted or still going) is read as Kernel Tuner reads
    it, closed (:func:`_closed`).

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "open.json"
    >>> _ = p.write_text('{"tune_params": {"a": [1]}, "cache": {\n"1": {"a": 1, "time": 2.0},')
    >>> read_tuning_json(p)["cache"]
    {'1': {'a': 1, 'time': 2.0}}

    A key given twice in one object is refused (JSON would keep the last: the first
    entry, a measurement, lost):

    >>> _ = p.write_text('{"cache": {"1": {"time": 2.0}, "1": {"time": 9.0}}}')
    >>> read_tuning_json(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: cache file '...open.json' holds the key '1' twice in one ...
    """
    path = Path(path)
    try:
        return _read(path)
    except _DuplicateKey as exc:
        raise InvalidInputError(f"cache file {str(path)!r} holds the key {exc.key[:60]!r} twice "
                                f"in one object (JSON keeps the last: a measurement would be "
                                f"lost)") from None


class _DuplicateKey(Exception):
    """A JSON object naming a key twice (:func:`_unique`)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique(pairs: list) -> dict:
    """A JSON object's pairs as a dict; :class:`_DuplicateKey` when a key is given twice."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


def _read(path: Path) -> Any:
    """:func:`read_tuning_json` but for a duplicate key (:class:`_DuplicateKey`)."""
    if path_kind(path, "cache file") != "file":
        raise InvalidInputError(f"cache file {str(path)!r} does not exist or is not a file")
    try:
        text = read_capped(path, f"cache file {str(path)!r}").decode("utf-8")
        if not text.strip():
            raise InvalidInputError(f"cache file {str(path)!r} is empty")
        try:
            return json.loads(text, object_pairs_hook=_unique)
        except json.JSONDecodeError:
            closed = _closed(text)
            if closed is None:
                raise
            return closed
    except InvalidInputError:
        raise
    except RecursionError:
        raise InvalidInputError(f"cache file {str(path)!r} is nested too deeply") from None
    except MemoryError:
        raise InvalidInputError(f"cache file {str(path)!r} is too large to read into "
                                f"memory") from None
    except (OSError, EOFError, zlib.error, ValueError) as exc:  # bad gzip, JSON, encoding
        msg = " ".join(str(exc).split())[:120]
        raise InvalidInputError(f"cache file {str(path)!r} is not a Kernel Tuner cache file: "
                                f"{type(exc).__name__}: {msg}") from None


def _closed(text: str) -> Any:
    r"""``text`` as an open Kernel Tuner cache, closed: its trailing comma dropped and the
    ``cache`` and outer objects closed, as Kernel Tuner does when it reads one; ``None``
    when that does not make a JSON object with a ``cache`` either.

    >>> _closed('{"tune_params": {"a": [1]}, "cache": {\n"1": {"a": 1, "time": 2.0},')["cache"]
    {'1': {'a': 1, 'time': 2.0}}
    >>> _closed('{"tune_params": {"a": [1]}, "cache": {\n"1": {"a": 1, "ti') is None
    True
    """
    body = text.strip()
    if not body.startswith("{") or '"cache"' not in body:
        return None
    body = body[:-1] if body.endswith(",") else body
    try:
        raw = json.loads(body + "}\n}", object_pairs_hook=_unique)
    except json.JSONDecodeError:
        return None
    return raw if isinstance(raw, dict) and "cache" in raw else None
