"""Taking measurements out of the tuning database: a file imported under the wrong
device, an old toolchain's timings, a workload no longer wanted.

A :class:`Selection` names what goes by workload, device, toolchain and source (the
file name a measurement was imported from, or ``tune`` for what ``iobound tune``
stored); it must name at least one of them, since emptying a database is deleting its
file. :func:`plan` says what a selection holds, grouped, without changing anything;
:func:`remove` deletes it in one transaction, with the workloads and devices left
without any measurement by it. Measurements are identified by digest, so importing a
removed file again brings its measurements back.

Examples
--------
>>> from search.measure.base import MeasureRecord
>>> from .store import TuningDB
>>> from .model import Measurement, Workload
>>> db = TuningDB(":memory:")
>>> w = Workload("k", [8], ("x",))
>>> _ = db.add([Measurement(w, d, "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + x), source=s)
...             for d, s in (("v100", "a.json"), ("a100", "b.json")) for x in (1, 2)])
>>> [(g.device, g.source, g.measurements) for g in plan(db, Selection(device="a100"))]
[('a100', 'b.json', 2)]
>>> [g.measurements for g in remove(db, Selection(source="b.json"))], db.count(), sorted(db.devices())
([2], 2, ['v100'])
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import PurePath

from iobound.devices import check_device_name
from iobound.errors import InvalidInputError

from ..option_checks import check_path, check_records, check_type
from .device_names import device_as_stored
from .model import Workload, check_toolchain, workload_from_row
from .insertion import ID_HIGH_WATER, last_id_ever
from .store import TuningDB

__all__ = ["Selection", "RemovalGroup", "plan", "remove"]


@dataclass(frozen=True)
class Selection:
    """What to remove: the measurements matching every field given (``None`` = any;
    ``workloads``: any of them).

    ``source`` is compared with the stored file name, so a path to the imported file
    selects it too.

    >>> Selection(source="runs/old.json.gz").source
    'old.json.gz'
    >>> Selection()
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: name what to remove (a workload, device, toolchain or \
source); to remove everything, delete the database file
    """

    workloads: tuple[Workload, ...] | None = None
    device: str | None = None
    toolchain: str | None = None
    source: str | None = None

    def __post_init__(self) -> None:
        if self.source is not None:
            from ..file_names import file_name  # as the import stored it
            check_path("source", self.source)
            object.__setattr__(self, "source", (file_name(self.source) if PurePath(self.source).name
                                                else os.fspath(self.source)))
        if self.workloads is not None:
            object.__setattr__(self, "workloads", check_records("workloads", self.workloads,
                                                                Workload))
            if not self.workloads:
                raise InvalidInputError("an empty list of workloads selects nothing to remove")
        if self.device is not None:
            check_device_name(self.device)
        if self.toolchain is not None:
            check_toolchain(self.toolchain)
        if all(v is None for v in (self.workloads, self.device, self.toolchain, self.source)):
            raise InvalidInputError("name what to remove (a workload, device, toolchain or "
                                    "source); to remove everything, delete the database file")

    def where(self) -> tuple[str, list]:
        """The SQL condition on ``measurements m`` (joined as :func:`plan` does) and its
        arguments."""
        clauses, args = [], []
        if self.workloads is not None:
            one = "(w.template=? AND w.problem=? AND w.params=?)"
            clauses.append("(" + " OR ".join([one] * len(self.workloads)) + ")")
            for w in self.workloads:
                args.extend(w.key())
        for column, value in (("d.name", self.device), ("m.toolchain", self.toolchain),
                              ("m.source", self.source)):
            if value is not None:
                clauses.append(f"{column}=?")
                args.append(value)
        return " AND ".join(clauses), args


@dataclass(frozen=True)
class RemovalGroup:
    """Measurements a selection holds of one workload, device, toolchain and source."""

    workload: Workload
    device: str
    toolchain: str
    source: str
    measurements: int


_JOINED = ("FROM measurements m JOIN workloads w ON m.workload = w.id "
           "JOIN devices d ON m.device = d.id")


def plan(db: TuningDB, selection: Selection) -> list[RemovalGroup]:
    """What :func:`remove` would take out, grouped, ordered by workload, device,
    toolchain and source; nothing changes. The selection's device is the name the
    database holds (:func:`~.device_names.device_as_stored`: ``v100`` is ``V100-SXM2``
    where the database holds that)."""
    selection = _as_stored(db, selection)
    return _groups(db.connection, selection)


def _as_stored(db: TuningDB, selection: Selection) -> Selection:
    """``selection`` (checked) with its device as ``db`` stores it."""
    check_type("db", db, TuningDB)
    check_type("selection", selection, Selection)
    if selection.device is None:
        return selection
    return dataclasses.replace(selection, device=device_as_stored(db.connection, selection.device))


def remove(db: TuningDB, selection: Selection) -> list[RemovalGroup]:
    """Delete the measurements ``selection`` names, and the workloads and devices this
    leaves without any (one that held none before stays), in one transaction; returns
    what went, as :func:`plan` gives it (read in the same transaction, so a process
    writing the database meanwhile cannot make the two differ)."""
    selection = _as_stored(db, selection)
    where, args = selection.where()

    def delete(c) -> list[RemovalGroup]:
        groups = _groups(c, selection)
        # the ids removed are never given again (insertion.last_id_ever)
        c.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                  (ID_HIGH_WATER, str(last_id_ever(c))))
        touched = c.execute(f"SELECT DISTINCT m.workload, m.device {_JOINED} WHERE {where}",
                            args).fetchall()
        c.execute(f"DELETE FROM measurements WHERE id IN (SELECT m.id {_JOINED} "
                  f"WHERE {where})", args)
        for table, column, ids in (("workloads", "workload", {w for w, _ in touched}),
                                   ("devices", "device", {d for _, d in touched})):
            c.executemany(f"DELETE FROM {table} WHERE id=? AND NOT EXISTS "
                          f"(SELECT 1 FROM measurements WHERE {column}=?)",
                          [(i, i) for i in ids])
        return groups

    return db.write(delete)


def _groups(conn, selection: Selection) -> list[RemovalGroup]:
    where, args = selection.where()
    rows = conn.execute(
        f"SELECT w.template, w.problem, w.tune_params, d.name, m.toolchain, m.source, COUNT(*) "
        f"{_JOINED} WHERE {where} GROUP BY w.id, d.id, m.toolchain, m.source "
        f"ORDER BY w.template, w.problem, w.params, d.name, m.toolchain, m.source", args)
    return [RemovalGroup(workload_from_row(t, p, tp), dev, tool, src, int(n))
            for t, p, tp, dev, tool, src, n in rows]
