"""Hostile-input tests for search/db/store.py (probe42)."""
import pytest

from iobound.errors import InvalidInputError
from search.db.store import TuningDB


@pytest.mark.parametrize("fn", [None, 5, lambda: 1])
def test_write_checks_fn_is_callable(fn):  # probe42 #30
    db = TuningDB(":memory:")
    with pytest.raises(InvalidInputError, match="fn"):
        db.write(fn)


def test_write_valid_fn_still_works():
    db = TuningDB(":memory:")
    assert db.write(lambda c: 7) == 7


def test_workload_cache_checks_db():  # probe42 #25
    from search.db.export import workload_cache
    from search.db.model import Workload
    with pytest.raises(InvalidInputError, match="db"):
        workload_cache(None, Workload("k", [8], ("x",)), "d")


@pytest.mark.parametrize("bad", [None, [1], "ab"])
def test_workload_labels_checks_workloads(bad):  # probe42 #26
    from search.db.queries import workload_labels
    with pytest.raises(InvalidInputError, match="workloads"):
        workload_labels(bad)


def test_workload_labels_valid():
    from search.db.model import Workload
    from search.db.queries import workload_labels
    a, b = Workload("k", [8], ("x",)), Workload("k", [8], ("y",))
    assert list(workload_labels([a, b]).values()) == ["k [8] (x)", "k [8] (y)"]


@pytest.mark.parametrize("readonly", [False, True])
def test_tuningdb_name_too_long(tmp_path, readonly):  # probe42 #20
    path = str(tmp_path / ("a" * 300 + ".db"))
    with pytest.raises(InvalidInputError, match="aaaa"):
        TuningDB(path, readonly=readonly)


def _file_db(tmp_path):
    from search.db.model import Measurement, Workload
    from search.measure.base import MeasureRecord
    w = Workload("k", [8], ("x",))
    db = TuningDB(str(tmp_path / "f.db"))
    db.add([Measurement(w, "d", "t", MeasureRecord.ok({"x": 1}, time_ms=1.0))])
    return db, w


def test_export_cache_name_too_long(tmp_path):  # probe42 #22
    from search.db.export import export_cache
    db, w = _file_db(tmp_path)
    with pytest.raises(InvalidInputError, match="path=.*too long"):
        export_cache(db, str(tmp_path / ("a" * 300 + ".json")), w, "d")


def test_export_cache_empty_path(tmp_path):  # probe42 #37
    from search.db.export import export_cache
    db, w = _file_db(tmp_path)
    with pytest.raises(InvalidInputError, match="path: the path is empty"):
        export_cache(db, "", w, "d")


def test_export_cache_valid(tmp_path):
    from search.db.export import export_cache
    db, w = _file_db(tmp_path)
    assert export_cache(db, str(tmp_path / "c.json"), w, "d").exists()


def test_best_one_device_two_names():  # probe42 #9
    from search.db.model import Measurement, Workload
    from search.db.queries import best
    from search.measure.base import MeasureRecord
    w = Workload("k", [8], ("x",))
    db = TuningDB(":memory:")
    db.add([Measurement(w, "V100-SXM2", "t", MeasureRecord.ok({"x": 1}, time_ms=3.0)),
            Measurement(w, "Tesla V100-SXM2-16GB", "t", MeasureRecord.ok({"x": 1}, time_ms=2.0)),
            Measurement(w, "A100", "t", MeasureRecord.ok({"x": 1}, time_ms=1.0))])
    assert [(m.device, m.time_ms) for m in best(db, w, None, k=5)] == [
        ("A100", 1.0), ("Tesla V100-SXM2-16GB", 2.0)]
