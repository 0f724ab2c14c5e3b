"""A measurement row as the tuning database read it, checked: a row changed by another
program or by hand (a config that is no JSON object of the workload's parameters, a time
stored as text, broken features) is an error naming the file and the row, never skipped.

Examples
--------
>>> time_fault(1.5), time_fault("fast")
('', "its time_ms 'fast' is not a number")
"""

from __future__ import annotations

from iobound.errors import InvalidInputError

from ..times import as_time
from .model import Workload, canon, config_fault, stored_json

__all__ = ["time_fault", "damaged_row", "stored_config", "stored_features"]


def time_fault(time_ms) -> str:
    """Why a stored ``time_ms`` is not one ("" when it is): NULL, or a positive finite
    number (the column's CHECK lets text such as ``'fast'`` through: SQLite compares
    text as greater than any number).

    >>> time_fault(1.5), time_fault(None), time_fault("fast")
    ('', '', "its time_ms 'fast' is not a number")
    """
    if time_ms is None:
        return ""
    if isinstance(time_ms, bool) or not isinstance(time_ms, (int, float)):
        return f"its time_ms {str(time_ms)[:40]!r} is not a number"
    return "" if as_time(time_ms) is not None else f"its time_ms {time_ms!r} is not positive and finite"


def damaged_row(path: str, row_id, fault: str, w: Workload | None = None,
                dev: str | None = None) -> InvalidInputError:
    """The error of a measurement row the database holds but that cannot be one (changed
    by another program or by hand): it names the file, the row (and its workload and
    device when known), never skipped.

    >>> raise damaged_row("t.db", 7, time_fault("fast"), Workload("k", [8], ("x",)), "v100")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: the tuning database 't.db': damaged measurement id 7 of \
k [8] on 'v100': its time_ms 'fast' is not a number
    """
    of = f" of {w.label()} on {dev!r}" if w is not None else ""
    return InvalidInputError(f"the tuning database {path!r}: damaged measurement id {row_id}"
                             f"{of}: {fault}"[:300])


def stored_config(path: str, rid, cfg, time_ms, w: Workload, dev: str) -> dict:
    """The config column of measurement ``rid`` of the database ``path``, checked with
    its time (:func:`damaged_row`).

    >>> w = Workload("k", [8], ("x",))
    >>> stored_config("t.db", 3, '{"x": 2}', 1.0, w, "v100")
    {'x': 2}
    >>> stored_config("t.db", 3, '{"y": 2}', 1.0, w, "v100")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: the tuning database 't.db': damaged measurement id 3 of \
k [8] on 'v100': its config {"y":2}: it lacks x and has y
    """
    try:
        config = stored_json(cfg, "its config")
    except InvalidInputError as exc:
        raise damaged_row(path, rid, str(exc).removeprefix("damaged: "), w, dev) from None
    if not isinstance(config, dict):
        raise damaged_row(path, rid, f"its config {str(cfg)[:40]!r} is not a JSON object",
                          w, dev)
    fault = config_fault(config, w.params) or time_fault(time_ms)
    if fault:
        raise damaged_row(path, rid, fault if fault.startswith("its ") else
                          f"its config {canon(config)[:60]}: {fault}", w, dev)
    return config

def stored_features(path: str, rid, feats, w: Workload, dev: str) -> dict:
    """The features column of measurement ``rid`` of the database ``path``, checked
    (:func:`damaged_row`).

    >>> w = Workload("k", [8], ("x",))
    >>> stored_features("t.db", 3, None, w, "v100"), stored_features("t.db", 3, '{"a": 2}', w, "d")
    ({}, {'a': 2})
    >>> stored_features("t.db", 3, "[1]", w, "v100")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: the tuning database 't.db': damaged measurement id 3 of \
k [8] on 'v100': its features '[1]' are not a JSON object
    """
    try:
        features = stored_json(feats, "its features")
    except InvalidInputError as exc:
        raise damaged_row(path, rid, str(exc).removeprefix("damaged: "), w, dev) from None
    if features is not None and not isinstance(features, dict):
        raise damaged_row(path, rid, f"its features {str(feats)[:40]!r} are not a "
                                          f"JSON object", w, dev)
    return features or {}
