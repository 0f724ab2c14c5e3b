"""Values as a tuning log (and the tuning database) holds them: JSON, with numpy scalars
and arrays, tuples and sets written as the Python values and lists they hold.

Examples
--------
>>> import json, numpy as np
>>> json.dumps({"x": np.int64(4)}, default=jsonable)
'{"x": 4}'
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from iobound.errors import InvalidInputError

__all__ = ["as_logged", "jsonable"]


def as_logged(obj: Any) -> Any:
    """``obj`` as it reads back from JSON (a log, the tuning database): numpy scalars as
    the Python values they hold, tuples and sets as lists, in dicts and lists too.

    >>> import numpy as np
    >>> as_logged({"x": np.int64(4), "s": (np.float32(0.5), 2), "v": np.array([1, 2])})
    {'x': 4, 's': [0.5, 2], 'v': [1, 2]}
    >>> as_logged({"f": open})
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: cannot write builtin_function_or_method to a tuning log
    """
    try:
        return json.loads(json.dumps(obj, default=jsonable))
    except (TypeError, ValueError) as exc:  # an object JSON has no form for; a cycle
        raise InvalidInputError(str(exc)[:200]) from None


def jsonable(obj: Any) -> Any:
    """numpy scalars and arrays, tuples and sets as JSON holds them (``json.dumps``'s
    ``default``); a TypeError for anything else, as ``json.dumps`` expects of it.

    >>> jsonable(np.array([1, 2])), jsonable(np.float32(0.5)), jsonable((1, 2))
    ([1, 2], 0.5, [1, 2])
    """
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if hasattr(obj, "item"):
        return obj.item()
    if isinstance(obj, (set, tuple)):
        return list(obj)
    raise TypeError(f"cannot write {type(obj).__name__} to a tuning log")
