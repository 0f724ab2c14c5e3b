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
from iobound.limits import holds_bool

from .option_checks import check_count, shown

__all__ = ["F32_MAX", "model_rows", "feature_rows", "check_training"]

#: The largest float32: XGBoost stores features as float32.
F32_MAX = float(np.finfo(np.float32).max)


def model_rows(X: np.ndarray) -> np.ndarray:
    """``X`` as float rows XGBoost takes: values beyond float32 (``inf`` included) clipped
    to +-float32 max, NaN kept (XGBoost's "missing"). XGBoost stores features as float32
    and refuses an infinite one, so a knob value such as ``inf`` or ``2**200`` (or an
    infinite analytic feature) would stop a run; clipped, it is the largest value, in order.
    ``X`` is checked as :func:`feature_rows` checks it (InvalidInputError naming ``X``:
    ``None`` was a NaN 0-d array, a string a raw ValueError).

    >>> model_rows([[np.inf, -1e300, np.nan, 2.0]]).tolist()
    [[3.4028234663852886e+38, -3.4028234663852886e+38, nan, 2.0]]
    """
    return np.clip(_feature_array(X), -F32_MAX, F32_MAX)


def _numbers(name: str, value, what: str, booleans: bool = True) -> np.ndarray:
    """``value`` as a float array when it holds numbers only; else InvalidInputError naming
    ``name`` (``what`` it must be). Text (``"1.5"``, which numpy would parse) and ``None``
    (which numpy would make a NaN) are no numbers, nor complex ones; NaN itself is one.
    Without ``booleans`` a bool is none either (costs: True is no 1 ms)."""
    try:
        raw = value if isinstance(value, np.ndarray) else np.asarray(value)
        if not booleans and holds_bool(value):
            bad = "a bool is no time"
        elif raw.dtype.kind in "USa":
            bad = "text"
        elif raw.dtype.kind == "c":
            bad = "complex numbers"  # float() would drop the imaginary part with a warning
        elif raw.dtype.kind == "O" and raw.ndim and any(
                v is None or isinstance(v, (str, bytes)) for v in raw.ravel()):
            bad = "None or text"  # (a bare None is a NaN of no shape: the shape is wrong)
        else:
            return np.asarray(raw, dtype=float)
    except (TypeError, ValueError, OverflowError) as exc:
        bad = " ".join(str(exc).split())[:80]
    raise InvalidInputError(f"{name} must be {what}, got {shown(value)}: {bad}")


def _feature_array(X) -> np.ndarray:
    """``X`` as a float 2-D array with at least one column (not clipped); else
    InvalidInputError naming ``X``."""
    rows = _numbers("X", X, "a 2-D array of numbers")
    if rows.ndim != 2:
        raise InvalidInputError(f"X must be a 2-D array of features (one row per configuration), "
                                f"got shape {rows.shape}")
    if rows.shape[1] == 0:
        raise InvalidInputError("X has no feature columns")
    return rows


def feature_rows(X, columns: int | None = None) -> np.ndarray:
    """``X`` as :func:`model_rows` when it is a 2-D array of numbers (one row per
    configuration) with at least one column, ``columns`` of them when given; else
    InvalidInputError naming what is wrong (was an IndexError on None, or XGBoost's
    ValueError). A number is no text (``"1.5"``, which numpy would parse) and no ``None``
    (which numpy would make a NaN); NaN itself is a number, XGBoost's "missing".
    ``columns`` must be a count of at least 1 (InvalidInputError naming ``columns``).

    >>> feature_rows([1.0, 2.0])
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: X must be a 2-D array of features (one row per configuration), got shape (2,)
    >>> feature_rows([[1.0, 2.0]], columns=3)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: X has 2 feature columns; the model was fitted on 3
    """
    if columns is not None:
        columns = check_count("columns", columns, low=1)
    rows = _feature_array(X)
    if columns is not None and rows.shape[1] != columns:
        raise InvalidInputError(f"X has {rows.shape[1]} feature columns; the model was fitted "
                                f"on {columns}")
    return np.clip(rows, -F32_MAX, F32_MAX)  # as model_rows


def _cost_vector(costs) -> np.ndarray:
    """``costs`` as a 1-D float array when it holds numbers only (no text, no ``None``);
    else InvalidInputError naming ``costs``."""
    y = _numbers("costs", costs, "a 1-D array of numbers", booleans=False)
    if y.ndim != 1:
        raise InvalidInputError(f"costs must be a 1-D array of numbers, got shape {y.shape}")
    return y


def check_training(X, costs) -> tuple[np.ndarray, np.ndarray]:
    """(``X`` as :func:`feature_rows`, ``costs`` as floats) when they can train a cost
    model: at least one row, one cost per row, each a number or ``inf`` (a failed
    configuration, as the strategies give it), at least one of them a positive finite
    time; else InvalidInputError. A NaN cost (or ``-inf``) is refused, not taken as a
    failure, and costs with no successful configuration are refused, not fitted into a
    constant model: either would order the candidates by nothing, silently. A zero or
    negative cost is taken as a failure, as ``inf`` is (the strategies fit on what they
    are told, and a 0 ms record told directly, not through the tuner, is no successful
    measurement: :func:`search.cost_model.make_targets`). Text (``"2.5"``) and ``None``
    are no costs (InvalidInputError naming ``costs``; numpy would parse the one and make
    a NaN of the other).

    >>> check_training([[1.0]], [2.0])[1].tolist()
    [2.0]
    >>> check_training([[1.0], [2.0]], [float("inf")] * 2)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: costs hold no positive finite time (2 costs, all failures): nothing to learn an order from
    """
    rows = feature_rows(X)
    y = _numbers("costs", costs, "an array of numbers", booleans=False)
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
