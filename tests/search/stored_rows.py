"""How many measurements a tuning database file holds, read with plain sqlite3 (not the
code under test), the connection closed afterwards (``with sqlite3.connect(...)`` only
ends a transaction: Python 3.13 warns about the connection left open); and a stored
config changed by hand, as another program would (:func:`write_config_by_hand`).

>>> import os, tempfile
>>> stored_measurements(os.path.join(tempfile.mkdtemp(), "none.db"))
0
"""

from __future__ import annotations

import json
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


def write_config_by_hand(db, where: str, config: dict, params=None) -> None:
    """Give the one measurement of ``db`` that ``where`` (an SQL condition on the
    ``measurements`` table) selects ``config``, as another program (or a damaged file)
    would: the ``config`` column and the config inside the ``record`` column, both as
    canonical JSON. ``TuningDB.add`` refuses a conv measurement whose config is no kernel
    config of its layer, so a test of such a stored row stores a valid one and changes it
    here. With ``params``, the row is moved to the workload of its template and problem
    with those parameter names (added when missing), as a config of other keys needs.
    The digest is kept (it only has to stay unique)."""
    def canon(obj) -> str:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"))

    with closing(sqlite3.connect(db)) as con:
        rows = con.execute(f"SELECT id, workload, record FROM measurements WHERE {where}").fetchall()
        assert len(rows) == 1, f"{where!r} selects {len(rows)} measurements, not one"
        (rid, wid, record), = rows
        record = json.loads(record)
        record["config"] = config
        if params is not None:  # the columns as TuningDB writes them: names sorted, and
            # tune_params (which keeps their order) holding no values
            con.execute("INSERT INTO workloads (template, problem, params, tune_params) "
                        "SELECT template, problem, ?, ? FROM workloads WHERE id=? "
                        "ON CONFLICT DO NOTHING", (canon(sorted(params)),
                                                   json.dumps(dict.fromkeys(params, [])), wid))
            (wid,), = con.execute("SELECT n.id FROM workloads n JOIN workloads o ON "
                                  "n.template=o.template AND n.problem=o.problem "
                                  "WHERE o.id=? AND n.params=?", (wid, canon(sorted(params))))
        con.execute("UPDATE measurements SET workload=?, config=?, record=? WHERE id=?",
                    (wid, canon(config), canon(record), rid))
        con.commit()
