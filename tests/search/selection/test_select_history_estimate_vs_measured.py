"""select --history: a measurement is preferred to an estimate record by record, also when
both are stored under one toolchain (a Kernel Tuner cache's entries share ``kernel_tuner``
and carry their own ``estimate`` flag; ``TuningDB.add`` takes any mix).

Reference, read off the stored records by hand: the layer's measured records are a direct
one of 0.5 ms and a Winograd F(2) one of 0.6 ms; a direct *estimate* of 0.01 ms is also
stored. Preferring measurements (select's --help; ``best_for_layer``, what
``kernel --from-history`` builds, does so) the choice is direct at 0.5 ms, measured, with
Winograd F(2) 0.6 ms as the other candidate; direct is not "untuned".
"""

from __future__ import annotations

from iobound.layer import ConvLayer
from search.db import TuningDB
from search.db.conv_template import CONV_TEMPLATE
from search.db.model import Measurement, Workload
from search.db.queries import best_for_layer
from search.history import History
from search.measure.base import MeasureRecord
from search.selection.history_source import records_from_history
from search.selection.select import select_layers

LAYER = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1, name="t")
DIRECT = ("alpha", "tx", "ty", "tz", "x", "y", "z")
WINO = ("e", "tx", "ty", "tz", "x", "y", "z")
D_FAST = {"x": 6, "y": 6, "z": 4, "alpha": 1, "tx": 6, "ty": 6, "tz": 1}
D_SLOW = {"x": 6, "y": 6, "z": 4, "alpha": 2, "tx": 6, "ty": 6, "tz": 1}
W2 = {"e": 2, "x": 6, "y": 6, "z": 4, "tx": 3, "ty": 3, "tz": 1}
DEV, TOOL = "V100-SXM2", "kernel_tuner"


def _db():
    db = TuningDB(":memory:")
    wd = Workload(CONV_TEMPLATE, LAYER.to_dict(), DIRECT)
    ww = Workload(CONV_TEMPLATE, LAYER.to_dict(), WINO)
    db.add([Measurement(wd, DEV, TOOL, MeasureRecord.ok(D_FAST, time_ms=0.01, estimate=True)),
            Measurement(wd, DEV, TOOL, MeasureRecord.ok(D_SLOW, time_ms=0.5)),
            Measurement(ww, DEV, TOOL, MeasureRecord.ok(W2, time_ms=0.6))])
    return db


def test_measured_record_wins_over_a_faster_estimate_of_the_same_toolchain():
    db = _db()
    # the database's own answer for the layer: the measured direct record
    assert best_for_layer(db, LAYER, DEV).measurement.record.time_ms == 0.5
    known = list(records_from_history(History(":memory:", db=db), device=DEV))
    sel, = select_layers([LAYER], DEV, known=known)
    assert sel.source == "history"
    assert (sel.choice.algorithm, sel.time_ms, sel.estimate) == ("direct", 0.5, False)
    assert sel.config == D_SLOW
    assert {c.candidate.label: c.time_ms for c in sel.candidates} == {
        "direct": 0.5, "winograd-e2": 0.6}
    assert "direct" not in sel.untuned
