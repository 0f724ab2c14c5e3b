"""Which records are measurements: the one rule a tuning log is read back with and a live
run applies as records arrive, so a run and its resume see the same records (a time, cost
or surrogate cost that is no positive finite number makes the record ``invalid``).

Examples
--------
>>> bad_time({"status": "ok", "time_ms": -1.0})
'time -1.0 is not a positive finite number'
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

from kernels.status import Status

from .measure.base import MeasureRecord
from .option_checks import check_type, shown
from .times import as_time, bad_time_reason

__all__ = ["bad_time", "as_measured"]


def bad_time(rec: Mapping[str, Any]) -> str:
    """Why the logged record ``rec``'s numbers cannot be a measurement ("" when they can);
    the rule of the log reader and of the tuner as records arrive. A surrogate cost that is
    that no record can hold (not a real number within float range) makes any record, ok
    or failed, one that cannot be; a record with no status is taken as a failure.

    >>> bad_time({"status": "ok", "time_ms": 2.0}), bad_time({})
    ('', '')
    >>> bad_time({"status": "ok", "time_ms": 2.0, "surrogate_cost": "x"})
    "surrogate cost 'x' is not a positive finite number"
    """
    check_type("a logged record", rec, Mapping)
    costs = rec.get("costs") or []
    if not isinstance(costs, (list, tuple)):
        return f"costs {shown(costs)} are not a list of times"
    for c in costs:
        if as_time(c) is None:
            return bad_time_reason(c, "cost")
    extra = rec.get("extra")
    extra = extra if isinstance(extra, Mapping) else {}
    surrogate = rec.get("surrogate_cost", extra.get("surrogate_cost"))  # older logs: in extra
    if surrogate is not None and not _real(surrogate):  # a record cannot hold it
        return bad_time_reason(surrogate, "surrogate cost")
    if rec.get("status") != Status.OK.value:
        return "" if rec.get("time_ms") is None else bad_time_reason(rec.get("time_ms"),
                                                                     "time of a failure")
    t = rec.get("time_ms")
    if t is not None:
        return "" if as_time(t) is not None else bad_time_reason(t, "time")
    if surrogate is not None and as_time(surrogate) is None:
        return bad_time_reason(surrogate, "surrogate cost")
    return ""


def _real(value: Any) -> bool:
    """Whether ``value`` is a real number (not a bool) within float range: what a record's
    surrogate cost may be (:class:`~search.measure.base.MeasureRecord`)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    try:
        float(value)
    except OverflowError:
        return False
    return True


def as_measured(rec: MeasureRecord) -> MeasureRecord:
    """``rec``, or an ``invalid`` record of its config when its numbers cannot be a
    measurement (a time, cost or surrogate cost that is not a positive finite number).

    The rule is the one a log is read back with (:func:`read_log`), so a
    live run and its resume see the same records: a 0 ms time counts as evaluated, never
    as the best, in both. The error names the bad number; ``extra`` keeps the measurer's
    data and the status it gave (``measured_status``).

    >>> as_measured(MeasureRecord.ok({"a": 1}, time_ms=0.0)).error
    'measured time 0.0 is not a positive finite number'
    """
    bad = bad_time(rec.to_dict())
    if not bad:
        return rec
    return MeasureRecord.failed(rec.config, Status.INVALID, f"measured {bad}",
                                extra={**rec.extra, "measured_status": rec.status.value})
