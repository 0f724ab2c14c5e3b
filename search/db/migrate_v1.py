"""Migration of version-1 tuning databases to version 2: keys that compare numbers as Python does.

Version 1 keyed a workload's problem, a measurement's config and its digest by their JSON
text, so ``{"x": 2}``, ``{"x": 2.0}`` and ``{"x": true}`` were three configurations of
one workload (three rows of ``history best``, three cache entries on export that Kernel
Tuner counts as one) and a problem ``[64.0]`` another workload than ``[64]``. Version 2
keys them by :func:`~search.db.model.canon_key`. Migrating, inside the caller's
transaction:

- workloads whose keys become equal are merged into the first stored (its id kept), their
  value lists merged in stored order and their measurements re-pointed to it;
- each measurement's config column and digest are recomputed from its stored record; a
  measurement whose new digest an earlier one already has (the same measurement written
  twice, once with 2 and once with 2.0) is removed, the earlier kept: ids never change, so
  a run's mark (``TuningDB.last_id``) still means what it meant, and the largest id ever
  given is remembered (:data:`~search.db.insertion.ID_HIGH_WATER`);
- a row that cannot be read (changed by another program or by hand) is left as it was,
  for the reading that names it (``history remove`` can then drop it).

Examples
--------
>>> import sqlite3
>>> conn = sqlite3.connect(":memory:")
>>> _ = conn.executescript(V1_EXAMPLE)
>>> migrate_v1(conn)
(1, 1)
>>> conn.execute("SELECT problem FROM workloads").fetchall()
[('[64]',)]
>>> conn.execute("SELECT workload, config FROM measurements").fetchall()
[(1, '{"x":2}')]
"""

from __future__ import annotations

import json
import logging
import sqlite3

from iobound.errors import InvalidInputError

from ..measure.base import MeasureRecord
from .insertion import ID_HIGH_WATER, added_values, last_id_ever
from .model import Workload, canon_key, digest_of, workload_from_row

__all__ = ["migrate_v1", "V1_EXAMPLE"]

log = logging.getLogger(__name__)

#: A version-1 database in miniature (the doctest's): one problem written two ways, one
#: measurement stored twice (its config 2 and 2.0).
V1_EXAMPLE = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE workloads (id INTEGER PRIMARY KEY, template TEXT, problem TEXT, params TEXT,
                        tune_params TEXT);
CREATE TABLE devices (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE measurements (id INTEGER PRIMARY KEY, workload INTEGER, device INTEGER,
                           toolchain TEXT, config TEXT, record TEXT, digest TEXT UNIQUE);
INSERT INTO meta VALUES ('schema_version', '1');
INSERT INTO workloads VALUES (1, 'k', '[64]', '["x"]', '{"x":[2]}'),
                             (2, 'k', '[64.0]', '["x"]', '{"x":[2.0,4]}');
INSERT INTO devices VALUES (1, 'v100');
INSERT INTO measurements VALUES
  (1, 1, 1, 't', '{"x":2}', '{"config":{"x":2},"status":"ok","time_ms":1.0,"timestamp":5.0}', 'a'),
  (2, 2, 1, 't', '{"x":2.0}', '{"config":{"x":2.0},"status":"ok","time_ms":1.0,"timestamp":5.0}',
   'b');
"""


def migrate_v1(conn: sqlite3.Connection) -> tuple[int, int]:
    """Re-key a version-1 database in place (inside the caller's transaction); returns how
    many workloads and measurements were merged away.

    >>> conn = sqlite3.connect(":memory:")
    >>> _ = conn.executescript(V1_EXAMPLE)
    >>> migrate_v1(conn), conn.execute("SELECT id FROM measurements").fetchall()
    ((1, 1), [(1,)])
    >>> last_id_ever(conn)  # measurement 2 was merged away: its id is never given again
    2
    """
    high = last_id_ever(conn)
    workloads, merged = _merge_workloads(conn)
    removed = _rekey_measurements(conn, workloads)
    if removed:  # the removed ids are never given again
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (ID_HIGH_WATER, str(high)))
    return merged, removed


def _merge_workloads(conn: sqlite3.Connection) -> tuple[dict[int, Workload], int]:
    """Each readable workload row's id -> its workload, after rows of one key were merged
    into the first (their measurements re-pointed), and how many rows were merged away."""
    groups: dict[tuple, list[tuple[int, Workload, dict]]] = {}
    unread = 0
    for wid, template, problem, tune_params in conn.execute(
            "SELECT id, template, problem, tune_params FROM workloads ORDER BY id").fetchall():
        try:
            w = workload_from_row(template, problem, tune_params)
        except (InvalidInputError, TypeError, ValueError):
            unread += 1
            continue
        values = json.loads(tune_params)
        values = values if isinstance(values, dict) else {}
        groups.setdefault(w.key(), []).append((wid, w, values))
    workloads, merged = {}, 0
    for key, rows in groups.items():
        keep, w, values = rows[0]
        values = {p: added_values([], _value_list(values, p)) for p in w.params}
        for wid, _, more in rows[1:]:
            for p in w.params:
                added_values(values[p], _value_list(more, p))
            conn.execute("UPDATE measurements SET workload=? WHERE workload=?", (keep, wid))
            conn.execute("DELETE FROM workloads WHERE id=?", (wid,))
            merged += 1
        try:
            conn.execute("UPDATE workloads SET problem=?, params=?, tune_params=? WHERE id=?",
                         (key[1], key[2], json.dumps(values), keep))
        except sqlite3.IntegrityError:  # an unreadable row already holds the new key
            raise InvalidInputError(f"damaged: workload id {keep} ({w.label()}) has the key of "
                                    f"another row that cannot be read") from None
        workloads[keep] = w
    if unread:
        log.warning("%d workload rows that cannot be read were left as they were", unread)
    return workloads, merged


def _value_list(values: dict, param: str) -> list:
    """A stored workload's values of ``param`` (none when the row holds no list)."""
    got = values.get(param)
    return got if isinstance(got, list) else []


def _rekey_measurements(conn: sqlite3.Connection, workloads: dict[int, Workload]) -> int:
    """Recompute each readable measurement's config column and digest; remove those whose
    digest an earlier one has. Returns how many were removed."""
    kept: dict[str, int] = {}
    updates, duplicates, unread = [], [], 0
    rows = conn.execute("SELECT m.id, m.workload, d.name, m.toolchain, m.record FROM measurements "
                        "m JOIN devices d ON m.device = d.id ORDER BY m.id")
    for mid, wid, device, toolchain, record in rows:
        w = workloads.get(wid)
        try:
            rec = MeasureRecord.from_dict(json.loads(record))
            digest = digest_of(w.key(), device, toolchain, rec)
        except (AttributeError, KeyError, TypeError, ValueError, RecursionError):
            unread += 1  # an unreadable workload (None) or record: left for its reader
            continue
        if digest in kept:
            duplicates.append((mid,))
        else:
            kept[digest] = mid
            updates.append((canon_key(rec.config), digest, mid))
    # Old and new digests never collide: a version-1 digest's text holds the estimate flag
    # as true or false, a version-2 one as 1 or 0; so the order of the updates is free.
    conn.executemany("DELETE FROM measurements WHERE id=?", duplicates)
    conn.executemany("UPDATE measurements SET config=?, digest=? WHERE id=?", updates)
    if unread:
        log.warning("%d measurement rows that cannot be read were left as they were", unread)
    return len(duplicates)
