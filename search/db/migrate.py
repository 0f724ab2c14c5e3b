"""Migration of first-generation ``--history`` files (schema version 0) to the current schema.

Version 0 kept one row per (layer, device, toolchain, config), the latest
measurement, with the record JSON. Each row becomes one measurement of the
workload its ``layer`` string names (see :func:`search.db.layer_keys.layer_key_workload`),
with its record, run and timestamp kept. Rows of a replayed in-memory cache that named no
device (toolchain ``replay:memory:``, device ``""``) are left out with a warning: no name
tells them from the target's own measurements, and a run today refuses to store them.

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

import ast
import json
import logging
import sqlite3

from iobound.errors import InvalidInputError

from ..measure.base import MeasureRecord
from ..file_names import file_stem
from .layer_keys import layer_key_workload
from .conv_template import CONV_TEMPLATE, current_layer_problem
from .model import Measurement, Workload, recorded_workload

__all__ = ["V0_SCHEMA", "migrate_v0"]

log = logging.getLogger(__name__)

#: The toolchain version 0 stored for a replay of a cache held in memory (no file name).
_V0_MEMORY_REPLAY = "replay:memory:"

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

    >>> from search.db.schema import connect
    >>> conn = connect(":memory:")
    >>> _ = conn.execute("CREATE TABLE measurements_v0 (layer, device, toolchain, record, run)")
    >>> rec = '{"config": {"x": 1}, "status": "ok", "time_ms": 2.0}'
    >>> _ = conn.executemany("INSERT INTO measurements_v0 VALUES (?, ?, ?, ?, 'r')",
    ...     [("L", "v100", "t", rec), ("L", "", "replay:memory:", rec)])  # the 2nd: no device
    >>> migrate_v0(conn)
    1
    >>> conn.execute("SELECT w.template, w.problem, m.source FROM measurements m "
    ...              "JOIN workloads w ON m.workload = w.id").fetchall()
    [('', '"L"', 'history v0')]

    Raises
    ------
    InvalidInputError
        Naming the row, when one holds a record that is not a measurement record (the
        caller's transaction then leaves the file as it was).
    """
    from .insertion import insert
    items, unnamed = [], 0
    for n, (layer, device, toolchain, record, run) in enumerate(conn.execute(
            "SELECT layer, device, toolchain, record, run FROM measurements_v0"), start=1):
        if toolchain == _V0_MEMORY_REPLAY and isinstance(device, str) and not device.strip():
            unnamed += 1
            continue
        try:
            rec = MeasureRecord.from_dict(json.loads(record))
            items.append(Measurement(_v0_workload(layer, tuple(rec.config)),
                                     _v0_device(device, toolchain), toolchain, rec, run=run,
                                     source="history v0"))
        except (ValueError, KeyError, TypeError, AttributeError, OverflowError,
                RecursionError) as exc:
            raise InvalidInputError(f"damaged: version-0 row {n} (device {str(device)[:40]!r}) "
                                    f"holds no measurement record: {type(exc).__name__}: "
                                    f"{' '.join(str(exc).split())[:80]}") from None
    if unnamed:
        log.warning("%d version-0 rows of a replayed in-memory cache were left out: they "
                    "name no device", unnamed)
    return insert(conn, items, {})


_UNREAD = object()


def _v0_problem(text: str):
    """A version-0 replay key's problem: written as ``f"{problem_size}"`` (Python's repr:
    ``None``, ``['fp16', 64]``), which is JSON only for numbers and lists of numbers."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        pass
    try:
        value = ast.literal_eval(text)
        return value if json.loads(json.dumps(value)) == value else _UNREAD
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError, OverflowError):
        return _UNREAD


def _v0_workload(layer: str, params):
    """The workload of a version-0 ``layer`` string, as a run today stores the same space:
    a replay key ``replay:KERNEL:PROBLEM`` as the version-0 CLI wrote it (the kernel name as
    it was, the problem as Python's repr), and a layer of our conv template as today's
    :meth:`~iobound.layer.ConvLayer.to_dict` writes it (version 0 had no ``groups``)."""
    w = None
    if layer.startswith("replay:"):
        rest = layer[len("replay:"):]
        for i, ch in enumerate(rest):
            if ch == ":":
                problem = _v0_problem(rest[i + 1:])
                if problem is not _UNREAD:
                    w = recorded_workload(rest[:i], problem, params)
                    break
    if w is None:
        w = layer_key_workload(layer, params)
    if w.template != CONV_TEMPLATE:
        return w
    return Workload(CONV_TEMPLATE, current_layer_problem(w.problem), w.params)


def _v0_device(device: str, toolchain: str) -> str:
    """A version-0 row's device; a replayed cache that named none was stored under ``""``
    with the toolchain ``replay:FILE:``, and goes under the file's name without its
    endings, as a run on that file stores it today (:attr:`search.kt_cache.KtCache.device`).
    (A cache held in memory had no file: :func:`migrate_v0` leaves its rows out first.)"""
    if isinstance(device, str) and not device.strip() and isinstance(toolchain, str) \
            and toolchain.startswith("replay:") and toolchain.endswith(":"):
        name = toolchain[len("replay:"):-1]
        if name:
            return file_stem(name)
    return device
