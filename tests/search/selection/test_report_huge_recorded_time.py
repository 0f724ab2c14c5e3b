"""``iobound report --history DB`` with a recorded time that is positive and finite (a
measurement, README "Files of any shape") but huge: 1e305 ms.

The report drew it on a log axis whose ticks overflow (``OverflowError`` traceback from
matplotlib) and, with the plots drawn, would write ``time_gap`` = time / floor = inf into
selection.json as the non-standard token ``Infinity`` (``select --json`` writes null).
References: the time stored (1e305 ms), the JSON grammar (RFC 8259: no Infinity/NaN), and
the floor computed by hand from the device preset (bound words * 4 bytes / DRAM bandwidth).
"""

from __future__ import annotations

import json
import math

import pytest

from iobound.devices import get_device
from iobound.layer import ConvLayer
from search.cli.main import main
from search.history import History, HistoryKey
from search.measure.base import MeasureRecord

LAYER = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
SPEC = "cin=4,hin=8,cout=8,kh=3,pad=1"
CONFIG = {"x": 8, "y": 8, "z": 8, "alpha": 4, "tx": 8, "ty": 8, "tz": 8}


def _strict(text: str):
    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("time_ms", [1e305, 1.7976931348623157e308])
def test_a_huge_recorded_time_is_reported_not_a_traceback(tmp_path, capsys, time_ms):
    db = tmp_path / "h.db"
    h = History(db)
    key = HistoryKey(json.dumps(LAYER.to_dict(), sort_keys=True), "V100-SXM2", "cuda test")
    h.add(key, [MeasureRecord.ok(CONFIG, time_ms=time_ms, estimate=False)])
    h.close()
    out = tmp_path / "rep"
    assert main(["report", "--layer", SPEC, "--history", str(db), "--out-dir", str(out),
                 "--html"]) == 0
    capsys.readouterr()
    entry = _strict((out / "selection.json").read_text())["layers"][0]
    assert entry["source"] == "history" and entry["time_ms"] == time_ms
    assert entry["estimate"] is False
    # the floor by hand: compulsory words (inputs + weights + outputs) at 900 GB/s
    words = 4 * 8 * 8 + 8 * 4 * 9 + 8 * 8 * 8
    assert entry["lower_bound"] == words
    io_floor = words * 4 / (get_device("v100").dram_bandwidth_gbs * 1e9) * 1e3
    assert math.isclose(entry["io_floor_ms"], io_floor, rel_tol=1e-12)
    gap = entry["time_gap"]  # time / floor overflows a float: no finite number to write
    assert gap is None
    for name in ("io.png", "time.png", "report.html", "table.md"):
        assert (out / name).stat().st_size > 0
