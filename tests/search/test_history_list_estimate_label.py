"""``iobound history list`` shows each workload's "best time" on a device. Where that best
is an analytic estimate (the ``model`` measurer's, stored by ``tune --history``) it must be
marked as one, as ``history best``, ``select`` and ``tune`` ("*") mark
theirs: a workload measured at 2 ms and estimated at 1 ms has no measured 1 ms time."""

from __future__ import annotations

import json

from search.cli.main import main
from search.db import Measurement, TuningDB, Workload
from search.measure.base import MeasureRecord


def _db(tmp_path, records) -> str:
    path = str(tmp_path / "t.db")
    w = Workload("k", [8], ("x",))
    with TuningDB(path) as db:
        db.add([Measurement(w, "gpu", tc, rec) for tc, rec in records])
    return path


def _row(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("k "))


def test_an_estimated_best_is_marked(tmp_path, capsys):
    path = _db(tmp_path, [("cuda", MeasureRecord.ok({"x": 1}, time_ms=2.0)),
                          ("model", MeasureRecord.ok({"x": 2}, time_ms=1.0, estimate=True))])
    assert main(["history", "best", "--db", path, "-k", "1"]) == 0
    _, best, legend = capsys.readouterr().out.splitlines()  # best marks it
    assert best.split()[0] == "1*" and "estimate" in legend, best
    assert main(["history", "list", "--db", path]) == 0
    out = capsys.readouterr().out
    row = _row(out)
    assert row.endswith(" 1*") and "estimate" in out, out
    assert main(["history", "list", "--db", path, "--json"]) == 0
    (got,) = json.loads(capsys.readouterr().out)
    assert got["best_ms"] == 1.0 and got["best_estimate"] is True


def test_a_measured_best_is_not_marked(tmp_path, capsys):
    path = _db(tmp_path, [("cuda", MeasureRecord.ok({"x": 1}, time_ms=1.0)),
                          ("model", MeasureRecord.ok({"x": 2}, time_ms=3.0, estimate=True))])
    assert main(["history", "list", "--db", path]) == 0
    out = capsys.readouterr().out
    assert _row(out).endswith(" 1") and "*" not in out, out
    assert main(["history", "list", "--db", path, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0].get("best_estimate", False) is False
