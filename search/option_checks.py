"""Checks of option fields and arguments: whole counts, finite numbers in a range, flags.

The option dataclasses of the search (and the functions that take such numbers) check
their fields with these, so that NaN, an infinity, ``2.5`` for a count, ``True`` for a
count or ``"no"`` for a flag is an :class:`~iobound.errors.InvalidInputError` naming
the field and the value where it is given, never a comparison that NaN passes, a
``TypeError`` or a silent change of behaviour later. Whole numbers go through
:func:`iobound.limits.check_int` (the one integer check of the project).

Examples
--------
>>> check_count("doubt", 1), check_number("decay", 0.25, 0, 1, high_open=True)
(1, 0.25)
>>> check_count("doubt", 2.5)
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: doubt must be an integer, got 2.5
>>> check_number("decay", float("nan"), 0, 1, high_open=True)
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: decay must be a finite number in [0, 1), got nan
>>> check_flag("lottery", "no")
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: lottery must be True or False, got 'no'
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Mapping

from iobound import limits
from iobound.errors import InvalidInputError

__all__ = ["check_count", "check_number", "check_flag", "check_records"]

#: A count of an option (rounds, candidates, tree depth): a signed 64-bit integer at most.
COUNT_HIGH = (1 << 63) - 1
#: ``low`` of :func:`check_count` for an integer option with no minimum of its own.
INT64_LOW = -(1 << 63)


def check_count(name: str, value: Any, low: int = 0) -> int:
    """``value`` when it is an ``int`` (not a bool) of at least ``low``; else
    InvalidInputError naming ``name``.

    >>> check_count("k", 0, low=1)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: k=0 is below the minimum 1
    """
    return limits.check_int(name, value, limits.Limit(low, COUNT_HIGH, "a 64-bit count"))


def _interval(low: float, high: float, low_open: bool, high_open: bool) -> str:
    """`` in [0, 1)``, `` >= 0``... ('' for the whole line)."""
    if low == -math.inf and high == math.inf:
        return ""
    if high == math.inf:
        return f" {'>' if low_open else '>='} {low:g}"
    if low == -math.inf:
        return f" {'<' if high_open else '<='} {high:g}"
    return f" in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"


def check_number(name: str, value: Any, low: float = -math.inf, high: float = math.inf, *,
                 low_open: bool = False, high_open: bool = False) -> float:
    """``value`` (unchanged) when it is a finite real number (not a bool) in the interval
    from ``low`` to ``high`` (each end included unless ``*_open``); else InvalidInputError
    naming ``name``, the interval and the value.

    >>> check_number("omega", math.inf, 0)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: omega must be a finite number >= 0, got inf
    """
    what = f"{name} must be a finite number{_interval(low, high, low_open, high_open)}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidInputError(f"{what}, got {value!r}")
    try:
        x = float(value)
    except OverflowError:  # an int beyond float range
        x = math.inf
    inside = (low < x if low_open else low <= x) and (x < high if high_open else x <= high)
    if not math.isfinite(x) or not inside:
        raise InvalidInputError(f"{what}, got {value!r}")
    return value


def check_flag(name: str, value: Any) -> bool:
    """``value`` when it is ``True`` or ``False`` (a bool, not a truthy stand-in)."""
    if not isinstance(value, bool):
        raise InvalidInputError(f"{name} must be True or False, got {value!r}")
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_records(name: str, value: Any, cls: type) -> tuple:
    """``value``'s items as a tuple when it is an iterable (not a string or a mapping) of
    ``cls`` instances; else InvalidInputError naming ``name`` (and the first bad item).

    >>> check_records("sizes", [1, 2], int)
    (1, 2)
    >>> check_records("sizes", [1, "2"], int)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: sizes[1] must be a builtins.int, got '2'
    """
    kind = f"{cls.__module__}.{cls.__qualname__}"
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise InvalidInputError(f"{name} must be a sequence of {kind} records, "
                                f"got {_short(value)}")
    items = tuple(value)
    for i, item in enumerate(items):
        if not isinstance(item, cls):
            raise InvalidInputError(f"{name}[{i}] must be a {kind}, got {_short(item)}")
    return items
