"""Tests of the SQLite history database."""

from search.history import History, HistoryKey
from search.measure.base import MeasureRecord


def test_keys_keep_layers_devices_and_toolchains_apart(tmp_path):
    """Records under different keys never mix, and survive reopening the file."""
    db = tmp_path / "h.sqlite"
    k1 = HistoryKey("conv1", "v100", "model v1")
    k2 = HistoryKey("conv1", "a100", "model v1")
    with History(db) as h:
        h.add(k1, [MeasureRecord.ok({"x": 1}, time_ms=3.0)])
        h.add(k2, [MeasureRecord.ok({"x": 1}, time_ms=1.0), MeasureRecord.failed({"x": 2}, "timeout")])
    with History(db) as h:
        assert h.best(k1).time_ms == 3.0 and h.best(k2).time_ms == 1.0
        assert len(h.records(k2)) == 2 and set(h.keys()) == {k1, k2}


def test_latest_measurement_of_a_config_wins(tmp_path):
    """Storing the same config twice keeps one row, the latest."""
    k = HistoryKey("L", "d", "t")
    with History(tmp_path / "h.sqlite") as h:
        h.add(k, [MeasureRecord.ok({"x": 1}, time_ms=3.0)])
        h.add(k, [MeasureRecord.ok({"x": 1}, time_ms=2.0)])
        assert [r.time_ms for r in h.records(k)] == [2.0]


def test_best_ignores_failures(tmp_path):
    """best() is None when nothing ran ok."""
    k = HistoryKey("L", "d", "t")
    with History(tmp_path / "h.sqlite") as h:
        h.add(k, [MeasureRecord.failed({"x": 1}, "compile_error")])
        assert h.best(k) is None
