"""Migration of first-generation ``--history`` files (schema version 0) to the current schema.

Version 0 kept one row per (layer, device, toolchain, config), the latest
measurement, with the record JSON. Each row becomes one measurement of the
workload its ``layer`` string names (see :func:`search.db.model.layer_key_workload`),
with its record, run and timestamp kept.

Examples
--------
>>> import sqlite3
>>> from search.db.schema import connect
>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "old.sqlite")
>>> old = sqlite3.connect(path)
>>> _ = old.executescript(V0_SCHEMA)
>>> rec = '{"config": {"x": 1}, "status": "ok", "time_ms": 2.0, "timestamp": 5.0}'
>>> _ = old.execute("INSERT INTO measurements VALUES ('L', 'v100', 't', '{\\"x\\":1}', 'ok', 2.0, 0, ?, '')", (rec,))
>>> old.commit(); old.close()
>>> conn = connect(path)
>>> conn.execute("SELECT time_ms, timestamp FROM measurements").fetchall()
[(2.0, 5.0)]
"""

from __future__ import annotations

import json
import sqlite3

from iobound.errors import InvalidInputError

from ..measure.base import MeasureRecord
from .model import Measurement, layer_key_workload

__all__ = ["V0_SCHEMA", "migrate_v0"]

#: The version-0 table, as the first ``search/history.py`` created it.
V0_SCHEMA = """
CREATE TABLE IF NOT EXISTS measurements (
    layer TEXT NOT NULL, device TEXT NOT NULL, toolchain TEXT NOT NULL, config TEXT NOT NULL,
    status TEXT NOT NULL, time_ms REAL, estimate INTEGER NOT NULL, record TEXT NOT NULL,
    run TEXT NOT NULL DEFAULT '', PRIMARY KEY (layer, device, toolchain, config)
);
CREATE INDEX IF NOT EXISTS by_key ON measurements (layer, device, toolchain, time_ms);
"""


def migrate_v0(conn: sqlite3.Connection) -> int:
    """Copy ``measurements_v0`` into the current tables (inside the caller's transaction).

    Raises
    ------
    InvalidInputError
        Naming the row, when one holds a record that is not a measurement record (the
        caller's transaction then leaves the file as it was).
    """
    from .store import insert
    items = []
    for n, (layer, device, toolchain, record, run) in enumerate(conn.execute(
            "SELECT layer, device, toolchain, record, run FROM measurements_v0"), start=1):
        try:
            rec = MeasureRecord.from_dict(json.loads(record))
            items.append(Measurement(layer_key_workload(layer, tuple(rec.config)), device,
                                     toolchain, rec, run=run, source="history v0"))
        except (ValueError, KeyError, TypeError, AttributeError, OverflowError,
                RecursionError) as exc:
            raise InvalidInputError(f"damaged: version-0 row {n} (device {str(device)[:40]!r}) "
                                    f"holds no measurement record: {type(exc).__name__}: "
                                    f"{' '.join(str(exc).split())[:80]}") from None
    return insert(conn, items, {})
