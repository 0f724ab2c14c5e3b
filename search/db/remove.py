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

from dataclasses import dataclass
from pathlib import PurePath

from iobound.devices import check_device_name
from iobound.errors import InvalidInputError

from ..option_checks import check_path, check_records, check_type, shown
from .device_names import device_as_stored
from .model import Workload, check_toolchain, workload_from_row
from .insertion import ID_HIGH_WATER, last_id_ever
from .store import TuningDB

__all__ = ["Selection", "RemovalGroup", "plan", "remove", "empty_workloads"]


@dataclass(frozen=True)
class Selection:
    """What to remove: the measurements matching every field given (``None`` = any;
    ``workloads``: any of them).

    ``source`` is compared with the stored file name, so a path to the imported file
    selects it too; one that names no file (``""``, ``/``, ``..``) is refused.

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
            given = check_path("source", self.source)
            if not PurePath(given).name.strip() or PurePath(given).name == "..":
                # "" would select what TuningDB.add stored without a source, "/" no file
                raise InvalidInputError(f"source must name a file (what it was imported "
                                        f"from, or 'tune'), got {shown(self.source)}")
            object.__setattr__(self, "source", file_name(given))
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

    def where(self, device_names: tuple[str, ...] = ()) -> tuple[str, list]:
        """The SQL condition on ``measurements m`` (joined as :func:`plan` does) and its
        arguments; the device, when the selection names one, is any of ``device_names``
        (the names a database holds of it)."""
        clauses, args = [], []
        if self.workloads is not None:
            # a row-value IN over a VALUES list: an OR per workload nested past SQLite's
            # expression depth (1,000) for ~1,000 workloads
            rows = ", ".join(["(?, ?, ?)"] * len(self.workloads))
            clauses.append(f"(w.template, w.problem, w.params) IN (VALUES {rows})")
            for w in self.workloads:
                args.extend(w.key())
        if self.device is not None:
            clauses.append(f"d.name IN ({', '.join('?' * len(device_names))})")
            args.extend(device_names)
        for column, value in (("m.toolchain", self.toolchain), ("m.source", self.source)):
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
    toolchain and source; nothing changes. The selection's device is every name the
    database holds of it (:func:`~.device_names.device_as_stored`: ``v100`` is
    ``V100-SXM2`` and a cache's ``Tesla V100-SXM2-16GB``).

    >>> from search.measure.base import MeasureRecord
    >>> from .model import Measurement
    >>> db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
    >>> _ = db.add([Measurement(w, d, "t", MeasureRecord.ok({"x": 1}, time_ms=1.0))
    ...             for d in ("V100-SXM2", "Tesla V100-SXM2-16GB", "a100")])
    >>> [(g.device, g.measurements) for g in plan(db, Selection(device="v100"))], db.count()
    ([('Tesla V100-SXM2-16GB', 1), ('V100-SXM2', 1)], 3)
    """
    where, args = _where(db, selection)
    return _groups(db.connection, where, args)


def _where(db: TuningDB, selection: Selection) -> tuple[str, list]:
    """The condition of ``selection`` (checked) on ``db``'s rows, its device under every
    name ``db`` holds of it."""
    check_type("db", db, TuningDB)
    check_type("selection", selection, Selection)
    names = () if selection.device is None else device_as_stored(db.connection, selection.device)
    return selection.where(names)


def remove(db: TuningDB, selection: Selection) -> list[RemovalGroup]:
    """Delete the measurements ``selection`` names, and the workloads and devices this
    leaves without any (one that held none before stays, unless it is a workload the
    selection names: :meth:`TuningDB.add` stores one with value lists alone), in one
    transaction; returns what went, as :func:`plan` gives it (read in the same
    transaction, so a process writing the database meanwhile cannot make the two
    differ).

    >>> from search.measure.base import MeasureRecord
    >>> from .model import Measurement
    >>> db, k, j = TuningDB(":memory:"), Workload("k", [8], ("x",)), Workload("j", [8], ("x",))
    >>> _ = db.add([Measurement(w, d, "t", MeasureRecord.ok({"x": 1}, time_ms=1.0))
    ...             for w, d in ((k, "v100"), (j, "a100"))])
    >>> [(g.workload.label(), g.device) for g in remove(db, Selection(workloads=[k]))]
    [('k [8]', 'v100')]
    >>> [w.label() for w in db.workloads()], sorted(db.devices())  # k and v100 went too
    (['j [8]'], ['a100'])
    """
    where, args = _where(db, selection)

    def delete(c) -> list[RemovalGroup]:
        groups = _groups(c, where, args)
        # the ids removed are never given again (insertion.last_id_ever)
        c.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                  (ID_HIGH_WATER, str(last_id_ever(c))))
        touched = c.execute(f"SELECT DISTINCT m.workload, m.device {_JOINED} WHERE {where}",
                            args).fetchall()
        c.execute(f"DELETE FROM measurements WHERE id IN (SELECT m.id {_JOINED} "
                  f"WHERE {where})", args)
        named = _empty_workload_ids(c, selection)
        for table, column, ids in (("workloads", "workload", {w for w, _ in touched} | named),
                                   ("devices", "device", {d for _, d in touched})):
            c.executemany(f"DELETE FROM {table} WHERE id=? AND NOT EXISTS "
                          f"(SELECT 1 FROM measurements WHERE {column}=?)",
                          [(i, i) for i in ids])
        return groups

    return db.write(delete)


def empty_workloads(db: TuningDB, selection: Selection) -> list[Workload]:
    """The workloads ``selection`` names that hold no measurement (stored with value lists
    alone, :meth:`TuningDB.add`): :func:`remove` deletes them though no measurement goes,
    so a caller can say so. Sorted as :func:`plan`'s groups are.

    >>> from search.db.store import TuningDB
    >>> db, idle = TuningDB(":memory:"), Workload("idle", [8], ("x",))
    >>> _ = db.add([], {idle: {"x": [1, 2]}})
    >>> [w.template for w in empty_workloads(db, Selection(workloads=[idle]))]
    ['idle']
    """
    check_type("db", db, TuningDB)
    check_type("selection", selection, Selection)
    ids = _empty_workload_ids(db.connection, selection)
    return sorted((w for w in selection.workloads or () if _workload_id(db.connection, w) in ids),
                  key=lambda w: w.key())


def _workload_id(conn, w: Workload) -> int | None:
    row = conn.execute("SELECT id FROM workloads WHERE template=? AND problem=? AND params=?",
                       w.key()).fetchone()
    return None if row is None else row[0]


def _empty_workload_ids(conn, selection: Selection) -> set[int]:
    """The ids of the workloads ``selection`` names that hold no measurement."""
    ids = {_workload_id(conn, w) for w in selection.workloads or ()} - {None}
    return {i for i in ids
            if conn.execute("SELECT 1 FROM measurements WHERE workload=? LIMIT 1", (i,))
            .fetchone() is None}


def _groups(conn, where: str, args: list) -> list[RemovalGroup]:
    rows = conn.execute(
        f"SELECT w.template, w.problem, w.tune_params, d.name, m.toolchain, m.source, COUNT(*) "
        f"{_JOINED} WHERE {where} GROUP BY w.id, d.id, m.toolchain, m.source "
        f"ORDER BY w.template, w.problem, w.params, d.name, m.toolchain, m.source", args)
    return [RemovalGroup(workload_from_row(t, p, tp), dev, tool, src, int(n))
            for t, p, tp, dev, tool, src, n in rows]
