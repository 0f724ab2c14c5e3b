"""The cost-model features of a stored measurement: the numeric columns a record carries
(the analytic model's, or its own ``features``), and the check of what may be stored as
such (a finite real number under a string name).

Examples
--------
>>> checked_features({"a": 1.5})
{'a': 1.5}
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from iobound.errors import InvalidInputError

from ..measure.base import MeasureRecord
from ..option_checks import check_type, shown

__all__ = ["record_features", "checked_features"]


def _feature_value(value: Any) -> float | None:
    """``value`` as a feature (a float) when it is a real number, numpy's too (not a bool),
    finite as a float; else None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    try:
        x = float(value)
    except (OverflowError, TypeError, ValueError):  # an int past float's range
        return None
    return x if math.isfinite(x) else None


def record_features(record: MeasureRecord) -> dict | None:
    """The cost-model features a record carries (the analytic ones), or None.

    The ``model`` measurer keeps them in ``extra``; a record may also carry a
    ``features`` dict of its own. A value is a feature when it is a real number (numpy's
    too) finite as a float; any other (a string, a NaN, which a tuning log writes as
    null, an int past float's range) is record data, not a feature, and is left in
    ``extra`` only.

    >>> import numpy as np
    >>> r = MeasureRecord.ok({"x": 1}, time_ms=1.0, extra={"flops": np.float32(2.5),
    ...                      "waves": float("nan"), "features": {"a": 10 ** 400, "b": 3}})
    >>> record_features(r)
    {'flops': 2.5, 'b': 3.0}
    """
    from kernels.analytic import FEATURE_NAMES
    check_type("record", record, MeasureRecord)
    feats = {k: _feature_value(v) for k, v in record.extra.items() if k in FEATURE_NAMES}
    own = record.extra.get("features")
    if isinstance(own, Mapping):
        feats.update({str(k): _feature_value(v) for k, v in own.items()})
    return {k: v for k, v in feats.items() if v is not None} or None


def checked_features(features: Any, what: str = "features") -> dict:
    """``features`` (the cost model's numeric columns of a measurement) as stored: a mapping
    of feature names (strings) to finite real numbers, numpy's as the Python numbers they
    hold; anything else (NaN or an infinity, which JSON cannot hold, an int past float's
    range, a string, a list, an object) is InvalidInputError naming ``what`` and the key.

    >>> import numpy as np
    >>> checked_features({"a": np.float32(1.5), "b": 2})
    {'a': 1.5, 'b': 2}
    >>> checked_features({"a": float("nan")})
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: features['a'] must be a finite number, got nan
    """
    check_type(what, features, Mapping)
    out = {}
    for k, v in features.items():
        if not isinstance(k, str):
            raise InvalidInputError(f"{what}: the key {shown(k)} is no feature name (a string)")
        if _feature_value(v) is None:
            raise InvalidInputError(f"{what}[{k[:40]!r}] must be a finite number, got {shown(v)}")
        x = v.item() if isinstance(v, np.generic) else v  # numpy's numbers as Python's
        out[k] = int(x) if isinstance(x, int) else float(x)
    return out
