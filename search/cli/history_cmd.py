"""``iobound history``: the tuning database (import, list, best, export, remove).

Examples
--------
>>> import os, tempfile
>>> from search.cli.main import main
>>> from search.kt_cache import KtCache
>>> from search.kt_cache_write import write_cache
>>> tmp = tempfile.mkdtemp()
>>> cache = write_cache(os.path.join(tmp, "k.json"), KtCache(tune_params={"x": [1, 2]},
...     entries=[{"x": 1, "time": 2.0}, {"x": 2, "time": 1.5}], device_name="v100",
...     kernel_name="k"))
>>> db = os.path.join(tmp, "tuning.db")
>>> main(["history", "import", str(cache), "--db", db, "--json"])  # doctest: +ELLIPSIS
{"db": ..., "files": [{..., "device": "v100", "workload": "k", "read": 2, "added": 2, "skipped": 0}], "total": 2, "passed_over": []}
0
>>> main(["history", "list", "--db", db])
workload  device  measurements  timed  best ms
k         v100               2      2      1.5
0
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
from pathlib import Path

from iobound.errors import InvalidInputError
from iobound.wording import counted
from search.cli.common import (ESTIMATE_LEGEND, add_json_argument, ascii_int, aligned_table,
                               format_rows, ms_text, nonempty, print_notice)

HELP = "the tuning database: import measurements, list, best configurations, export, remove"
DESCRIPTION = (
    "A tuning database (SQLite, schema versioned) holds every measurement with its workload "
    "(kernel template or recorded kernel, problem, parameter names), device, toolchain, "
    "config, time and status. 'import' reads Kernel Tuner cache files (.json, .json.gz; T4 "
    "results files too), iobound tuning logs (tune --log) and other iobound tuning databases "
    "(a merge: every record keeps its device); importing a file twice (to one device) adds "
    "nothing, and a file that cannot be read leaves the database unchanged. 'list' shows "
    "workloads x devices, 'best' the fastest configurations, 'export' writes one workload on "
    "one device as a Kernel Tuner cache file; these three open the database read-only. "
    "'remove' takes out the measurements "
    "of a workload, device, toolchain or source file (--dry-run shows them first). A SQLite "
    "file that is not an iobound tuning database is refused."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``iobound history``'s options to ``parser`` (:func:`search.cli.main.build_parser`).

    Run by the README's `iobound history` examples (tests/test_readme_examples.py).
    """
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = sub.add_parser("import", help="import Kernel Tuner cache files, tuning logs and "
                                      "other tuning databases")
    p.add_argument("files", nargs="+", metavar="FILE", type=nonempty("path"),
                   help="cache files (.json, .json.gz), T4 results files, logs or tuning "
                        "databases; a folder stands for its files of these kinds (T4 "
                        "metadata and T1 description files in it are passed over)")
    p.add_argument("--device", metavar="NAME", type=nonempty("device name"),
                   help="device of files that name none (default: the file's name); a file "
                        "that names another device is refused")
    _db_and_json(p)
    p = sub.add_parser("list", help="workloads x devices with counts and the best time")
    _select(p)
    _db_and_json(p, rows=True)
    p = sub.add_parser("best", help="the fastest configurations (each once, at its fastest "
                                    "measurement)")
    _select(p)
    p.add_argument("-k", type=ascii_int, default=5, help="how many (default 5)")
    _db_and_json(p, rows=True)
    p = sub.add_parser("export", help="one workload on one device as a Kernel Tuner cache file")
    _select(p)
    p.add_argument("--toolchain", help="only measurements of this toolchain")
    p.add_argument("file", metavar="FILE", type=nonempty("path"),
                   help="the cache file to write (gzipped when it ends in .gz, else "
                        "plain JSON)")
    _db_and_json(p)
    p = sub.add_parser("remove", help="take measurements out: by workload, device, toolchain "
                                      "or source file")
    _select(p)
    p.add_argument("--toolchain", help="only measurements of this toolchain")
    p.add_argument("--source", metavar="FILE",
                   help="only measurements imported from this file (its name; 'tune' for "
                        "what iobound tune stored)")
    p.add_argument("--dry-run", action="store_true",
                   help="show what would go; change nothing")
    _db_and_json(p)


def _db_and_json(p: argparse.ArgumentParser, rows: bool = False) -> None:
    p.add_argument("--db", required=True, metavar="DB", help="the tuning database (SQLite file)")
    add_json_argument(p, "one JSON list of rows" if rows else "one JSON object")


def _select(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workload", metavar="TEXT", type=nonempty("workload text"),
                   help="the workload whose label ('template problem', and '(parameters)' where "
                        "two share that) contains TEXT; a whole label selects only its own")
    p.add_argument("--layer", metavar="SPEC", type=nonempty("layer name"),
                   help="the workloads of this layer of our conv template (a preset or "
                        "key=value spec, as tune --layer takes; any stored layer of its shape)")
    p.add_argument("--device", metavar="NAME", type=nonempty("device name"),
                   help="the device, under every name the database holds of it (a cache's "
                        "'NVIDIA RTX A4000' and the preset's 'RTX-A4000' are one)")


def _open(args, readonly: bool, must_exist: bool | None = None):
    from search.db.opening import open_database
    return open_database(args.db, "--db", readonly=readonly, must_exist=must_exist)


def run(args: argparse.Namespace) -> int:
    """Run ``iobound history`` with the parsed ``args``; the exit code (bad input raises,
    and :func:`search.cli.main.main` makes it one line and exit 2).

    Run by the README's `iobound history` examples (tests/test_readme_examples.py).
    """
    try:
        if args.action == "import":
            return _import(args)
        if args.action == "remove":
            from search.cli.history_remove import remove_measurements
            with _open(args, readonly=args.dry_run, must_exist=True) as db:
                return remove_measurements(args, db)
        with _open(args, readonly=True) as db:  # reading never changes the file
            return {"list": _list, "best": _best, "export": _export}[args.action](args, db)
    except sqlite3.Error as exc:  # damage found while reading (SQLite: "malformed")
        raise InvalidInputError(f"--db {args.db}: {' '.join(str(exc).split())}") from None


def _labels(db) -> dict:
    from search.db.queries import workload_labels
    return workload_labels(db.workloads())


def _import(args) -> int:
    from search.db.importer import check_not_itself, read_paths, store_files
    check_not_itself(args.files, args.db)
    files, passed = read_paths(args.files, args.device, args.db)  # all read before the DB
    # One transaction: a failed or interrupted import stores nothing. A database file it
    # created stays (empty): another process may have opened it meanwhile, and deleting
    # it would lose what that process stores.
    with _open(args, readonly=False) as db:
        store_files(db, files)
        labels, total = _labels(db), db.count()
    out = [{"file": f.path, "kind": f.kind, "device": f.device,
            "workload": labels.get(f.workload, f.workload.label()),
            "read": f.read, "added": f.added, "skipped": f.skipped} for f in files]
    if args.json:
        print(json.dumps({"db": args.db, "files": out, "total": total,
                          "passed_over": [{"file": p, "why": why} for p, why in passed]}))
        return 0
    for p, why in passed:
        print_notice(f"{p}: {why}; passed over")
    for f in out:
        skipped = f", {f['skipped']} skipped (no positive finite time)" if f["skipped"] else ""
        print(f"{f['file']}: {f['added']} new of {counted(f['read'], 'measurement')} "
              f"({f['kind']}, device {f['device']}, {f['workload']}{skipped})")
    print(f"{args.db}: {counted(total, 'measurement')}")
    return 0


def _list(args, db) -> int:
    from search.db.queries import summary
    rows, labels = summary(db), _labels(db)
    chosen = _chosen_workloads(args, db)
    if chosen is not None:
        rows = [r for r in rows if r.workload in chosen]
    if args.device:
        names = _check_device(args, db)
        rows = [r for r in rows if r.device in names]
    nothing_selected = not rows and bool(chosen is not None or args.device)
    if args.json:
        print(json.dumps([{"workload": labels[r.workload], "template": r.workload.template,
                           "problem": r.workload.problem, "params": list(r.workload.params),
                           "device": r.device, "measurements": r.measurements, "timed": r.timed,
                           "best_ms": r.best_ms, "best_estimate": r.best_estimate}
                          for r in rows]))
        return 1 if nothing_selected else 0
    if nothing_selected:
        print("no measurement of the workload on the device")
        return 1
    if not rows:
        print(f"{args.db}: empty")
        return 0
    table = [("workload", "device", "measurements", "timed", "best ms")]
    table += [(labels[r.workload], r.device, str(r.measurements), str(r.timed),
               ms_text(r.best_ms, r.best_estimate) if r.best_ms is not None
               else "-") for r in rows]
    print(aligned_table(table, text_columns=2))
    if any(r.best_estimate for r in rows):
        print(ESTIMATE_LEGEND)
    return 0


def _check_device(args, db) -> tuple[str, ...]:
    """The names the database holds of ``args.device``'s device
    (:func:`~search.db.device_names.held_names`: ``v100`` is ``V100-SXM2`` and a cache's
    ``Tesla V100-SXM2-16GB``); a device it does not hold is bad input, named with those it
    does."""
    from search.db.device_names import held_names
    devices = db.devices()
    names = held_names(args.device, devices)
    if not names:
        raise InvalidInputError(f"no device {args.device!r} in {args.db}; it holds: "
                                + (", ".join(devices) or "none"))
    return names


def _export_device(args, db) -> str:
    """The one stored name ``export --device`` writes: the name given when the database
    holds it, else the one name it holds of that device (a cache file names one device
    name, so several are bad input naming them)."""
    names = _check_device(args, db)
    if args.device in names:
        return args.device
    if len(names) > 1:
        raise InvalidInputError(f"--device {args.device!r} is held under {len(names)} names in "
                                f"{args.db}: {', '.join(names)}; give the one to export")
    return names[0]


def _chosen_workloads(args, db) -> list | None:
    """The workloads ``--workload`` and ``--layer`` select (both, when both are given),
    None when neither is; selecting none is bad input naming the options."""
    from search.db.queries import layer_workloads, select_workloads
    if not args.workload and not args.layer:
        return None
    ws = select_workloads(db, args.workload) if args.workload else db.workloads()
    if args.layer:
        from iobound.layer_spec import parse_layer_spec
        of_layer = set(layer_workloads(db, parse_layer_spec(args.layer)))
        ws = [w for w in ws if w in of_layer]
    if not ws:
        raise InvalidInputError(f"no workload matching {_what(args)}")
    return ws


def _what(args) -> str:
    return " and ".join(f"{opt} {v!r}" for opt, v in (("--workload", args.workload),
                                                      ("--layer", args.layer)) if v)


def _one_workload(args, db, device: str | None = None):
    """The one workload the options select (any, when the database holds one only), of
    those ``device`` holds when given."""
    chosen = _chosen_workloads(args, db)
    ws = db.workloads() if chosen is None else chosen
    if device is not None:
        from search.db.queries import summary
        held = {r.workload for r in summary(db) if r.device == device}
        ws = [w for w in ws if w in held]
    if len(ws) == 1:
        return ws[0]
    what = f"matching {_what(args)}" if chosen is not None else "in the database"
    what += f" on {device}" if device is not None else ""
    if not ws:
        raise InvalidInputError(f"no workload {what}")
    labels = _labels(db)
    raise InvalidInputError(f"{len(ws)} workloads {what}; choose one with --workload: "
                            + "; ".join(labels[w] for w in ws))


def _best(args, db) -> int:
    from search.db.queries import best
    if args.k < 1:
        raise InvalidInputError(f"-k must be >= 1, got {args.k}")
    chosen = _chosen_workloads(args, db)
    if args.device is not None:
        _check_device(args, db)
    picks = [m for w in (db.workloads() if chosen is None else chosen)
             for m in best(db, w, args.device, args.k)]
    picks = sorted(picks, key=lambda m: m.time_ms)[: args.k]
    labels = _labels(db)
    if args.json:
        print(json.dumps([{"workload": labels[m.workload], "device": m.device,
                           "toolchain": m.toolchain, "config": m.record.config,
                           "time_ms": m.time_ms, "estimate": m.record.estimate} for m in picks]))
        return 0 if picks else 1
    if not picks:
        print("no timed measurement matches")
        return 1
    table = [("best ms", "device", "workload", "config")]
    table += [(ms_text(m.time_ms, m.record.estimate), m.device,
               labels[m.workload], ", ".join(f"{k}={v}" for k, v in m.record.config.items()))
              for m in picks]
    print(aligned_table(table, text_columns={1, 2, 3}))
    if any(m.record.estimate for m in picks):
        print(ESTIMATE_LEGEND)
    return 0


def _export(args, db) -> int:
    from search.db.export import export_cache
    from search.db.queries import summary
    from search.kt_cache import load_cache
    if args.device:  # an unknown device first: not "N workloads; choose one with --workload"
        args.device = _export_device(args, db)
    w = _one_workload(args, db, args.device)
    label = _labels(db)[w]
    if not args.device:
        devices = sorted({r.device for r in summary(db) if r.workload == w})
        if len(devices) != 1:
            raise InvalidInputError(f"{len(devices)} devices hold {label}; choose one with "
                                    f"--device: " + ", ".join(devices))
        args.device = devices[0]
    # the file the write lands in, named before it: a link into /proc/self/fd
    # (/dev/stdout redirected to a file) still names the replaced file afterwards
    real = Path(os.path.realpath(args.file))
    path = export_cache(db, args.file, w, args.device, args.toolchain)
    n = len(load_cache(real)) if real.is_file() else None  # /dev/null cannot be read back
    if args.json:
        print(json.dumps({"file": str(path), "workload": label, "device": args.device,
                          "entries": n}))
    else:
        print(format_rows([("wrote", str(path)), ("workload", label),
                           ("device", args.device), ("entries", "-" if n is None else str(n))]))
    return 0
