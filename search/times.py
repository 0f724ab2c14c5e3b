"""What counts as a measured time when a file is read back (replay caches, tuning logs).

A time is a measurement only when it is a real number (not a bool), finite and
positive: a negative, zero, NaN, infinite or non-numeric time in a file would
otherwise become the optimum of a search. Readers turn an entry with such a time
into an ``invalid`` one and count it; they never take it as a measurement.

Examples
--------
>>> as_time(2.5), as_time("2.5"), as_time(-3.6), as_time(0), as_time(float("nan")), as_time(True)
(2.5, None, None, None, None, None)
>>> bad_time_reason(-3.6)
'time -3.6 is not a positive finite number'
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["as_time", "bad_time_reason"]


def as_time(value: Any) -> float | None:
    """``value`` as a float when it is a positive finite number, else None.

    >>> as_time(3), as_time(10**400)  # an int becomes a float; one too large for a float is none
    (3.0, None)
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        t = float(value)
    except OverflowError:  # an integer too large for a float
        return None
    return t if math.isfinite(t) and t > 0 else None


def bad_time_reason(value: Any, what: str = "time") -> str:
    """The message for a time that :func:`as_time` refuses (``value`` shortened).

    >>> bad_time_reason("0.5 ms" * 10, "time_ms")
    "time_ms '0.5 ms0.5 ms0.5 ms0.5 ms0.5 ms0.5 ... is not a positive finite number"
    """
    shown = repr(value) if not isinstance(value, (int, float)) else str(value)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{what} {shown} is not a positive finite number"
