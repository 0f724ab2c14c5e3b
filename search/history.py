"""The ``--history`` API of the tune CLI, kept on top of the tuning database.

:class:`History` and :class:`HistoryKey` are the interface the tuning session uses:
``add`` measurements under a key ``(layer, device, toolchain)``, read back
``records``, the ``best`` one and the ``keys``. They now store into
:class:`search.db.TuningDB` (every measurement kept, schema versioned; an old
history file is migrated on open); ``layer`` is the workload's key string (a
layer's JSON, or ``replay:KERNEL:PROBLEM``, see
:func:`search.db.layer_keys.layer_key_workload`). ``records`` shows the latest
measurement of each configuration, as before.

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

import os
from dataclasses import dataclass
from typing import Iterable

from .db.layer_keys import layer_key_workload, workload_layer_key
from .db.model import Measurement, Workload, canon_key, workload_from_row
from .db.store import TuningDB
from .measure.base import MeasureRecord

__all__ = ["HistoryKey", "History"]


@dataclass(frozen=True)
class HistoryKey:
    """What measurements are comparable under: layer, device, toolchain (strings).

    >>> key = HistoryKey("L", "v100", "model v1")
    >>> key == HistoryKey(layer="L", device="v100", toolchain="model v1"), key.device
    (True, 'v100')
    """

    layer: str
    device: str
    toolchain: str


class History:
    """The history (tuning) database at ``path`` (created on first use; ``":memory:"`` works).

    >>> import tempfile, os
    >>> from kernels.status import Status
    >>> path = os.path.join(tempfile.mkdtemp(), "tuning.db")
    >>> key = HistoryKey("L", "v100", "model v1")
    >>> with History(path) as h:  # measured, then measured again and failed
    ...     h.add(key, [MeasureRecord.ok({"x": 1}, time_ms=2.0)])
    ...     h.add(key, [MeasureRecord.failed({"x": 1}, Status.RUNTIME_ERROR)])
    1
    1
    >>> with History(path) as h:  # the best keeps the timing, records show the latest
    ...     h.best(key).time_ms, [r.status.value for r in h.records(key)]
    (2.0, ['runtime_error'])
    """

    def __init__(self, path: str | os.PathLike, *, db: TuningDB | None = None):
        """``db``: an open database to use (e.g. one opened read-only) instead of opening
        ``path``."""
        self.db = db if db is not None else TuningDB(path)  # refuses a path that is no path
        self.path = str(path)

    def add(self, key: HistoryKey, records: Iterable[MeasureRecord], run: str = "") -> int:
        """Store records under ``key``; returns how many were given.

        Each record goes to the workload of ``key.layer`` with its own config's parameter
        names: a layer's direct and Winograd configurations (``e``) are two workloads.
        """
        from .option_checks import check_records, check_type
        check_type("key", key, HistoryKey)
        records = list(check_records("records", records, MeasureRecord))
        workloads: dict[frozenset, object] = {}
        for r in records:
            names = frozenset(r.config)
            if names not in workloads:
                workloads[names] = layer_key_workload(key.layer, tuple(r.config))
        self.db.add([Measurement(workloads[frozenset(r.config)], key.device, key.toolchain, r,
                                 run=run, source="tune") for r in records])
        return len(records)

    def _latest(self, key: HistoryKey, params=None) -> list[MeasureRecord]:
        """The latest record of each config under ``key``, fastest first (failures last);
        only the workload of parameter names ``params`` when given (a layer's direct and
        Winograd configurations are two workloads under one key)."""
        return self.latest_of(self._named(key, params), key.device, key.toolchain)

    def _named(self, key: HistoryKey, params=None) -> list[Workload]:
        """The workloads ``key.layer`` names (it may have two strings), of parameter names
        ``params`` only when given."""
        return [w for w in self.db.workloads() if layer_key_workload(key.layer, w.params) == w
                and (params is None or set(w.params) == set(params))]

    def latest_of(self, workloads: Iterable[Workload], device: str,
                  toolchain: str) -> list[MeasureRecord]:
        """The latest record of each config measured of any of ``workloads`` on ``device``
        with ``toolchain``, fastest first (failures last).

        >>> h, key = History(":memory:"), HistoryKey("L", "v100", "model v1")
        >>> h.add(key, [MeasureRecord.ok({"x": 1}, time_ms=t) for t in (2.0, 3.0)])
        2
        >>> [r.time_ms for r in h.latest_of(h.db.workloads(), "v100", "model v1")]  # not the best
        [3.0]
        """
        latest: dict[str, tuple[float, int, MeasureRecord]] = {}
        order = 0
        for w in workloads:
            ms = self.db.measurements(w, device=device, toolchain=toolchain,
                                      order="stored")  # equal timestamps: the one stored last
            for m in ms:
                c = canon_key(m.record.config)
                stamp = (m.record.timestamp, order)
                order += 1
                if c not in latest or stamp > latest[c][:2]:
                    latest[c] = (*stamp, m.record)
        recs = [v[2] for v in latest.values()]
        return sorted(recs, key=lambda r: (r.time_ms is None, r.time_ms or 0.0))

    def records(self, key: HistoryKey) -> list[MeasureRecord]:
        """Every stored configuration under ``key`` (its latest record), fastest first."""
        return self._latest(key)

    def best(self, key: HistoryKey, params=None) -> MeasureRecord | None:
        """The fastest ok measurement under ``key`` (None when there is none), of the
        workload of parameter names ``params`` only, when given: a configuration measured
        again keeps its fastest time, as ``iobound history best`` ranks it (a later
        failure does not undo an earlier timing; :meth:`records` shows the latest)."""
        fastest = [m for w in self._named(key, params) for m in self.db.measurements(
            w, device=key.device, toolchain=key.toolchain, counted_only=True, limit=1)
            if m.time_ms is not None]
        return min(fastest, key=lambda m: m.time_ms).record if fastest else None

    def keys(self) -> list[HistoryKey]:
        """Every key with stored measurements."""
        rows = self.db.connection.execute(
            "SELECT DISTINCT w.template, w.problem, w.tune_params, d.name, m.toolchain "
            "FROM measurements m JOIN workloads w ON m.workload = w.id "
            "JOIN devices d ON m.device = d.id")
        keys = {HistoryKey(workload_layer_key(workload_from_row(t, p, tp)), dev, tool)
                for t, p, tp, dev, tool in rows}
        return sorted(keys, key=lambda k: (k.layer, k.device, k.toolchain))

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "History":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
