"""Checks of the transfer package's own arguments: the target's costs by index, orders of
indices, per-source numbers.

The prior, the picker and the feature space take these from their callers (a tuning
run, a benchmark); a string for a list, a NaN cost, an index past the space or a list one
short is an :class:`~iobound.errors.InvalidInputError` naming the argument and the value
here, never a TypeError deep inside, a negative index read from the end of an array or
a ``zip`` that silently drops the sources past the shorter list. Classes, counts and
finite numbers go through :mod:`search.option_checks`; these are what it lacks.

Examples
--------
>>> check_costs("known", {0: 1.0, 3: 2.5}, size=4)
{0: 1.0, 3: 2.5}
>>> check_order("order", [2, 0], size=4).tolist()
[2, 0]
>>> check_costs("known", {7: 1.0}, size=4)
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: known: index 7 is not a configuration of the space (0..3)
>>> check_reals("likeness", [0.5, float("nan")], length=2)
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: likeness must be finite numbers, got [0.5, nan]
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Mapping

import numpy as np

from iobound.errors import InvalidInputError

from ..option_checks import shown

__all__ = ["check_costs", "check_index_set", "check_order", "check_reals"]


def _index(name: str, i: Any, size: int | None) -> None:
    """InvalidInputError unless ``i`` is an integer (not a bool) in ``0..size - 1``."""
    if isinstance(i, (bool, np.bool_)) or not isinstance(i, numbers.Integral):
        raise InvalidInputError(f"{name}: index {shown(i)} is not an integer")
    if i < 0 or (size is not None and i >= size):
        where = f"0..{size - 1}" if size is not None else "indices are >= 0"
        raise InvalidInputError(f"{name}: index {shown(i)} is not a configuration of the "
                                f"space ({where})")


def check_costs(name: str, known: Any, size: int | None = None,
                finite: bool = True) -> Mapping:
    """``known`` (unchanged) when it is a mapping of configuration indices (integers in
    ``0..size - 1``; ``>= 0`` when ``size`` is None) to costs (real numbers, finite unless
    ``not finite``); else InvalidInputError naming ``name`` and the first bad entry.

    >>> check_costs("known", [1.0, 2.0])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: known must be a mapping of ... -> cost, got [1.0, 2.0]
    """
    if not isinstance(known, Mapping):
        raise InvalidInputError(f"{name} must be a mapping of configuration index -> cost, "
                                f"got {shown(known)}")
    for i, c in known.items():
        _index(name, i, size)
        real = isinstance(c, numbers.Real) and not isinstance(c, (bool, np.bool_))
        if not real or (finite and not math.isfinite(c)):
            what = "a finite number" if finite else "a number"
            raise InvalidInputError(f"{name}[{i}] must be {what} (a cost), got {shown(c)}")
    return known


def check_order(name: str, value: Any, size: int | None = None) -> np.ndarray:
    """``value`` as a 1-D integer array (itself when it is one) when it is a sequence of
    configuration indices (integers in ``0..size - 1``; ``>= 0`` when ``size`` is None);
    else InvalidInputError naming ``name``.

    >>> check_order("lists[0]", "ab")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: lists[0] must be a sequence of configuration indices, got 'ab'
    """
    arr = None
    if not isinstance(value, (str, bytes, Mapping)) and hasattr(value, "__len__"):
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError):
            arr = None
    if arr is None or arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise InvalidInputError(f"{name} must be a sequence of configuration indices, "
                                f"got {shown(value)}")
    if not arr.size:
        return arr.astype(np.int64)
    bad = (arr < 0) | (arr >= size) if size is not None else arr < 0
    if bad.any():
        _index(name, arr[np.argmax(bad)].item(), size)
    return arr


def check_index_set(name: str, value: Any) -> set:
    """``value``'s items as a set when it is a collection (not a string) of integers
    (not bools); else InvalidInputError naming ``name``.

    >>> sorted(check_index_set("asked", [3, 1]))
    [1, 3]
    >>> check_index_set("asked", None)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: asked must be a collection of configuration indices, got None
    """
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise InvalidInputError(f"{name} must be a collection of configuration indices, "
                                f"got {shown(value)}")
    out = set(value)
    for i in out:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, numbers.Integral):
            raise InvalidInputError(f"{name}: {shown(i)} is not a configuration index")
    return out


def check_reals(name: str, value: Any, length: int | None = None,
                each: str = "source") -> np.ndarray:
    """``value`` as a 1-D float array when it is a sequence of finite real numbers (not
    bools or strings), ``length`` of them (one per ``each``) when given; else
    InvalidInputError naming ``name``.

    >>> check_reals("likeness", [1, 0.5], length=2).tolist()
    [1.0, 0.5]
    >>> check_reals("likeness", [1.0], length=2)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: likeness must hold 2 numbers (one per source), got 1
    """
    arr = None
    if not isinstance(value, (str, bytes, Mapping)) and hasattr(value, "__len__"):
        try:
            raw = np.asarray(value)
            arr = raw.astype(float) if raw.dtype.kind in "iuf" or not raw.size else None
        except (TypeError, ValueError, OverflowError):
            arr = None
    if arr is None or arr.ndim != 1:
        raise InvalidInputError(f"{name} must be a sequence of numbers, got {shown(value)}")
    if length is not None and len(arr) != length:
        raise InvalidInputError(f"{name} must hold {length} numbers (one per {each}), "
                                f"got {len(arr)}")
    if not np.isfinite(arr).all():
        raise InvalidInputError(f"{name} must be finite numbers, got {shown(value)}")
    return arr
