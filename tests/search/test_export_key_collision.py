"""Export never drops a stored configuration in silence (search/db/export.py,
search/kt_cache_write.py).

Reference: a Kernel Tuner cache keys each entry by its values joined by commas, so two
configurations whose values print alike (a string holding a comma; ``1`` and ``"1"``;
``True`` and ``"True"``) would share one key and the file would keep only one. Export
used to merge them; now such a database is refused in one line naming both, and
configurations with distinct keys export whole (the round trip is tested elsewhere).
"""

from __future__ import annotations

import dataclasses

import pytest

from iobound.errors import InvalidInputError
from search.cli.main import main
from search.db import Measurement, TuningDB, Workload
from search.db.export import export_cache
from search.measure.base import MeasureRecord

W = Workload("k", [8], ("x", "y"))


@pytest.mark.parametrize("a, b", [
    ({"x": "a,b", "y": "c"}, {"x": "a", "y": "b,c"}),
    ({"x": 1, "y": 1}, {"x": "1", "y": 1}),
    ({"x": True, "y": 1}, {"x": "True", "y": 1}),
])
def test_configurations_of_one_cache_key_are_refused_not_merged(tmp_path, capsys, a, b):
    db = str(tmp_path / "a.db")
    with TuningDB(db) as t:
        t.add([Measurement(W, "d", "t", MeasureRecord.ok(a, time_ms=1.0)),
               Measurement(W, "d", "t", MeasureRecord.ok(b, time_ms=2.0))])
        with pytest.raises(InvalidInputError, match="have one Kernel Tuner cache key"):
            export_cache(t, tmp_path / "x.json", W, "d")
    assert main(["history", "export", "--db", db, str(tmp_path / "y.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a cache file cannot hold both" in err[0]
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "y.json").exists()


def test_the_latest_record_of_one_configuration_is_its_entry(tmp_path):
    """Records of one configuration (not merely one key) still make one entry, the latest."""
    from search.kt_cache import load_cache
    with TuningDB(str(tmp_path / "a.db")) as t:
        t.add([Measurement(W, "d", "t", dataclasses.replace(
            MeasureRecord.ok({"x": 1, "y": 2}, time_ms=ms), timestamp=stamp))
               for ms, stamp in ((3.0, 10.0), (2.0, 30.0), (1.0, 20.0))])
        path = export_cache(t, tmp_path / "x.json", W, "d")
    (entry,) = load_cache(path).entries
    assert entry["time"] == 2.0


def test_at_equal_timestamps_the_record_stored_last_is_the_entry(tmp_path):
    """Records without timestamps (0, as imports of caches lacking them have): the entry is
    the record stored last, as History's latest, whichever is faster."""
    from search.kt_cache import load_cache
    for times in ((1.0, 3.0), (3.0, 1.0)):
        with TuningDB(str(tmp_path / f"{times}.db")) as t:
            for ms in times:  # two imports, one after the other
                t.add([Measurement(W, "d", "t", dataclasses.replace(
                    MeasureRecord.ok({"x": 1, "y": 2}, time_ms=ms), timestamp=0.0))])
            path = export_cache(t, tmp_path / f"{times}.json", W, "d")
        (entry,) = load_cache(path).entries
        assert entry["time"] == times[-1]
