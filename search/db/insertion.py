"""Writing measurements into the tuning database: what a measurement must be to be
stored (:func:`storable`: the checks every import and ``TuningDB.add`` share) and how its
rows go in (:func:`insert`, inside the caller's transaction: the workload and device rows
it needs, the measurement once by its digest, the ids only growing).

Examples
--------
>>> from search.measure.base import MeasureRecord
>>> storable(Measurement(Workload("k", [8], ("x",)), "d", "t",
...                      MeasureRecord.ok({"x": 1}, time_ms=1.0))).record.config
{'x': 1}
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Mapping, Sequence

from iobound.errors import InvalidInputError

from ..option_checks import check_type
from ..records import as_logged
from .conv_template import CONV_TEMPLATE, conv_algorithm, conv_config_fault, stored_layer
from .features import checked_features
from .model import (Measurement, Workload, canon, canon_key, config_fault, problem_fault,
                    stored_json)

__all__ = ["device_properties", "storable", "insert", "last_id_ever", "added_values",
           "ID_HIGH_WATER"]


def device_properties(name: str) -> dict:
    """The preset's fields when ``name`` is a known device preset (any alias), else ``{}``.

    >>> device_properties("v100")["name"], device_properties("my lab GPU")
    ('V100-SXM2', {})
    """
    from iobound.devices import get_device
    from iobound.errors import IoboundError
    try:
        return get_device(name).to_dict()
    except (IoboundError, ValueError, KeyError):
        return {}


def storable(m: Measurement) -> Measurement:
    """``m`` as the database stores it: numpy scalars in its config, ``extra`` and
    ``features`` as Python values (:func:`search.records.as_logged`); refused when export
    could not write it, or its features are not the cost model's numeric columns
    (:func:`~.features.checked_features`: a NaN is refused there, not stored as null, since
    a column of null would silently drop the row from every model trained on it).

    >>> from search.measure.base import MeasureRecord
    >>> storable(Measurement(Workload("k", [8], ("x", "y")), "d", "t",
    ...                      MeasureRecord.ok({"x": 1}, time_ms=1.0)))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: a measurement of k [8] on 'd' has config {"x":1}: it lacks y

    Raises
    ------
    InvalidInputError
        When the config is not the workload's parameters, each a finite number, a
        string or a flat list (:func:`~.model.config_fault`, as import requires), the
        workload's problem holds NaN or Infinity (:func:`~.model.problem_fault`), or, of
        our conv template, the config is no kernel config of the layer
        (:func:`~.model.conv_config_fault`; a timed ``ok`` one must also be valid), or
        a feature is no finite number or has a name that is no string.
    """
    check_type("m", m, Measurement)
    r, w = m.record, m.workload
    fault = problem_fault(w.problem)
    if fault:
        raise InvalidInputError(f"a measurement of {w.label()} on {m.device!r}: its problem "
                                f"{fault}")
    config, extra = as_logged(r.config), as_logged(r.extra)
    fault = config_fault(config, w.params)
    if fault:
        raise InvalidInputError(f"a measurement of {w.label()} on {m.device!r} has config "
                                f"{canon(config)[:80]}: {fault}")
    features = m.features if m.features is None else checked_features(
        m.features, f"a measurement of {w.label()} on {m.device!r}: features")
    record = dataclasses.replace(r, config=config, extra=extra)
    layer = stored_layer(w.problem) if w.template == CONV_TEMPLATE else None
    fault = conv_config_fault(record, layer, conv_algorithm(w.params)) if layer else ""
    if fault:  # as import refuses it: stored, kernel --from-history could not build it
        raise InvalidInputError(f"a measurement of {w.label()} on {m.device!r}: {fault}")
    return dataclasses.replace(m, record=record, features=features)


def insert(c: sqlite3.Connection, items: Sequence[Measurement],
           tune_params: Mapping[Workload, Mapping[str, Sequence]]) -> int:
    """Insert ``items`` inside the caller's transaction; returns how many were new.

    >>> from search.db.schema import connect
    >>> from search.measure.base import MeasureRecord
    >>> conn, w = connect(":memory:"), Workload("k", [8], ("x",))
    >>> m = Measurement(w, "v100", "t", MeasureRecord.ok({"x": 1}, time_ms=1.0))
    >>> insert(conn, [m, m], {w: {"x": [1, 2]}})  # the same measurement once
    1
    >>> conn.execute("SELECT tune_params FROM workloads").fetchone()
    ('{"x": [1, 2]}',)
    """
    wids = {w: _workload_id(c, w, tune_params.get(w, {}))
            for w in {m.workload for m in items} | set(tune_params)}
    dids = {name: _device_id(c, name) for name in {m.device for m in items}}
    before = c.total_changes
    base = last_id_ever(c)  # ids only grow: a mark (TuningDB.last_id) stays a mark
    # only a stored digest (the same measurement: import is idempotent) is passed over; any
    # other constraint a row breaks fails the call (OR IGNORE would drop the row silently)
    c.executemany(
        "INSERT INTO measurements (id, workload, device, toolchain, config, status, "
        "time_ms, estimate, timestamp, features, record, run, source, digest) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (digest) DO NOTHING",
        [(base + k, wids[m.workload], dids[m.device], m.toolchain, canon_key(m.record.config),
          m.record.status.value, m.time_ms, int(m.record.estimate), m.record.timestamp,
          canon(m.features) if m.features else None, canon(m.record.to_dict()), m.run,
          m.source, m.digest()) for k, m in enumerate(items, start=1)])
    return c.total_changes - before


#: The ``meta`` key of the largest measurement id the database ever held (kept when the
#: measurements of the largest ids are removed, so that their ids are never given again).
ID_HIGH_WATER = "measurement_id_high_water"


def last_id_ever(c: sqlite3.Connection) -> int:
    """The largest measurement id ever given in the database (0 for none): SQLite gives a
    new row the largest id present + 1, so without this a measurement stored after the
    last ones were removed would take an id a run's mark (``TuningDB.last_id``, recorded
    in its log) already counts as held when the mark was taken.

    >>> from search.db.store import TuningDB
    >>> from search.measure.base import MeasureRecord
    >>> db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
    >>> from search.db.remove import Selection, remove
    >>> _ = db.add([Measurement(w, "v100", t, MeasureRecord.ok({"x": x}, time_ms=1.0))
    ...             for x, t in ((1, "a"), (2, "b"))])
    >>> _ = remove(db, Selection(toolchain="b"))  # the measurement of id 2
    >>> db.count(), last_id_ever(db.connection)
    (1, 2)
    """
    row = c.execute("SELECT value FROM meta WHERE key=?", (ID_HIGH_WATER,)).fetchone()
    try:
        high = int(row[0]) if row else 0
    except (TypeError, ValueError):  # a value written by hand: the ids present decide
        high = 0
    present = c.execute("SELECT COALESCE(MAX(id), 0) FROM measurements").fetchone()[0]
    return max(high, int(present))


def _workload_id(c: sqlite3.Connection, w: Workload, values: Mapping[str, Sequence]) -> int:
    key = w.key()
    row = c.execute("SELECT id, tune_params FROM workloads WHERE template=? AND problem=? "
                    "AND params=?", key).fetchone()
    if row is None:  # tune_params keeps the first-seen parameter order
        merged = {p: added_values([], values.get(p, [])) for p in w.params}
        cur = c.execute("INSERT INTO workloads (template, problem, params, tune_params) "
                        "VALUES (?, ?, ?, ?)", (*key, json.dumps(merged)))
        return int(cur.lastrowid)
    if values:  # keep the known order; append values not seen before
        merged = stored_json(row[1], "a workload's tune_params")
        for p in w.params:
            added_values(merged.setdefault(p, []), values.get(p, []))
        c.execute("UPDATE workloads SET tune_params=? WHERE id=?", (json.dumps(merged), row[0]))
    return int(row[0])


def added_values(known: list, values: Sequence) -> list:
    """``known`` with each of ``values`` it lacks (as Python compares them: 2.0 is 2)
    appended once, in their order (values may be lists: not hashable).

    >>> added_values([2, 4], [4.0, 8, 2])
    [2, 4, 8]
    """
    for v in values:
        if v not in known:
            known.append(v)
    return known


def _device_id(c: sqlite3.Connection, name: str) -> int:
    row = c.execute("SELECT id FROM devices WHERE name=?", (name,)).fetchone()
    if row:
        return int(row[0])
    cur = c.execute("INSERT INTO devices (name, properties) VALUES (?, ?)",
                    (name, canon(device_properties(name))))
    return int(cur.lastrowid)
