"""Checks of the arguments of the tuning database's reads and writes (:mod:`.store`,
:mod:`.queries`): each refuses a value of the wrong kind with an InvalidInputError naming
it, before SQLite sees it.

>>> param_names(["y", "x"]), check_mark(0)
(['x', 'y'], 0)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from iobound import limits
from iobound.errors import InvalidInputError

from ..kt_keys import is_param_value
from ..log_values import as_logged
from ..option_checks import check_type, shown
from .model import Workload

__all__ = ["check_tune_params", "param_names", "check_mark", "MARK"]


def check_tune_params(tune_params: Mapping) -> dict:
    """``tune_params`` of :meth:`TuningDB.add` as stored, numpy's values (a numpy array for
    a list too) as the Python values they hold, as a config's are
    (:func:`~search.log_values.as_logged`); refused unless it maps workloads to mappings
    of parameter name -> list of values (a string or a number is no list of values: it
    would be taken letter by letter, or fail inside the write).

    >>> import numpy as np
    >>> w = Workload("k", [8], ("x",))
    >>> check_tune_params({w: {"x": np.array([1, 2])}})[w]
    {'x': [1, 2]}
    >>> check_tune_params({w: {"x": 5}})
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: tune_params of k: the values of 'x' must be a list, got 5
    """
    check_type("tune_params", tune_params, Mapping)
    out: dict = {}
    for w, values in tune_params.items():
        check_type("a tune_params key", w, Workload)
        check_type(f"tune_params of {w.template}", values, Mapping)
        out[w] = {}
        for name, listed in values.items():
            if not isinstance(name, str) or name not in w.params:  # stored, never read
                raise InvalidInputError(f"tune_params of {w.template}: {name!r:.60} is no "
                                        f"parameter of the workload ({', '.join(w.params)})")
            if not isinstance(listed, (list, tuple, np.ndarray)) or (
                    isinstance(listed, np.ndarray) and listed.ndim == 0):
                raise InvalidInputError(f"tune_params of {w.template}: the values of {name!r} "
                                        f"must be a list, got {shown(listed)}")
            try:
                python = as_logged(list(listed))
            except InvalidInputError:  # an object JSON has no form for
                python = None
            bad = [v for v in (listed if python is None else python) if not is_param_value(v)]
            if python is None or bad:
                raise InvalidInputError(f"tune_params of {w.template}: {name!r} has a value "
                                        f"that is no parameter value: "
                                        f"{shown(bad[0] if bad else listed)}")
            out[w][name] = python
    return out


def param_names(params: Any) -> list[str]:
    """``params``, a collection of parameter names, sorted (as a workload's identity holds
    them); a string (its letters), None or names that are not strings are refused.

    >>> param_names(("y", "x"))
    ['x', 'y']
    >>> param_names(None)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: params must be a list of parameter names, got None
    """
    if isinstance(params, (str, bytes)) or not isinstance(params, Iterable):
        raise InvalidInputError(f"params must be a list of parameter names, got {shown(params)}")
    names = list(params)
    for name in names:
        check_type("a parameter name", name, str)
    return sorted(names)


#: A mark of what the database held (:meth:`TuningDB.last_id`): a measurement id or 0.
MARK = limits.Limit(0, (1 << 63) - 1, "a measurement id: SQLite's integers are signed 64-bit")


def check_mark(up_to: Any) -> int:
    """``up_to``, a mark (:meth:`TuningDB.last_id`), as an ``int``; anything else (a string,
    NaN, a float, a number past SQLite's integers) is InvalidInputError naming ``up_to``.

    >>> check_mark(0)
    0
    >>> check_mark("12")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: up_to must be an integer, got '12'
    """
    return limits.check_int("up_to", up_to, MARK)
