"""A version-1 tuning database written as iobound's version-1 code wrote one, for migration tests.

Frozen here on purpose: version 1 keyed a workload's problem, a measurement's config and
its digest by the JSON text as written (``json.dumps`` with sorted keys, no spaces), the
digest a SHA-256 over that text of [template, problem, params, device, toolchain, config
text, status, time, estimate flag, timestamp]. Checked once against the version-1 code
itself: commit 1f080c2's ``TuningDB.add`` wrote the same rows (byte-equal configs, records
and digests) for the same measurements, its workload and device ids given in another order.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3

from search.db.model import Measurement

# The tables as version 1 created them (the columns of search/db/schema.py at 1f080c2).
V1_TABLES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE workloads (id INTEGER PRIMARY KEY, template TEXT NOT NULL, problem TEXT NOT NULL,
    params TEXT NOT NULL, tune_params TEXT NOT NULL DEFAULT '{}',
    UNIQUE (template, problem, params));
CREATE TABLE devices (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,
    properties TEXT NOT NULL DEFAULT '{}');
CREATE TABLE measurements (id INTEGER PRIMARY KEY,
    workload INTEGER NOT NULL REFERENCES workloads (id),
    device INTEGER NOT NULL REFERENCES devices (id), toolchain TEXT NOT NULL,
    config TEXT NOT NULL, status TEXT NOT NULL,
    time_ms REAL CHECK (time_ms IS NULL OR time_ms > 0), estimate INTEGER NOT NULL,
    timestamp REAL NOT NULL, features TEXT, record TEXT NOT NULL,
    run TEXT NOT NULL DEFAULT '', source TEXT NOT NULL DEFAULT '', digest TEXT NOT NULL UNIQUE);
CREATE INDEX by_workload_device ON measurements (workload, device, time_ms);
INSERT INTO meta VALUES ('schema_version', '1');
"""


def v1_text(obj) -> str:
    """Version 1's canonical JSON: the text as written, keys sorted, no spaces."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def v1_key(m: Measurement) -> tuple[str, str, str]:
    w = m.workload
    return w.template, v1_text(w.problem), v1_text(sorted(w.params))


def v1_digest(m: Measurement) -> str:
    r = m.record
    ident = [*v1_key(m), m.device, m.toolchain, v1_text(r.config), r.status.value, r.time_ms,
             bool(r.estimate), r.timestamp]
    return hashlib.sha256(v1_text(ident).encode()).hexdigest()


def write_v1(path, items: list[Measurement], tune_params: dict | None = None) -> None:
    """A version-1 database at ``path`` holding ``items`` (stored once per version-1
    digest, in order, ids from 1), each workload's value lists from ``tune_params``
    (keyed by the workload's version-1 key) where given."""
    conn = sqlite3.connect(path)
    conn.executescript(V1_TABLES)
    workloads: dict[tuple, int] = {}
    devices: dict[str, int] = {}
    for m in items:
        key = v1_key(m)
        if key not in workloads:
            values = (tune_params or {}).get(key, {p: [] for p in m.workload.params})
            workloads[key] = conn.execute(
                "INSERT INTO workloads (template, problem, params, tune_params) VALUES "
                "(?, ?, ?, ?)", (*key, json.dumps(values))).lastrowid
        if m.device not in devices:
            devices[m.device] = conn.execute("INSERT INTO devices (name, properties) VALUES "
                                             "(?, '{}')", (m.device,)).lastrowid
        r = m.record
        conn.execute(
            "INSERT INTO measurements (workload, device, toolchain, config, status, time_ms, "
            "estimate, timestamp, features, record, run, source, digest) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (digest) DO NOTHING",
            (workloads[key], devices[m.device], m.toolchain, v1_text(r.config), r.status.value,
             m.time_ms, int(r.estimate), r.timestamp,
             v1_text(m.features) if m.features else None, v1_text(r.to_dict()), m.run,
             m.source, v1_digest(m)))
    conn.commit()
    conn.close()
