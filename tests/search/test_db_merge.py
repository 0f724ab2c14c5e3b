"""Importing one tuning database into another (the databases of several machines merged).

The contract: every record of the imported database is stored with its workload, device,
toolchain, status, time, run, source and features; merging is idempotent and gives the
same records whatever the order of the databases (a record both hold under one identity,
its digest, keeps the first-imported one's features, run and source); the imported file
never changes; a database that is not one, is the target itself or holds another device
than ``--device`` is one line, exit 2, nothing stored.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from search.cli.main import main
from search.db import Measurement, TuningDB, Workload
from search.db.importer import import_files
from search.db.migrate import V0_SCHEMA
from search.measure.base import MeasureRecord

WORKLOADS = [Workload("k", [8], ("x",)), Workload("k", [16], ("x",)),
             Workload("iobound.conv", {"name": "a.conv1", "c_in": 3}, ("x", "y"))]


@st.composite
def measurements(draw):
    w = draw(st.sampled_from(WORKLOADS))
    config = {p: draw(st.integers(1, 4)) for p in w.params}
    if draw(st.booleans()):
        record = MeasureRecord.ok(config, time_ms=draw(st.floats(1e-3, 1e3)))
    else:
        record = MeasureRecord.failed(config, "runtime_error", "launch failed")
    record = dataclasses.replace(record, timestamp=draw(st.floats(0, 2e9)))
    return Measurement(w, draw(st.sampled_from(["v100", "a100", "gpu x"])),
                       draw(st.sampled_from(["nvcc-12", "kernel_tuner"])), record,
                       run=draw(st.sampled_from(["", "run-1"])),
                       source=draw(st.sampled_from(["", "a.json"])),
                       features=draw(st.sampled_from([{}, {"io": 1.5}])))


def _stored(db: TuningDB) -> dict:
    """digest -> everything a measurement carries, as the database gives it back."""
    return {m.digest(): (m.workload, m.device, m.toolchain, json.dumps(m.record.to_dict(),
            sort_keys=True), m.run, m.source, json.dumps(m.features, sort_keys=True))
            for m in db.measurements()}


@settings(max_examples=25, deadline=None)
@given(st.lists(measurements(), max_size=12), st.lists(measurements(), max_size=12),
       st.integers(0, 12))
def test_merging_is_the_union_in_any_order(tmp_path_factory, a, b, shared):
    """Two databases (with records in common) merged into a third, in either order, hold
    exactly the union of both, each record as it was; merging again adds nothing; the
    imported files are left as they were."""
    tmp = tmp_path_factory.mktemp("merge")
    b = b + a[:shared]
    paths = []
    for name, ms in (("a", a), ("b", b)):
        with TuningDB(tmp / f"{name}.db") as db:
            db.add(ms, {w: {"x": [1, 2, 3, 4]} for w in WORKLOADS[:1]})
        paths.append(tmp / f"{name}.db")
    before = [p.read_bytes() for p in paths]
    merged = []
    for order, name in ((paths, "ab"), (paths[::-1], "ba")):
        with TuningDB(tmp / f"{name}.db") as db:
            first = sum(f.added for f in import_files(db, order))
            assert sum(f.added for f in import_files(db, order)) == 0
            merged.append(_stored(db))
            assert db.count() == first
    with TuningDB(tmp / "a.db") as da, TuningDB(tmp / "b.db") as dbb:
        sources = [_stored(da), _stored(dbb)]
    assert set(merged[0]) == set(merged[1]) == set(sources[0]) | set(sources[1])
    # a record both hold under one digest (its identity) but with other features, run or
    # source is stored as the database imported first holds it: first stored wins
    for got, (first, then) in zip(merged, (sources, sources[::-1])):
        assert all(v == first.get(k, then.get(k)) for k, v in got.items())
    assert [p.read_bytes() for p in paths] == before


def test_tune_params_and_devices_carry_over(tmp_path):
    w = WORKLOADS[0]
    with TuningDB(tmp_path / "a.db") as db:
        db.add([Measurement(w, "v100", "t", MeasureRecord.ok({"x": 2}, time_ms=1.0))],
               {w: {"x": [4, 2, 8]}})
    with TuningDB(tmp_path / "c.db") as db:
        (f,) = import_files(db, tmp_path / "a.db")
        assert (f.kind, f.device, f.workload, f.added) == ("tuning-db", "v100", w, 1)
        assert db.tune_params(w) == {"x": [4, 2, 8]}
        assert db.devices()["v100"]["name"]  # the preset's properties, as any import stores


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_merges_and_refuses_in_one_line(capsys, tmp_path):
    """The CLI merges a database (one line per workload and device); a version-0 database
    is read as migrated; another program's SQLite file, the target itself and a database
    of another device than --device are one line, exit 2, and leave no new database."""
    v0 = tmp_path / "v0.db"
    conn = sqlite3.connect(v0)
    conn.executescript(V0_SCHEMA + "INSERT INTO measurements VALUES ('L', 'v100', 't', "
                       "'{\"x\":1}', 'ok', 2.0, 0, '{\"config\": {\"x\": 1}, \"status\": "
                       "\"ok\", \"time_ms\": 2.0}', '');")
    conn.commit()
    conn.close()
    target = tmp_path / "t.db"
    code, out, err = _run(capsys, "history", "import", str(v0), "--db", str(target))
    assert code == 0 and "1 new of 1 measurement (tuning-db, device v100" in out
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE x (a)")
    conn.commit()
    conn.close()
    fresh = tmp_path / "fresh.db"
    for argv, said in ((["import", str(other), "--db", str(fresh)], "not an iobound tuning"),
                       (["import", str(target), "--db", str(target)], "is the database"),
                       (["import", str(v0), "--device", "a100", "--db", str(fresh)],
                        "disagrees")):
        code, _, err = _run(capsys, "history", *argv)
        assert code == 2 and said in err and err.count("\n") == 1 and "Traceback" not in err
        assert not fresh.exists()
    with TuningDB(target) as db:
        assert db.count() == 1
