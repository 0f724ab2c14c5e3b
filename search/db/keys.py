"""The tuning database's keys: canonical JSON, and one key for values Python calls equal.

:func:`canon` writes a value as JSON with sorted keys and no spaces; :func:`canon_key`
writes it so that two values share a key exactly when Python calls them equal (the
problems, configs and digests the database keys by, :mod:`search.db.model`).

Examples
--------
>>> canon({"b": 2, "a": [1.5]}), canon_key({"x": 2.0})
('{"a":[1.5],"b":2}', '{"x":2}')
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["canon", "canon_key", "same_number_form"]


def _numpy_scalar(obj: Any) -> Any:
    """The Python value a numpy scalar holds (JSON's ``default``); anything else is no JSON."""
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def canon(obj: Any) -> str:
    """Canonical JSON: sorted keys, no spaces, numpy's numbers as the Python ones they hold
    (equal values give equal strings).

    >>> canon({"b": np.int64(2), "a": [1.5]})
    '{"a":[1.5],"b":2}'
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=_numpy_scalar)


def same_number_form(obj: Any) -> Any:
    """``obj`` with each number in one form for the values Python calls equal: a whole
    number up to 2**53 as an int (a bool as the int it equals, ``2.0`` as 2, ``-0.0`` as 0),
    a larger one as the float when one equals it (``1e16``, as JSON readers take it), in
    lists and dict values too; strings stay strings (``"2"`` is not 2).

    >>> same_number_form({"x": 2.0, "y": [True, 0.5, -0.0], "z": "2", "n": 10**16})
    {'x': 2, 'y': [1, 0.5, 0], 'z': '2', 'n': 1e+16}
    """
    if isinstance(obj, (bool, int, float)):
        return _number_form(obj)
    if isinstance(obj, np.generic):
        return same_number_form(obj.item())
    if isinstance(obj, (list, tuple)):
        return [same_number_form(v) for v in obj]
    if isinstance(obj, Mapping):
        return {k: same_number_form(v) for k, v in obj.items()}
    return obj


_EXACT_INTS = 2 ** 53  # every int up to it is a float64 too


def _number_form(x: bool | int | float) -> int | float:
    if isinstance(x, float):
        return int(x) if x.is_integer() and abs(x) <= _EXACT_INTS else x
    x = int(x)
    if abs(x) <= _EXACT_INTS:
        return x
    try:
        as_float = float(x)
    except OverflowError:  # past float64: no float equals it
        return x
    return as_float if as_float == x else x


def canon_key(obj: Any) -> str:
    """The canonical JSON of ``obj`` as a key: :func:`canon` of :func:`same_number_form`,
    so two values get one key exactly when Python calls them equal (as the replayed
    space compares parameter values, :func:`search.kt_keys.value_key`): {"x": 2},
    {"x": 2.0} and {"x": True} are one configuration, [64.0] and [64] one problem.

    >>> canon_key({"x": 1.0}), canon_key({"x": True}), canon_key({"x": "1"}), canon_key([0.5])
    ('{"x":1}', '{"x":1}', '{"x":"1"}', '[0.5]')
    """
    return canon(same_number_form(obj))
