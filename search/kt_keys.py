"""How Kernel Tuner's cache files name a configuration, and which values a parameter may
take: the cache key (values comma-joined in the parameters' order), whether a key names an
entry's values, and the value key configurations are compared by (as the replayed space
compares them: 1 and 1.0 alike, 1 and "1" not); and its failure strings against our
statuses (:data:`FAILURE_STATUS`, :data:`STATUS_FAILURE`), read by caches and T4 files.

Examples
--------
>>> cache_key({"a": 1, "b": "x"}, ["a", "b"])
'1,x'
>>> key_names("0.1,x", cache_key({"a": 0.10000000149011612, "b": "x"}, ["a", "b"]))
True
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from kernels.status import Status

__all__ = ["value_key", "cache_key", "key_names", "is_param_value", "FAILURE_STATUS",
           "STATUS_FAILURE"]

#: Kernel Tuner failure string -> our status.
FAILURE_STATUS = {
    "InvalidConfig": Status.INVALID,
    "CompilationFailedConfig": Status.COMPILE_ERROR,
    "RuntimeFailedConfig": Status.RUNTIME_ERROR,
}
#: our failure status -> Kernel Tuner failure string (lossy for timeout/wrong_result).
STATUS_FAILURE = {
    Status.INVALID: "InvalidConfig",
    Status.COMPILE_ERROR: "CompilationFailedConfig",
    Status.RUNTIME_ERROR: "RuntimeFailedConfig",
    Status.TIMEOUT: "RuntimeFailedConfig",
    Status.WRONG_RESULT: "RuntimeFailedConfig",
}


def value_key(value: Any) -> Any:
    """A parameter value as a key, as the replayed space compares values: lists as tuples
    (1 and 1.0 one key, as Python compares them; 1 and "1" two).

    >>> value_key([1, 2]), value_key(1) == value_key(1.0), value_key(1) == value_key("1")
    ((1, 2), True, False)
    """
    return tuple(value) if isinstance(value, list) else value


def cache_key(config: Mapping[str, Any], keys: Sequence[str]) -> str:
    """The cache key of ``config``: its values in ``keys`` order, comma-joined.

    >>> cache_key({"a": 8, "b": 0.5}, ["b", "a"])  # the order of keys, not of the config
    '0.5,8'
    """
    return ",".join(str(config[k]) for k in keys)


def _is_scalar(v: Any) -> bool:
    """A JSON scalar a knob can take: numbers finite and exact in float64 (knob features)."""
    if v is None or isinstance(v, (str, bool)):
        return True
    if isinstance(v, int):
        return abs(v) <= 1 << 53
    return isinstance(v, float) and math.isfinite(v)


def is_param_value(v: Any) -> bool:
    """Whether ``v`` can be a parameter's value: a JSON scalar (numbers finite and exact in
    float64) or a flat list of such (Kernel Tuner allows lists, e.g. block shapes).

    >>> [is_param_value(v) for v in (8, [16, 2], {"a": 1}, float("nan"))]
    [True, True, False, False]
    """
    return _is_scalar(v) or (isinstance(v, list) and all(_is_scalar(x) for x in v))


def key_names(key: str, config_key: str) -> bool:
    """Whether the cache key ``key`` names the configuration whose :func:`cache_key` is
    ``config_key``: equal part by part (comma-separated), two parts that are numbers
    within a relative 1e-6 (Kernel Tuner may print a float32 value short: key ``0.1`` for
    the value 0.10000000149011612), unless both are integers (printed exactly).

    >>> key_names("0.1,8", "0.10000000149011612,8"), key_names("1,1", "3,2")
    (True, False)
    >>> key_names("1000000", "1000001")
    False
    """
    a, b = key.split(","), config_key.split(",")
    return len(a) == len(b) and all(x == y or _close(x, y) for x, y in zip(a, b))


def _close(x: str, y: str) -> bool:
    if _is_int(x) and _is_int(y):  # integers print exactly: 1000000 names no 1000001
        return False
    try:
        fx, fy = float(x), float(y)
    except ValueError:
        return False
    return math.isfinite(fx) and math.isfinite(fy) and math.isclose(fx, fy, rel_tol=1e-6)


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True
