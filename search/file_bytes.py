"""The bytes of a tuning file (a log, a Kernel Tuner cache, a T4 results file), capped.

A tuning file is read whole and parsed in memory, so it is refused past
:data:`iobound.limits.TUNING_FILE_CHARS` bytes *gunzipped*, before they are held: a small
gzip file may unpack to gigabytes. Compression is told by gzip's magic number, whatever the
file's name (a compressed cache named ``.json`` reads as one named ``.json.gz``).

Examples
--------
>>> import gzip, tempfile
>>> from pathlib import Path
>>> p = Path(tempfile.mkdtemp()) / "c.json"
>>> _ = p.write_bytes(gzip.compress(b'{"cache": {}}'))
>>> read_capped(p, "cache file")
b'{"cache": {}}'
"""

from __future__ import annotations

import gzip
import os

from iobound import limits
from iobound.errors import InvalidInputError

__all__ = ["is_gzip", "read_capped"]

_CHUNK = 1 << 24  # bytes read at a time


def is_gzip(data: bytes) -> bool:
    """Whether ``data`` is gzip's (its magic number), whatever the file's name.

    >>> is_gzip(gzip.compress(b"{}")), is_gzip(b"{}"), is_gzip(b"")
    (True, False, False)
    """
    return data[:2] == b"\x1f\x8b"


def read_capped(path: str | os.PathLike, what: str) -> bytes:
    """The file's bytes, gunzipped when they are gzip's; InvalidInputError naming ``what``
    past :data:`iobound.limits.TUNING_FILE_CHARS` bytes. OSError, EOFError and zlib.error
    (unreadable, not gzip after its magic, cut short) are the caller's to name.

    >>> import tempfile
    >>> from pathlib import Path
    >>> p = Path(tempfile.mkdtemp()) / "run.jsonl"
    >>> _ = p.write_bytes(b'{"header": 1}')
    >>> read_capped(p, "log")  # not gzip: the bytes as they are
    b'{"header": 1}'
    """
    limit = limits.TUNING_FILE_CHARS  # looked up here: tests lower it
    too_large = InvalidInputError(f"{what} is too large: more than {limit} bytes "
                                  "(gunzipped; iobound.limits.TUNING_FILE_CHARS)")
    with open(path, "rb") as raw:
        compressed = is_gzip(raw.read(2))
        if not compressed and os.fstat(raw.fileno()).st_size > limit:
            raise too_large  # told by its size, before gigabytes are read
        raw.seek(0)
        fh = gzip.GzipFile(fileobj=raw) if compressed else raw
        parts, size = [], 0
        while part := fh.read(min(_CHUNK, limit + 1 - size)):
            parts.append(part)
            size += len(part)
            if size > limit:
                raise too_large
    return b"".join(parts)
