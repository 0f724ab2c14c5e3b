"""The rows a cost model takes: features as float rows XGBoost accepts (:func:`model_rows`),
checked as a 2-D array of numbers (:func:`feature_rows`), and training data checked before
a fit (:func:`check_training`); used by :mod:`search.cost_model` and the history prior.

Examples
--------
>>> feature_rows([[1.0, 2.0]]).shape
(1, 2)
"""

from __future__ import annotations

import numpy as np

from iobound.errors import InvalidInputError

from .option_checks import shown

__all__ = ["F32_MAX", "model_rows", "feature_rows", "check_training"]

#: The largest float32: XGBoost stores features as float32.
F32_MAX = float(np.finfo(np.float32).max)


def model_rows(X: np.ndarray) -> np.ndarray:
    """``X`` as float rows XGBoost takes: values beyond float32 (``inf`` included) clipped
    to +-float32 max, NaN kept (XGBoost's "missing"). XGBoost stores features as float32
    and refuses an infinite one, so a knob value such as ``inf`` or ``2**200`` (or an
    infinite analytic feature) would stop a run; clipped, it is the largest value, in order.

    >>> model_rows([[np.inf, -1e300, np.nan, 2.0]]).tolist()
    [[3.4028234663852886e+38, -3.4028234663852886e+38, nan, 2.0]]
    """
    return np.clip(np.asarray(X, dtype=float), -F32_MAX, F32_MAX)


def feature_rows(X, columns: int | None = None) -> np.ndarray:
    """``X`` as :func:`model_rows` when it is a 2-D array of numbers (one row per
    configuration) with at least one column, ``columns`` of them when given; else
    InvalidInputError naming what is wrong (was an IndexError on None, or XGBoost's
    ValueError).

    >>> feature_rows([1.0, 2.0])
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: X must be a 2-D array of features (one row per configuration), got shape (2,)
    >>> feature_rows([[1.0, 2.0]], columns=3)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: X has 2 feature columns; the model was fitted on 3
    """
    try:
        rows = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"X must be a 2-D array of numbers, got {shown(X)}: "
                                f"{' '.join(str(exc).split())[:80]}") from None
    if rows.ndim != 2:
        raise InvalidInputError(f"X must be a 2-D array of features (one row per configuration), "
                                f"got shape {rows.shape}")
    if rows.shape[1] == 0:
        raise InvalidInputError("X has no feature columns")
    if columns is not None and rows.shape[1] != columns:
        raise InvalidInputError(f"X has {rows.shape[1]} feature columns; the model was fitted "
                                f"on {columns}")
    return model_rows(rows)


def check_training(X, costs) -> tuple[np.ndarray, np.ndarray]:
    """(``X`` as :func:`feature_rows`, ``costs`` as floats) when they can train a cost
    model: at least one row, one cost per row, each a number or ``inf`` (a failed
    configuration, as the strategies give it), at least one of them a positive finite
    time; else InvalidInputError. A NaN cost (or ``-inf``) is refused, not taken as a
    failure, and costs with no successful configuration are refused, not fitted into a
    constant model: either would order the candidates by nothing, silently.

    >>> check_training([[1.0]], [2.0])[1].tolist()
    [2.0]
    >>> check_training([[1.0], [2.0]], [float("inf")] * 2)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: costs hold no positive finite time (2 costs, all failures): nothing to learn an order from
    """
    rows = feature_rows(X)
    try:
        y = np.asarray(costs, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"costs must be an array of numbers, got {shown(costs)}: "
                                f"{' '.join(str(exc).split())[:80]}") from None
    if y.ndim != 1 or len(y) != len(rows):
        raise InvalidInputError(f"costs must hold one number per row of X ({len(rows)} rows), "
                                f"got shape {y.shape}")
    if len(y) == 0:
        raise InvalidInputError("cannot fit a cost model on no data")
    bad = np.flatnonzero(np.isnan(y) | (y == -np.inf))
    if len(bad):
        raise InvalidInputError(f"costs[{bad[0]}] is {y[bad[0]]}: a cost is a number (inf for "
                                f"a failed configuration)")
    if not (np.isfinite(y) & (y > 0)).any():
        raise InvalidInputError(f"costs hold no positive finite time ({len(y)} costs, all "
                                f"failures): nothing to learn an order from")
    return rows, y
