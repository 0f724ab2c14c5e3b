"""A small hostile tuning database must not make a read allocate gigabytes.

SQLite columns can be *generated*: ``properties TEXT GENERATED ALWAYS AS (printf('%.*c',
200000000, 'x')) VIRTUAL`` stores nothing and computes 200 MB each time a row is read.
A 40 KB file with such a ``devices`` table passes every schema check (the right tables,
``meta.schema_version`` 1), and ``TuningDB(...).devices()`` then holds 600 MB (measured:
one row); a few rows exhaust the machine. The data iobound reads is stored data: a file
whose tables compute their columns is not an iobound tuning database and must be refused
(one InvalidInputError naming the file) before any row is read."""

from __future__ import annotations

import sqlite3

import pytest

from iobound.errors import InvalidInputError
from search.db import schema
from search.db.store import TuningDB

_STORED = {
    "devices": "properties TEXT NOT NULL DEFAULT '{}'",
    "measurements": "record TEXT NOT NULL,",
}
_COMPUTED = {  # 1 MB per read here (a real attack: up to SQLite's 1e9-byte limit)
    "devices": "properties TEXT GENERATED ALWAYS AS "
               "('{\"a\": \"' || printf('%.*c', 1000000, 'x') || '\"}') VIRTUAL",
    "measurements": "record TEXT GENERATED ALWAYS AS "
                    "('{\"a\": \"' || printf('%.*c', 1000000, 'x') || '\"}') VIRTUAL,",
}


@pytest.mark.parametrize("table", sorted(_COMPUTED))
@pytest.mark.parametrize("readonly", [True, False])
def test_database_whose_columns_are_computed_on_read_is_refused(tmp_path, table, readonly):
    path = tmp_path / "hostile.db"
    conn = sqlite3.connect(path)
    conn.executescript(schema._TABLES.replace(_STORED[table], _COMPUTED[table]))
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    conn.execute("INSERT INTO devices (name) VALUES ('A100')")
    conn.commit()
    conn.close()
    assert path.stat().st_size < 100_000
    with pytest.raises(InvalidInputError, match="hostile.db"):
        db = TuningDB(path, readonly=readonly)
        db.devices()
        db.measurements()
