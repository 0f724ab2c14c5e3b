"""History records of our conv template whose tile does not fit their own layer.

Reference: :class:`search.transfer.rows.LayerRows` gives one row or None per measurement
(its doc); a record the cross-layer features cannot be computed for is None, as a record
whose knobs are not positive integers is, and the others of its source keep their rows
(:func:`~search.transfer.layer_features.cross_layer_features` of each alone). Such a
record reaches a database through ``iobound history import`` of a log or a cache file;
before, one of them stopped every later ``tune --history`` of the family with the
features' InvalidInputError.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from iobound.devices import get_device
from iobound.layer import ConvLayer
from search.db import CONV_TEMPLATE, Measurement, Workload
from search.measure.base import MeasureRecord
from search.transfer import rows as rows_module
from search.transfer.layer_features import cross_layer_features
from search.transfer.rows import LayerRows

LAYER = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
WINO = ("e", "x", "y", "z", "tx", "ty", "tz")
DIRECT = ("x", "y", "z", "alpha", "tx", "ty", "tz")


def _record(params, knobs):
    return Measurement(Workload(CONV_TEMPLATE, LAYER.to_dict(), params), "v100", "t",
                       MeasureRecord.ok(dict(zip(params, knobs)), time_ms=1.0))


@pytest.fixture(autouse=True)
def fresh_memo(monkeypatch):
    monkeypatch.setattr(rows_module, "_MEMO", rows_module._RecordRowMemo())


@pytest.mark.parametrize("params, bad, good", [
    (WINO, [(2, 3, 4, 4, 1, 1, 1),        # x=3 is no multiple of e=2
            (2, 4, 4, 100, 1, 1, 1),      # z above c_out
            (2, 4, 4, 70000, 1, 1, 1)],   # a knob past the limit
     (2, 4, 4, 4, 2, 1, 2)),
    (DIRECT, [(4, 4, 100, 2, 1, 1, 1), (4, 4, 4, 70000, 1, 1, 1)], (4, 4, 4, 2, 2, 2, 1)),
])
def test_a_record_whose_tile_does_not_fit_its_layer_has_no_row(params, bad, good):
    rows = LayerRows(SimpleNamespace(params=params))
    ms = [_record(params, k) for k in bad] + [_record(params, good)]
    got = rows.record_rows(ms, [None] * len(ms))
    assert got[:len(bad)] == [None] * len(bad)
    algorithm = "winograd" if "e" in params else "direct"
    want = cross_layer_features(LAYER, get_device("v100"), algorithm, np.array([good]))[0]
    assert got[-1].tolist() == want.tolist()


def test_a_source_of_refused_records_only_has_no_rows():
    rows = LayerRows(SimpleNamespace(params=WINO))
    ms = [_record(WINO, (2, 3, 4, 4, 1, 1, 1)), _record(WINO, (2, 4, 4, 100, 1, 1, 1))]
    assert rows.record_rows(ms, [None, None]) == [None, None]
