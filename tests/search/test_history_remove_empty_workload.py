"""A workload stored with value lists alone (no measurement) that a removal names is
removed, and ``history remove`` says so instead of "nothing removed"."""

import json

from search.cli.main import main
from search.db import Measurement, TuningDB, Workload
from search.db.remove import Selection, empty_workloads, plan, remove
from search.measure.base import MeasureRecord

MEASURED, IDLE = Workload("k", [8], ("x",)), Workload("idle", [8], ("x",))


def _db(path):
    with TuningDB(path) as db:
        db.add([Measurement(MEASURED, "v100", "nvcc", MeasureRecord.ok({"x": 1}, time_ms=1.0))],
               {IDLE: {"x": [1, 2]}})
    return str(path)


def test_empty_workloads_are_the_named_ones_without_measurements(tmp_path):
    with TuningDB(_db(tmp_path / "t.db")) as db:
        assert empty_workloads(db, Selection(workloads=[IDLE, MEASURED])) == [IDLE]
        assert empty_workloads(db, Selection(workloads=[MEASURED])) == []
        assert empty_workloads(db, Selection(device="v100")) == []
        assert plan(db, Selection(workloads=[IDLE])) == []
        assert remove(db, Selection(workloads=[IDLE])) == []
        assert db.workloads() == [MEASURED]  # the idle one went, the other stayed


def test_the_cli_says_what_it_removed(tmp_path, capsys):
    path = _db(tmp_path / "t.db")
    assert main(["history", "remove", "--db", path, "--workload", "idle", "--dry-run"]) == 0
    assert "would remove 1 workload holding no measurement: idle [8]" in capsys.readouterr().out
    with TuningDB(path, readonly=True) as db:
        assert IDLE in db.workloads()  # a dry run changes nothing
    assert main(["history", "remove", "--db", path, "--workload", "idle", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["removed"], out["empty_workloads"]) == (0, ["idle [8]"])
    with TuningDB(path, readonly=True) as db:
        assert db.workloads() == [MEASURED] and db.count() == 1
