"""How many measurements a tuning database file holds, read with plain sqlite3 (not the
code under test), the connection closed afterwards (``with sqlite3.connect(...)`` only
ends a transaction: Python 3.13 warns about the connection left open).

>>> import os, tempfile
>>> stored_measurements(os.path.join(tempfile.mkdtemp(), "none.db"))
0
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing


def stored_measurements(db) -> int:
    """Rows of ``db``'s ``measurements`` table; 0 when there is no such file."""
    if not os.path.exists(db):
        return 0
    with closing(sqlite3.connect(f"file:{os.fspath(db)}?mode=ro", uri=True)) as con:
        return con.execute("SELECT COUNT(*) FROM measurements").fetchone()[0]


def query_rows(db, query: str) -> list:
    """Every row ``query`` returns from ``db``."""
    with closing(sqlite3.connect(db)) as con:
        return con.execute(query).fetchall()
