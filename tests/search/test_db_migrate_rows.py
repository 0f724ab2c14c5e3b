"""Migration of version-0 ``--history`` files (search/db/migrate.py), row by row.

Reference: the rows written into the version-0 table: after the migration each is one
measurement with that device, toolchain, run, record (time, timestamp, config) and the
source ``history v0``, of the workload its layer string names
(:func:`search.db.layer_keys.layer_key_workload`); a damaged row is named by its 1-based
position and leaves the file as it was.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from iobound.errors import InvalidInputError
from search.db import TuningDB
from search.db.migrate import V0_SCHEMA, migrate_v0
from search.db.layer_keys import layer_key_workload
from search.db.schema import connect
from search.measure.base import MeasureRecord

ROWS = [  # layer, device, toolchain, record, run
    ("replay:conv:[64, 64]", "v100", "replay:f.json:v100",
     MeasureRecord.ok({"bx": 4, "by": 2}, time_ms=3.0), "random:seed0"),
    ('{"n": 1, "c_in": 8}', "a100", "nvcc 12", MeasureRecord.ok({"x": 1}, time_ms=0.5), "gga:seed1"),
    ("my layer", "GPU 3", "emulate", MeasureRecord.ok({"x": 2}, time_ms=7.25), ""),
]


def _v0(path, rows) -> None:
    old = sqlite3.connect(path)
    old.executescript(V0_SCHEMA)
    for layer, device, toolchain, rec, run in rows:
        record = rec if isinstance(rec, str) else json.dumps({**rec.to_dict(), "timestamp": 1e9})
        old.execute("INSERT INTO measurements VALUES (?, ?, ?, ?, 'ok', 1.0, 0, ?, ?)",
                    (layer, device, toolchain, layer + device, record, run))
    old.commit()
    old.close()


def test_every_row_becomes_the_measurement_it_held(tmp_path):
    path = tmp_path / "old.db"
    _v0(path, ROWS)
    with TuningDB(path) as db:
        got = {(m.device, m.toolchain): m for m in db.measurements()}
    assert len(got) == len(ROWS)
    for layer, device, toolchain, rec, run in ROWS:
        m = got[(device, toolchain)]
        assert m.workload == layer_key_workload(layer, tuple(rec.config))
        assert (m.run, m.source) == (run, "history v0")
        assert (m.record.config, m.record.time_ms, m.record.timestamp) == (rec.config, rec.time_ms,
                                                                          1e9)


def test_a_damaged_row_is_named_by_its_position_and_nothing_changes(tmp_path):
    path = tmp_path / "old.db"
    _v0(path, [ROWS[0], ("L", "v100", "t", '{"status": "ok"}', "")])
    before = path.read_bytes()
    with pytest.raises(InvalidInputError, match=r"version-0 row 2 \(device 'v100'\)"):
        connect(path)
    assert path.read_bytes() == before


def test_migrate_v0_returns_how_many_rows_it_stored():
    """Called in a transaction on a ``measurements_v0`` table beside the current tables."""
    conn = connect(":memory:")
    conn.executescript(V0_SCHEMA.replace("measurements", "measurements_v0"))
    for layer, device, toolchain, rec, run in ROWS:
        conn.execute("INSERT INTO measurements_v0 VALUES (?, ?, ?, '{}', 'ok', 1.0, 0, ?, ?)",
                     (layer, device, toolchain, json.dumps(rec.to_dict()), run))
    conn.execute("BEGIN")
    assert migrate_v0(conn) == len(ROWS)
    conn.execute("COMMIT")
    assert conn.execute("SELECT COUNT(*) FROM measurements").fetchone()[0] == len(ROWS)


def test_rows_of_an_unnamed_in_memory_replay_are_left_out_with_a_warning(tmp_path, caplog):
    """Version 0 stored a replay of a cache held in memory that named no device under device
    "" and toolchain ``replay:memory:``: no name tells those rows from the target's own, so
    the file opens with them left out (and a warning counting them), the others migrated."""
    path = tmp_path / "old.db"
    unnamed = ("replay:k:[8]", "", "replay:memory:", MeasureRecord.ok({"a": 1}, time_ms=2.0), "")
    _v0(path, [ROWS[0], unnamed])
    with caplog.at_level("WARNING", logger="search.db.migrate"), TuningDB(path) as db:
        devices = [m.device for m in db.measurements()]
    assert devices == ["v100"]
    assert "1 version-0 rows of a replayed in-memory cache were left out" in caplog.text
