"""Label records in a file: JSON lines of schema 1, one :class:`LabelRecord` a line.

Examples
--------
>>> import tempfile, os
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
>>> rec = LabelRecord(layer, "v100", "winograd", 2, {"x": 4}, 1.5, True)
>>> path = os.path.join(tempfile.mkdtemp(), "labels.jsonl")
>>> write_records(path, [rec, rec]), list(read_records(path)) == [rec, rec]
(2, True)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Iterator

from iobound.arg_checks import check_path
from iobound.errors import InvalidInputError

from .dataset import LabelRecord

__all__ = ["write_records", "read_records", "RECORDS_SCHEMA"]


def write_records(path: str | Path, records: Iterable[LabelRecord]) -> int:
    """Write records as JSON lines (schema 1); returns how many.

    >>> import tempfile, os, json
    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1)
    >>> path = os.path.join(tempfile.mkdtemp(), "labels.jsonl")
    >>> write_records(path, [LabelRecord(layer, "v100", "direct", None, {}, None, True)])
    1
    >>> d = json.loads(open(path).readline()); d["schema"], d["time_ms"], d["estimate"]
    (1, None, True)
    """
    n = 0
    with open(path, "w") as f:
        for rec in records:
            f.write(json.dumps({"schema": RECORDS_SCHEMA, **rec.to_dict()}) + "\n")
            n += 1
    return n


#: The schema :func:`write_records` writes and :func:`read_records` reads.
RECORDS_SCHEMA = 1


def read_records(path: str | Path) -> Iterator[LabelRecord]:
    """The records of a file written by :func:`write_records`: a file that cannot be read,
    a line that is no record of schema 1 (not JSON, no object, a wrong field) is an
    InvalidInputError naming the file (and the line).

    >>> list(read_records("/no/such/labels.jsonl"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: cannot read label records '/no/such/labels.jsonl': ...
    """
    name = check_path("path", path)
    try:
        f = open(name)
    except OSError as exc:
        raise InvalidInputError(f"cannot read label records {name[:200]!r}: "
                                f"{exc.strerror or exc}") from None
    with f:
        for no, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"label records {name[:200]!r} line {no}"
            try:
                d = json.loads(line)
            except ValueError as exc:
                raise InvalidInputError(f"{where}: not JSON ({exc})") from None
            if not isinstance(d, dict):
                raise InvalidInputError(f"{where}: a record must be a JSON object, "
                                        f"got {type(d).__name__}")
            schema = d.get("schema", RECORDS_SCHEMA)
            if type(schema) is not int or schema != RECORDS_SCHEMA:
                raise InvalidInputError(f"{where}: schema {schema!r:.20} is not "
                                        f"{RECORDS_SCHEMA}, the one this version reads")
            try:
                yield LabelRecord.from_dict(d)
            except (InvalidInputError, TypeError) as exc:
                raise InvalidInputError(f"{where}: {exc}") from None
