"""An SQLite history of tuning measurements across layers, devices and toolchains.

One table ``measurements`` keyed by ``(layer, device, toolchain, config)``: the
layer's canonical JSON (or the replay file's kernel and problem), the device
name, the measurer's toolchain string (compiler + GPU, model version, replay
file) and the configuration's canonical JSON, plus the record (status, time,
estimate flag, the full record JSON) and the run it came from. A second
measurement of the same key replaces the first (latest wins). Stdlib ``sqlite3``;
no pickle.

Examples
--------
>>> from search.measure.base import MeasureRecord
>>> h = History(":memory:")
>>> key = HistoryKey(layer="L", device="v100", toolchain="model v1")
>>> h.add(key, [MeasureRecord.ok({"x": 1}, time_ms=2.0), MeasureRecord.ok({"x": 2}, time_ms=1.0)])
2
>>> h.best(key).config, len(h.records(key)), h.keys() == [key]
({'x': 2}, 2, True)
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from typing import Iterable

from kernels.status import Status

from .measure.base import MeasureRecord

__all__ = ["HistoryKey", "History"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS measurements (
    layer TEXT NOT NULL,
    device TEXT NOT NULL,
    toolchain TEXT NOT NULL,
    config TEXT NOT NULL,
    status TEXT NOT NULL,
    time_ms REAL,
    estimate INTEGER NOT NULL,
    record TEXT NOT NULL,
    run TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (layer, device, toolchain, config)
);
CREATE INDEX IF NOT EXISTS by_key ON measurements (layer, device, toolchain, time_ms);
"""


@dataclass(frozen=True)
class HistoryKey:
    """What measurements are comparable under: layer, device, toolchain (strings)."""

    layer: str
    device: str
    toolchain: str


def _canon(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


class History:
    """The history database at ``path`` (created on first use; ``":memory:"`` works)."""

    def __init__(self, path: str | os.PathLike):
        self.path = str(path)
        self._db = sqlite3.connect(self.path)
        self._db.executescript(_SCHEMA)

    def add(self, key: HistoryKey, records: Iterable[MeasureRecord], run: str = "") -> int:
        """Store records under ``key`` (latest wins per config); returns how many."""
        rows = [(key.layer, key.device, key.toolchain, _canon(r.config), r.status.value, r.time_ms,
                 int(r.estimate), _canon(r.to_dict()), run) for r in records]
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO measurements VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        return len(rows)

    def records(self, key: HistoryKey) -> list[MeasureRecord]:
        """Every stored record under ``key``, fastest first (failures last)."""
        cur = self._db.execute(
            "SELECT record FROM measurements WHERE layer=? AND device=? AND toolchain=? "
            "ORDER BY time_ms IS NULL, time_ms", (key.layer, key.device, key.toolchain))
        return [MeasureRecord.from_dict(json.loads(r[0])) for r in cur]

    def best(self, key: HistoryKey) -> MeasureRecord | None:
        """The fastest ok record under ``key`` (None when there is none)."""
        cur = self._db.execute(
            "SELECT record FROM measurements WHERE layer=? AND device=? AND toolchain=? "
            "AND status=? AND time_ms IS NOT NULL ORDER BY time_ms LIMIT 1",
            (key.layer, key.device, key.toolchain, Status.OK.value))
        row = cur.fetchone()
        return MeasureRecord.from_dict(json.loads(row[0])) if row else None

    def keys(self) -> list[HistoryKey]:
        """Every key with stored measurements."""
        cur = self._db.execute("SELECT DISTINCT layer, device, toolchain FROM measurements "
                               "ORDER BY layer, device, toolchain")
        return [HistoryKey(*row) for row in cur]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "History":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
