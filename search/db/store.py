"""The tuning database: add measurements (one transaction per call) and read them back.

Examples
--------
>>> from search.measure.base import MeasureRecord
>>> db = TuningDB(":memory:")
>>> w = Workload("k", [64], ("x",))
>>> ms = [Measurement(w, "v100", "t", MeasureRecord.ok({"x": x}, time_ms=float(x))) for x in (1, 2)]
>>> db.add(ms), db.add(ms)  # the second time adds nothing
(2, 0)
>>> [m.record.config for m in db.measurements(w, device="v100")]
[{'x': 1}, {'x': 2}]
>>> db.measurements(w, device="a100")
[]
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Callable, TypeVar

from iobound import limits
from iobound.errors import InvalidInputError
from kernels.status import Status

from ..measure.base import MeasureRecord
from ..option_checks import (check_callable, check_choice, check_flag, check_records,
                             check_type)
from .device_names import same_device
from .checks import MARK, check_mark, check_tune_params, param_names
from .insertion import insert, storable
from .model import COUNTED_SQL, Measurement, Workload, canon, stored_json, workload_from_row
from .damage import check_sound
from .schema import connect
from .transactions import write
from .stored_rows import damaged_row, stored_config, stored_features, time_fault

__all__ = ["TuningDB", "damaged_row", "time_fault"]

T = TypeVar("T")


def _shared_workload(seen: dict, template: str, problem: str, tune_params: str) -> Workload:
    """The workload of a row, one object per workload in ``seen`` (not one per row)."""
    w = seen.get((template, problem, tune_params))
    if w is None:
        w = seen[(template, problem, tune_params)] = workload_from_row(template, problem, tune_params)
    return w


def _in_order(config: dict, w: Workload) -> dict:
    """``config`` (stored canonically, keys sorted) in the order of ``w``'s parameters."""
    return {**{k: config[k] for k in w.params if k in config}, **config}


MEASUREMENT_ORDERS = {"fastest": " ORDER BY m.time_ms IS NULL, m.time_ms, m.id",
                      "stored": " ORDER BY m.id"}


class TuningDB:
    """The tuning database at ``path`` (created or migrated on open; see :mod:`.schema`).

    With ``readonly`` the file is never written (to read it: ``list``, ``best``,
    ``export``); :meth:`add` (and every other write: :meth:`write`) is then refused.

    >>> from search.db.model import Measurement, Workload
    >>> from search.measure.base import MeasureRecord
    >>> w = Workload("toy", [64], ("a",))
    >>> db = TuningDB(":memory:")  # a file path in practice
    >>> ms = [Measurement(w, "GPU X", "nvcc 13.0", MeasureRecord.ok({"a": a}, [1.0 + a]))
    ...       for a in (1, 2, 4)]
    >>> db.add(ms), db.add(ms)  # new measurements; the same again adds nothing
    (3, 0)
    >>> db.workloads() == [w], db.close()
    (True, None)
    """

    def __init__(self, path: str | os.PathLike, readonly: bool = False):
        self._conn: sqlite3.Connection | None = None
        self._conn = connect(path, readonly=readonly)
        self.path = os.fspath(path)
        self.readonly = readonly
        self._checked = self.path == ":memory:"  # whether check_sound ran (see write)

    # -- writing ------------------------------------------------------------------------
    def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn(connection)`` in one write transaction (:func:`~.transactions.write`): the one way
        anything is stored in or removed from the database. Refused
        (:class:`~iobound.errors.InvalidInputError`) when the database was opened
        ``readonly`` (a version-0 file opened so is migrated in memory only: a write would
        be lost when it is closed) or its file cannot be written (SQLite's "attempt to
        write a readonly database"), and (a :class:`~.db_file.DatabaseFileError`) when
        SQLite finds the file damaged: the first write of a connection to a file checks
        it whole first (``PRAGMA quick_check``, some 0.03 s for 50 MB: SQLite reads a
        page only when a statement needs it, so a write would go into a file with a
        damaged page elsewhere), and nothing is written then.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "t.db")
        >>> TuningDB(path).close()
        >>> TuningDB(path, readonly=True).write(lambda c: None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: the tuning database '...t.db' was opened read-only: nothing can be stored in it or removed from it
        """
        check_callable("fn", fn, "connection")
        if self.readonly:
            raise InvalidInputError(f"the tuning database {self.path!r} was opened read-only: "
                                    f"nothing can be stored in it or removed from it")
        def task(c: sqlite3.Connection) -> T:
            if not self._checked:  # the first write: the whole file sound, in its transaction
                check_sound(c, self.path)
            return fn(c)
        try:
            out = write(self._db, task)
            self._checked = True
            return out
        except sqlite3.OperationalError as exc:
            if not (getattr(exc, "sqlite_errorname", "").startswith("SQLITE_READONLY")
                    or "readonly database" in str(exc)):
                raise
            raise InvalidInputError(f"the tuning database {self.path!r} cannot be written "
                                    f"({' '.join(str(exc).split())}): check the file's and its "
                                    f"folder's permissions") from None

    @property
    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise InvalidInputError(f"the tuning database {self.path!r} is closed")
        return self._conn

    def add(self, measurements: Iterable[Measurement],
            tune_params: Mapping[Workload, Mapping[str, Sequence]] | None = None) -> int:
        """Store measurements in one transaction; returns how many were new.

        A measurement already stored (same :meth:`Measurement.digest`) is skipped.
        ``tune_params`` adds value lists to the workloads' known ones (numpy's values
        taken as a config's are: :func:`~.checks.check_tune_params`). Each measurement is
        first made :func:`storable` (refused when it cannot be: nothing is stored).
        """
        items = [storable(m) for m in check_records("measurements", measurements, Measurement)]
        values = {} if tune_params is None else check_tune_params(tune_params)
        return self.write(lambda c: insert(c, items, values))

    # -- reading ------------------------------------------------------------------------
    def workloads(self) -> list[Workload]:
        """Every stored workload, ordered by template and problem."""
        rows = self._db.execute("SELECT template, problem, tune_params FROM workloads "
                                "ORDER BY template, problem, params")
        return [workload_from_row(*r) for r in rows]

    def tune_params(self, w: Workload) -> dict:
        """The known value list of each of ``w``'s parameters (``{}`` if ``w`` is unknown).

        >>> db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
        >>> db.add([], {w: {"x": [1, 2, 4]}}), db.tune_params(w)  # values known, none measured
        (0, {'x': [1, 2, 4]})
        >>> db.tune_params(Workload("other", [8], ("x",)))
        {}
        """
        check_type("workload", w, Workload)
        row = self._db.execute("SELECT tune_params FROM workloads WHERE template=? AND problem=? "
                               "AND params=?", w.key()).fetchone()
        return stored_json(row[0], f"the tune_params of {w.label()}") if row else {}

    def devices(self) -> dict[str, dict]:
        """Device name -> properties, for every stored device.

        >>> db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
        >>> db.add([Measurement(w, d, "t", MeasureRecord.ok({"x": 1}, [2.0]))
        ...         for d in ("v100", "lab GPU")])
        2
        >>> {name: props.get("sm_count") for name, props in db.devices().items()}  # a preset's
        {'lab GPU': None, 'v100': 80}
        """
        return {n: stored_json(p, f"the properties of device {n!r}") for n, p in
                self._db.execute("SELECT name, properties FROM devices ORDER BY name")}

    def measurements(self, workload: Workload | None = None, *,
                     device: str | tuple[str, ...] | None = None, toolchain: str | None = None,
                     counted_only: bool = False, limit: int | None = None,
                     order: str = "fastest", fastest_per_config: bool = False
                     ) -> list[Measurement]:
        """Stored measurements, fastest first (untimed last, then in insertion order).

        Each filter left ``None`` matches everything (``device``: a stored name, or a
        tuple of them, any of which matches); ``counted_only`` keeps the ``ok`` ones with
        a positive, finite time; ``fastest_per_config`` (with ``counted_only``) keeps
        only the fastest of each configuration of a workload on a device (the names of a
        ``device`` tuple count as one device: the names a database holds of it); ``limit``
        keeps the first that many; ``order="stored"`` gives them in the order they were
        stored instead.

        >>> db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
        >>> _ = db.add([Measurement(w, "d", "t", MeasureRecord.ok({"x": x}, [1 / x]))
        ...             for x in (1, 2, 4)])
        >>> [m.record.config["x"] for m in db.measurements(w, limit=2)]  # the two fastest
        [4, 2]
        """
        devices = device if isinstance(device, tuple) else None if device is None else (device,)
        where, args = _filters(workload, devices, toolchain, counted_only)
        if check_flag("fastest_per_config", fastest_per_config) and not counted_only:
            raise InvalidInputError("fastest_per_config ranks timed measurements: give it "
                                    "with counted_only=True")
        check_choice("order", order, tuple(MEASUREMENT_ORDERS))
        if limit is not None:
            limit = limits.check_int("limit", limit, limits.ROWS)
        rows = ("FROM measurements m JOIN workloads w ON m.workload = w.id "
                "JOIN devices d ON m.device = d.id" + "".join(
                    f" {'WHERE' if i == 0 else 'AND'} {cond}" for i, cond in enumerate(where)))
        if limit is not None or fastest_per_config:  # else these could hide them
            self._refuse_text_times(rows, bool(where), args)
        if fastest_per_config:  # ties: the one stored first, as the fastest-first order has it
            by = "m.workload, m.config" + (f", {self._device_group()}" if devices is None else "")
            rows = (f"FROM (SELECT m.*, ROW_NUMBER() OVER (PARTITION BY {by} ORDER BY "
                    f"m.time_ms, m.id) AS nth {rows}) AS m JOIN workloads w "
                    "ON m.workload = w.id JOIN devices d ON m.device = d.id WHERE m.nth = 1")
        sql = ("SELECT w.template, w.problem, w.tune_params, d.name, m.toolchain, m.record, m.run, "
               f"m.source, m.features, m.id, m.config, m.time_ms {rows}{MEASUREMENT_ORDERS[order]}")
        if limit is not None:
            sql += f" LIMIT {limit}"
        workloads: dict[tuple, Workload] = {}  # one object per workload, not per row
        return [self._row(r, workloads) for r in self._db.execute(sql, args)]

    def _device_group(self) -> str:
        """An SQL expression of ``m.device``: the id of the first stored name of its device
        (:func:`~.device_names.same_device`), so that one GPU stored under two names
        counts once."""
        names = self._db.execute("SELECT id, name FROM devices ORDER BY id").fetchall()
        first = {i: next(j for j, other in names if same_device(name, other))
                 for i, name in names}
        if all(i == g for i, g in first.items()):
            return "m.device"
        cases = " ".join(f"WHEN {int(i)} THEN {int(g)}" for i, g in first.items() if i != g)
        return f"CASE m.device {cases} ELSE m.device END"

    def timings(self, params: Iterable[str], up_to: int | None = None) -> list[Measurement]:
        """The timed ``ok`` measurements of every workload whose parameter names are
        ``params`` (in any order), fastest first: as :meth:`measurements` gives them
        workload by workload with ``counted_only``, merged by time (ties in workload
        order), but read from the table's columns: each record has its config, status,
        time, estimate flag and timestamp, not its ``costs``, ``error`` or ``extra``
        (what tuning history needs; several times faster to read on large databases).
        ``up_to``: only those stored by then (:meth:`last_id` at the time).

        >>> from search.measure.base import MeasureRecord
        >>> db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
        >>> _ = db.add([Measurement(w, "d", "t", MeasureRecord.ok({"x": 1}, [2.0, 2.2]))])
        >>> [(m.record.config, m.time_ms, m.record.costs) for m in db.timings(["x"])]
        [({'x': 1}, 2.1, ())]
        """
        names = param_names(params)
        rows = self._db.execute(
            "SELECT w.template, w.problem, w.tune_params, d.name, m.toolchain, m.config, "
            "m.time_ms, m.estimate, m.timestamp, m.run, m.source, m.features, m.id "
            "FROM measurements m JOIN workloads w ON m.workload = w.id "
            "JOIN devices d ON m.device = d.id "
            f"WHERE w.params=? AND {COUNTED_SQL} AND m.id <= ? "
            "ORDER BY m.time_ms, w.template, w.problem, w.params, m.id",
            (canon(names), MARK.high if up_to is None else check_mark(up_to)))
        workloads: dict[tuple, Workload] = {}
        out = []
        for t, p, ps, dev, tool, cfg, time_ms, est, stamp, run, src, feats, rid in rows:
            w = _shared_workload(workloads, t, p, ps)
            config = stored_config(self.path, rid, cfg, time_ms, w, dev)
            try:
                record = MeasureRecord(_in_order(config, w), Status.OK, time_ms=time_ms,
                                       estimate=bool(est), timestamp=stamp)
            except (TypeError, ValueError) as exc:  # e.g. a timestamp written by hand
                raise damaged_row(self.path, rid, f"{type(exc).__name__}: {exc}", w, dev) from None
            out.append(Measurement(w, dev, tool, record, run=run, source=src,
                                   features=stored_features(self.path, rid, feats, w, dev)))
        return out

    def _refuse_text_times(self, rows: str, filtered: bool, args: list) -> None:
        """A damaged row among ``rows``: a time stored as text (the column's CHECK lets it
        through) sorts after every number, where a limited read never reaches it."""
        bad = self._db.execute(
            f"SELECT w.template, w.problem, w.tune_params, d.name, m.id, m.time_ms {rows} "
            f"{'AND' if filtered else 'WHERE'} typeof(m.time_ms) NOT IN ('integer', 'real', 'null') "
            "LIMIT 1", args).fetchone()
        if bad is not None:
            t, p, ps, dev, rid, time_ms = bad
            raise damaged_row(self.path, rid, time_fault(time_ms), _shared_workload({}, t, p, ps),
                              dev)

    def _row(self, r, workloads: dict) -> Measurement:
        t, p, ps, dev, tool, rec, run, src, feats, rid, cfg, time_ms = r
        w = _shared_workload(workloads, t, p, ps)
        stored_config(self.path, rid, cfg, time_ms, w, dev)
        try:
            d = json.loads(rec)
            if not isinstance(d, dict) or not isinstance(d.get("config"), dict):
                raise TypeError("its record is not a JSON object with a config object")
            d["config"] = _in_order(d["config"], w)
            record = MeasureRecord.from_dict(d)
        except (KeyError, TypeError, ValueError, RecursionError) as exc:  # by hand, or damaged
            raise damaged_row(self.path, rid, f"{type(exc).__name__}: {exc}", w, dev) from None
        return Measurement(w, dev, tool, record, run=run, source=src,
                           features=stored_features(self.path, rid, feats, w, dev))

    def last_id(self) -> int:
        """The id of the last measurement stored (0 for none): a mark of what the database
        held at a moment, for :meth:`timings`' ``up_to``.

        >>> TuningDB(":memory:").last_id()
        0
        """
        return int(self._db.execute("SELECT COALESCE(MAX(id), 0) FROM measurements")
                   .fetchone()[0])

    def count(self) -> int:
        """How many measurements are stored.

        >>> db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
        >>> ms = [Measurement(w, "d", "t", MeasureRecord.ok({"x": x}, [1.0])) for x in (1, 2)]
        >>> db.add(ms + ms), db.count()  # a measurement given twice is stored once
        (2, 2)
        """
        return int(self._db.execute("SELECT COUNT(*) FROM measurements").fetchone()[0])

    @property
    def connection(self) -> sqlite3.Connection:
        """The open connection (for the query helpers of :mod:`search.db.queries`)."""
        return self._db

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> "TuningDB":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _filters(workload: Workload | None, devices: tuple[str, ...] | None, toolchain: str | None,
             counted_only: bool) -> tuple[list[str], list]:
    """The conditions of :meth:`TuningDB.measurements`' filters (checked) on ``m``, ``w``
    and ``d``, and their arguments."""
    where, args = [], []
    if workload is not None:
        check_type("workload", workload, Workload)
        where.append("w.template=? AND w.problem=? AND w.params=?")
        args.extend(workload.key())
    if devices is not None:
        for value in devices:
            check_type("device", value, str)
        where.append(f"d.name IN ({', '.join('?' * len(devices))})")
        args.extend(devices)
    if toolchain is not None:
        check_type("toolchain", toolchain, str)
        where.append("m.toolchain=?")
        args.append(toolchain)
    if check_flag("counted_only", counted_only):
        where.append(COUNTED_SQL)
    return where, args
