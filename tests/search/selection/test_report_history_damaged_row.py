"""A tuning database row whose configuration is no kernel of its layer (x=0, a tile
larger than the output, a key of no config) made ``iobound report --history DB`` (and
``select``) stop with an error naming a field the user never typed and neither the file
nor the layer ("x=0 is below the minimum 1"), although the database holds a valid
measurement of that candidate; an ``e`` outside 2..4 is skipped, a row like this was not.
Reference: the valid row's own time (0.7 ms), the fastest runnable record stored."""

from __future__ import annotations

import json

import pytest

from iobound.layer import ConvLayer
from search.cli.main import main
from search.history import History, HistoryKey
from search.measure.base import MeasureRecord
from tests.search.stored_rows import write_config_by_hand

LAYER = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
SPEC = "cin=4,hin=8,cout=8,kh=3,pad=1"
GOOD = {"x": 8, "y": 8, "z": 8, "alpha": 4, "tx": 8, "ty": 8, "tz": 8}
BAD = [dict(GOOD, x=0), dict(GOOD, x=16), dict(GOOD, extra=3), {"x": 8}]


@pytest.mark.parametrize("bad", BAD, ids=["x0", "x16", "extra_key", "missing_keys"])
def test_a_damaged_row_does_not_stop_the_report(tmp_path, capsys, bad):
    db = tmp_path / "h.db"
    h = History(db)
    key = HistoryKey(json.dumps(LAYER.to_dict(), sort_keys=True), "V100-SXM2", "cuda test")
    h.add(key, [MeasureRecord.ok(dict(GOOD, alpha=2), time_ms=0.5, estimate=False),  # fastest
                MeasureRecord.ok(GOOD, time_ms=0.7, estimate=False)])   # the valid one
    h.close()
    # the fastest one damaged: TuningDB.add refuses a config that is no kernel config of the
    # layer, so it is written as another program would (a config of other keys is of the
    # layer's workload of those parameter names, as History.add would have stored it)
    write_config_by_hand(db, "time_ms = 0.5", bad, None if set(bad) == set(GOOD) else tuple(bad))
    out = tmp_path / "rep"
    assert main(["report", "--layer", SPEC, "--history", str(db), "--out-dir", str(out)]) == 0
    capsys.readouterr()
    entry = json.loads((out / "selection.json").read_text())["layers"][0]
    assert entry["source"] == "history"
    assert (entry["algorithm"], entry["config"], entry["time_ms"]) == ("direct", GOOD, 0.7)
