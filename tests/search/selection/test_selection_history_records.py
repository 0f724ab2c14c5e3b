"""Label records from the history database (search.selection.history_source), by hand.

Reference: records stored by hand, so the expected output is read off them: per stored
(layer, device, toolchain) key, the fastest ok record per candidate (its algorithm from
the config's ``e``), with the key's device and the record's own estimate flag; records
whose ``e`` is no candidate (2..4) are skipped.
"""

from __future__ import annotations

import json

from iobound.layer import ConvLayer
from search.history import History, HistoryKey
from search.measure.base import MeasureRecord
from search.selection.history_source import records_from_history

LAYER = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
DIRECT_CFG = {"x": 6, "y": 6, "z": 4, "alpha": 1, "tx": 6, "ty": 6, "tz": 1}


def _wino(e):
    """A Winograd config of LAYER (tx, ty divide x/e = y/e; tz=4 keeps a thread within the
    128 register words of the cap): TuningDB.add stores no other of our conv template."""
    return {"e": e, "x": 6, "y": 6, "z": 4, "tx": 6 // e, "ty": 6 // e, "tz": 4}


def test_candidates_devices_and_flags_come_from_the_records():
    h = History(":memory:")
    text = json.dumps(LAYER.to_dict(), sort_keys=True)
    h.add(HistoryKey(text, "T4", "cuda 12"), [
        MeasureRecord.ok(DIRECT_CFG, time_ms=3.0),
        MeasureRecord.ok({**_wino(3), "tz": 2}, time_ms=2.5),
        MeasureRecord.ok(_wino(3), time_ms=2.0),
        MeasureRecord.ok(_wino(6), time_ms=0.5),          # e = 6: no candidate
    ])
    recs = list(records_from_history(h))
    assert [(r.device, r.algorithm, r.e, r.time_ms, r.estimate) for r in recs] == [
        ("T4", "direct", None, 3.0, False), ("T4", "winograd", 3, 2.0, False)]
    assert recs[1].config == _wino(3) and recs[0].layer == LAYER
    assert list(records_from_history(h, device="V100-SXM2")) == []
