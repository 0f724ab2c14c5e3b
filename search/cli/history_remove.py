"""``iobound history remove``: take measurements out of the tuning database.

Examples
--------
>>> import os, tempfile
>>> from search.cli.main import main
>>> from search.db import Measurement, TuningDB, Workload
>>> from search.measure.base import MeasureRecord
>>> db = os.path.join(tempfile.mkdtemp(), "tuning.db")
>>> with TuningDB(db) as t:
...     _ = t.add([Measurement(Workload("k", [8], ("x",)), "v100", "nvcc",
...                            MeasureRecord.ok({"x": x}, time_ms=1.0), source="old.json")
...                for x in (1, 2)])
>>> main(["history", "remove", "--db", db, "--source", "old.json"])  # doctest: +NORMALIZE_WHITESPACE, +ELLIPSIS
removed 2 measurements:
workload  device  toolchain  source    measurements
k [8]     v100    nvcc       old.json             2
...tuning.db: 0 measurements left
0
"""

from __future__ import annotations

import argparse
import json

from iobound.errors import InvalidInputError
from iobound.wording import counted
from search.cli.common import aligned_table
from search.cli.history_cmd import _check_device, _chosen_workloads, _labels, _one_workload

__all__ = ["remove_measurements"]


def _selection(args: argparse.Namespace, db):
    """The :class:`~search.db.remove.Selection` of the options; a device or source the
    database does not hold is bad input (most likely a typo), named with what it holds."""
    from search.db.remove import Selection
    # --workload must name one workload (a typo's substring could name many); --layer
    # names the layer's (its direct and Winograd ones)
    if args.workload:
        workloads = (_one_workload(args, db),)
    else:
        chosen = _chosen_workloads(args, db)
        workloads = None if chosen is None else tuple(chosen)
    if args.device is not None:
        _check_device(args, db)
    selection = Selection(workloads=workloads, device=args.device, toolchain=args.toolchain,
                          source=args.source)
    for column, value in (("source", selection.source), ("toolchain", args.toolchain)):
        if value is None:
            continue
        known = [r[0] for r in db.connection.execute(
            f"SELECT DISTINCT {column} FROM measurements ORDER BY {column}")]
        if value not in known:
            raise InvalidInputError(f"no measurement in {args.db} has {column} {value!r}; "
                                    f"it holds: " + (", ".join(map(repr, known))[:200] or "none"))
    return selection


def remove_measurements(args: argparse.Namespace, db) -> int:
    """Print (and, without ``--dry-run``, delete) what the options select; exit 1 when
    they select nothing.

    >>> import os, tempfile
    >>> from search.cli.main import build_parser
    >>> from search.db import Measurement, TuningDB, Workload
    >>> from search.measure.base import MeasureRecord
    >>> db = TuningDB(os.path.join(tempfile.mkdtemp(), "tuning.db"))
    >>> _ = db.add([Measurement(Workload("k", [8], ("x",)), "v100", "nvcc",
    ...                         MeasureRecord.ok({"x": 1}, time_ms=1.0), source="a.json")])
    >>> args = build_parser().parse_args(["history", "remove", "--db", "t.db", "--device", "v100",
    ...                                   "--dry-run"])
    >>> remove_measurements(args, db), db.count()
    would remove 1 measurement:
    workload  device  toolchain  source  measurements
    k [8]     v100    nvcc       a.json             1
    t.db: unchanged (1 measurement; without --dry-run 0 left)
    (0, 1)
    >>> db.close()
    """
    from search.db.remove import empty_workloads, plan, remove
    selection = _selection(args, db)
    labels = _labels(db)  # before removing: a workload that goes keeps its label
    # a named workload holding no measurement (stored with value lists alone) goes too
    empty = [labels.get(w, w.label()) for w in empty_workloads(db, selection)]
    groups = plan(db, selection) if args.dry_run else remove(db, selection)
    n, left = sum(g.measurements for g in groups), db.count()
    rows = [(labels.get(g.workload, g.workload.label()), g.device, g.toolchain, g.source,
             g.measurements) for g in groups]
    if args.json:
        keys = ("workload", "device", "toolchain", "source", "measurements")
        # with --dry-run, what removing would take and leave (the file is unchanged)
        print(json.dumps({"db": args.db, "dry_run": args.dry_run, "removed": n,
                          "left": left - n if args.dry_run else left,
                          "groups": [dict(zip(keys, r)) for r in rows],
                          "empty_workloads": empty}))
        return 0 if groups or empty else 1
    if empty:
        print(f"{'would remove' if args.dry_run else 'removed'} "
              f"{counted(len(empty), 'workload')} holding no measurement: "
              f"{', '.join(empty)}")
    if not groups:
        if not empty:
            print("no measurement matches all of the options; nothing removed")
        return 0 if empty else 1
    print(f"{'would remove' if args.dry_run else 'removed'} {counted(n, 'measurement')}:")
    print(aligned_table([("workload", "device", "toolchain", "source", "measurements")]
                        + [(*r[:3], r[3] or "-", str(r[4])) for r in rows], text_columns=4))
    held = counted(left, "measurement")
    print(f"{args.db}: {held} left" if not args.dry_run else
          f"{args.db}: unchanged ({held}; without --dry-run {left - n} left)")
    return 0
