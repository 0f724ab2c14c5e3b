"""How history records and a target's configurations become rows of the history model.

Two ways, chosen by the target space (:func:`rows_for`):

- :class:`SpaceRows` (any space, e.g. a recorded one): the space's own features
  (:meth:`~search.space.Space.features`). A record whose configuration is in the
  space takes its row; one outside it takes :func:`feature_row` (knobs from its
  config, the rest from the features stored with it) when every column is known.
- :class:`LayerRows` (our conv template's :class:`~search.conv_space.ConvSpace`):
  :func:`~search.transfer.layer_features.cross_layer_features`, computed for every
  record on the record's *own* layer and device, and for the target's candidates
  on the target's. Records of other layers thus train the model whether or not
  their tiles fit the target's layer: that is how the layers of a network learn
  from each other.

Examples
--------
>>> from search.grid_space import GridSpace
>>> rows = rows_for(GridSpace({"x": [1, 2]}))
>>> type(rows).__name__, rows.space_rows([1]).tolist()
('SpaceRows', [[2.0]])
"""

from __future__ import annotations

import threading
from typing import Sequence

import numpy as np

from ..space import knob_value, numeric_knob
from .layer_features import CROSS_LAYER_FEATURES, cross_layer_features, measurement_layer

__all__ = ["SpaceRows", "LayerRows", "rows_for", "feature_row"]


def feature_row(space, config: dict, features: dict | None) -> np.ndarray | None:
    """A configuration's row in ``space.feature_names()`` order, or None when a value is
    unknown: knobs from ``config`` (:func:`~search.space.knob_value`: a number as itself
    when every value of the space's list is a number, else its position in the list; a
    value that is neither is unknown), other columns from ``features``.

    Examples
    --------
    >>> from search.grid_space import GridSpace
    >>> feature_row(GridSpace({"x": [1, 2]}), {"x": 7}, None).tolist()
    [7.0]
    >>> feature_row(GridSpace({"x": [1, 2, "max"]}), {"x": 7}, None) is None
    True
    """
    row = []
    params = set(space.params)
    for name in space.feature_names():
        if name in params:
            v, choices = config.get(name), space.values(name)
            if not numeric_knob(v, choices) and v not in choices:
                return None
            row.append(knob_value(v, choices))  # the space's own rule (a bool is 0 or 1)
        elif features and isinstance(features.get(name), (int, float)):
            row.append(float(features[name]))
        else:
            return None
    return np.array(row)


class SpaceRows:
    """Rows from the target space's own features (see module doc).

    >>> from search.db import Measurement, Workload
    >>> from search.measure.base import MeasureRecord
    >>> from search.grid_space import GridSpace
    >>> w = Workload("k", [8], ("x",))
    >>> ms = [Measurement(w, "gpu0", "t", MeasureRecord.ok({"x": x}, time_ms=1.0)) for x in (2, 9)]
    >>> [r.tolist() for r in SpaceRows(GridSpace({"x": [1, 2]})).record_rows(ms, [1, None])]
    [[2.0], [9.0]]
    """

    def __init__(self, space):
        self.space = space

    def space_rows(self, indices: Sequence[int]) -> np.ndarray:
        return self.space.features(indices)

    def record_rows(self, measurements: Sequence, indices: Sequence[int | None]) -> list:
        """One row (or None) per measurement of one source; ``indices`` their places in the
        space (None: outside it)."""
        inside = [k for k, i in enumerate(indices) if i is not None]
        out: list = [None] * len(measurements)
        if inside:
            X = self.space_rows([indices[k] for k in inside])
            for k, row in zip(inside, X):
                out[k] = row
        for k, (m, i) in enumerate(zip(measurements, indices)):
            if i is None:
                out[k] = feature_row(self.space, m.record.config, m.features)
        return out


class _RecordRowMemo:
    """The cross-layer rows of history records already computed in this process.

    A record's row depends only on its own workload, device and knobs, never on the
    target: a network run reads the same history for each of its layers, and each layer
    fits two models on it (the prior's ranking, zero-shot's regression), so without this
    the analytic features of every record were computed twice per layer (84,000 records,
    23 layers: 170 of the 390 s of ``tune --network resnet50 --history``). Bounded:
    past ``max_rows`` rows the oldest sources are dropped.
    """

    def __init__(self, max_rows: int = 500_000):
        self.max_rows = max_rows
        self._sources: dict[tuple, dict[tuple, np.ndarray | None]] = {}
        self._rows = 0
        self._lock = threading.Lock()  # layers tuned at once (--parallel-layers) share it

    def rows(self, key: tuple, knobs: list[tuple], compute) -> list:
        """The rows of ``knobs`` of the source ``key``; ``compute(missing)`` gives the rows
        (an array) of those not computed before."""
        with self._lock:
            return self._rows_of(key, knobs, compute)

    def _rows_of(self, key: tuple, knobs: list[tuple], compute) -> list:
        known = self._sources.get(key)
        if known is None:
            known = self._sources[key] = {}
        missing = list(dict.fromkeys(k for k in knobs if k not in known))
        if missing:
            computed = compute(np.array(missing, dtype=np.int64))
            computed.flags.writeable = False  # rows are shared by every later read
            for k, row in zip(missing, computed):
                known[k] = row if np.all(np.isfinite(row)) else None
            self._rows += len(missing)
            while self._rows > self.max_rows:
                oldest = next((s for s in self._sources if s != key), None)
                if oldest is None:
                    break
                self._rows -= len(self._sources.pop(oldest))
        return [known[k] for k in knobs]


_MEMO = _RecordRowMemo()


def _cross_layer_rows(layer, device, algorithm: str, knobs: np.ndarray) -> np.ndarray:
    """:func:`cross_layer_features` of ``knobs``; a knob row the features refuse (a tile
    that does not fit its own layer, a knob past the limits: InvalidInputError) gets a
    row of NaN, which the memo keeps as None, instead of stopping the run."""
    from iobound.errors import IoboundError
    try:
        return cross_layer_features(layer, device, algorithm, knobs)
    except (IoboundError, ValueError):
        out = []
        for row in knobs:
            try:
                out.append(cross_layer_features(layer, device, algorithm, row[None, :])[0])
            except (IoboundError, ValueError):
                out.append(None)
        blank = np.full(len(CROSS_LAYER_FEATURES), np.nan)
        return np.array([blank if r is None else r for r in out]).reshape(
            len(knobs), len(CROSS_LAYER_FEATURES))


class LayerRows:
    """Rows of :data:`~search.transfer.layer_features.CROSS_LAYER_FEATURES` (module doc).

    >>> from iobound.layer import ConvLayer
    >>> from iobound.devices import get_device
    >>> from search.conv_space import ConvSpace
    >>> layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
    >>> LayerRows(ConvSpace(layer, get_device("v100"))).space_rows([0, 1]).shape
    (2, 22)
    """

    def __init__(self, space):
        self.space = space

    def space_rows(self, indices: Sequence[int]) -> np.ndarray:
        s = self.space
        return cross_layer_features(s.layer, s.device, s.algorithm, s.knobs(indices))

    def record_rows(self, measurements: Sequence, indices: Sequence[int | None]) -> list:
        """One row (or None) per measurement of one source (one workload on one device)."""
        if not measurements:
            return []
        m0 = measurements[0]
        where = measurement_layer(m0.workload.problem, m0.device, m0.workload.params)
        if where is None:
            return [None] * len(measurements)
        params = tuple(self.space.params)
        keep, knobs = [], []
        for k, m in enumerate(measurements):
            vals = tuple(m.record.config.get(p) for p in params)
            if all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in vals):
                keep.append(k)
                knobs.append(vals)
        out: list = [None] * len(measurements)
        if keep:
            key = (m0.workload.key(), m0.device, params)
            rows = _MEMO.rows(key, knobs, lambda k: _cross_layer_rows(*where, k))
            for k, row in zip(keep, rows):
                out[k] = row
        return out


def rows_for(space):
    """:class:`LayerRows` for a space of our conv template, else :class:`SpaceRows`.

    >>> from search.kt_cache import KtCache
    >>> from search.replay_space import ReplaySpace
    >>> type(rows_for(ReplaySpace(KtCache({"x": [1, 2]}, [{"x": 1, "time": 1.0}])))).__name__
    'SpaceRows'
    """
    from ..conv_space import ConvSpace
    return LayerRows(space) if isinstance(space, ConvSpace) else SpaceRows(space)
