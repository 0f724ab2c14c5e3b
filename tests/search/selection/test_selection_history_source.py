"""Label records fed by the tuning history database (search.selection.history_source)."""

from __future__ import annotations

from search.cli.main import main
from search.history import History, HistoryKey
from search.measure.base import MeasureRecord
from search.selection.dataset import examples_from_records
from search.selection.history_source import records_from_history
from search.selection.select import selection_from_example

TINY = "cin=2,hin=6,cout=4,kh=3,pad=1"


def test_tuned_results_feed_the_selection(tmp_path, capsys):
    """Two `iobound tune --history` runs (direct, Winograd) give one record per candidate with
    the database's best time; a replay key and another device are skipped; the selection made
    from them picks the faster one."""
    db = str(tmp_path / "h.sqlite")
    for alg in ("direct", "winograd"):
        assert main(["tune", "--layer", TINY, "--algorithm", alg, "--measure", "model",
                     "--budget", "6", "--history", db, "--no-verify", "--json",
                     "--out-dir", str(tmp_path)]) == 0
    capsys.readouterr()
    with History(db) as h:
        h.add(HistoryKey("replay:k:p", "V100-SXM2", "replay"),
              [MeasureRecord.ok({"a": 1}, time_ms=1.0)])
        h.add(HistoryKey(h.keys()[0].layer, "T4", "model"),
              [MeasureRecord.ok({"x": 1}, time_ms=9.0)])
        stored = [r for k in h.keys() if k.device == "V100-SXM2" and k.layer != "replay:k:p"
                  for r in h.records(k) if r.is_ok]
        recs = list(records_from_history(h, device="V100-SXM2"))
    assert {r.device for r in recs} == {"V100-SXM2"} and all(r.estimate for r in recs)
    assert [r.algorithm for r in recs].count("direct") == 1
    for r in recs:
        same = [s.time_ms for s in stored if s.config.get("e") == r.e]
        assert r.time_ms == min(same)
    ex, = examples_from_records(recs)
    sel = selection_from_example(ex)
    assert sel.time_ms == min(r.time_ms for r in recs) and not sel.predicted


def test_select_from_the_history_database(tmp_path, capsys):
    """`iobound select --history DB` takes a layer the database holds from its tuned results
    (source "history", the database's best time per candidate)."""
    import json

    db = str(tmp_path / "h.sqlite")
    assert main(["tune", "--layer", TINY, "--algorithm", "winograd", "--measure", "model",
                 "--budget", "4", "--history", db, "--no-verify", "--json",
                 "--out-dir", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["select", "--layer", TINY, "--history", db, "--json"]) == 0
    (sel,) = json.loads(capsys.readouterr().out)["layers"]
    with History(db) as h:
        stored = [r for k in h.keys() for r in h.records(k) if r.is_ok]
    assert sel["source"] == "history" and sel["algorithm"] == "winograd"
    assert sel["time_ms"] == min(r.time_ms for r in stored)
    assert {c["algorithm"] for c in sel["candidates"]} == {"winograd"}


def test_measured_records_win_over_estimates():
    """Where a shape has measured records, estimates of it are not compared with them."""
    from iobound.layer import ConvLayer
    from search.selection.dataset import LabelRecord
    from search.selection.select import _known_examples

    layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    recs = [LabelRecord(layer, "V100-SXM2", "direct", None, {}, 5.0, False),
            LabelRecord(layer, "V100-SXM2", "winograd", 2, {}, 1.0, True),
            LabelRecord(layer, "T4", "direct", None, {}, 0.1, False)]
    (ex,) = _known_examples(recs, "V100-SXM2").values()
    assert list(ex.times.values()) == [5.0] and not ex.estimate
