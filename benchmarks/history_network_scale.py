"""How much a large tuning database of our conv template costs a network run.

``iobound tune --network NAME --history DB`` reads the history as each layer starts
and fits the history models on it, so a database of many layers and devices is paid
for once per layer. This fills a database with the whole pruned spaces (up to
``--per-layer`` configurations each, ``--strategy grid``, the analytic ``model``
measurer) of every layer of ``--history-network`` on each of ``--history-devices``,
then times ``tune --network TARGET --device DEVICE --measure model --budget N`` with
and without the database (the run with it stores its records in a copy, as a user's
would), and prints the seconds each layer paid for its history (the ``history``
``seconds`` of ``--json``: reading the records, fitting the prior).

The times are the analytic model's estimates, not a GPU's; the seconds are this machine's.
Writes JSON (``--out``).

Run: ``.venv/bin/python -m benchmarks.history_network_scale [--per-layer 3000]``
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.history_scale import checked_out, run_iobound, write_report  # noqa: E402

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "history_network_scale.json"


def _iobound(argv: list[str]) -> tuple[dict, float]:
    """(the --json report, seconds) of one ``iobound`` command run in this process."""
    out = io.StringIO()
    start = time.perf_counter()
    run_iobound([*argv, "--json"], out)  # a non-zero exit: one line with its error
    seconds = round(time.perf_counter() - start, 2)
    return json.loads(out.getvalue()), seconds


def fill(db: Path, network: str, devices: list[str], per_layer: int) -> float:
    """Grid-measure every layer of ``network`` on each device into ``db``; the seconds."""
    start = time.perf_counter()
    for device in devices:
        _iobound(["tune", "--network", network, "--device", device, "--measure", "model",
                  "--strategy", "grid", "--budget", str(per_layer), "--batch-size",
                  str(per_layer), "--history", str(db), "--no-verify"])
    return round(time.perf_counter() - start, 2)


def check_args(args) -> None:
    """Refuse (``SystemExit``, one line) bad options before the database is filled."""
    from iobound.devices import get_device
    from iobound.errors import IoboundError
    from iobound.networks import network_layers

    if args.per_layer < 1 or args.budget < 1:
        raise SystemExit(f"error: --per-layer and --budget must be >= 1, got {args.per_layer} "
                         f"and {args.budget}")
    checks = [("--history-network", network_layers, args.history_network),
              ("--network", network_layers, args.network), ("--device", get_device, args.device)]
    checks += [("--history-devices", get_device, d) for d in args.history_devices]
    for option, check, value in checks:
        try:
            check(value)
        except IoboundError as exc:
            raise SystemExit(f"error: {option}: {exc}") from None
    checked_out(args.out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--history-network", default="resnet18")
    ap.add_argument("--history-devices", nargs="+", default=["v100", "a100", "t4"])
    ap.add_argument("--per-layer", type=int, default=3000,
                    help="configurations measured of each history layer (the grid's first)")
    ap.add_argument("--network", default="resnet50", help="the network tuned")
    ap.add_argument("--device", default="h100", help="the device it is tuned for")
    ap.add_argument("--budget", type=int, default=100)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    check_args(args)
    from search.db import TuningDB
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "history.db"
        fill_s = fill(db, args.history_network, args.history_devices, args.per_layer)
        with TuningDB(db, readonly=True) as handle:
            records = handle.count()
        run = ["tune", "--network", args.network, "--device", args.device, "--measure", "model",
               "--budget", str(args.budget), "--no-verify"]
        _, without_s = _iobound(run)
        shutil.copy(db, Path(tmp) / "copy.db")
        report, with_s = _iobound([*run, "--history", str(Path(tmp) / "copy.db")])
    per_layer = [layer["history"]["seconds"] for layer in report["layers"]
                 if layer.get("history", {}).get("seconds") is not None]
    got = {"history_network": args.history_network, "history_devices": args.history_devices,
           "per_layer": args.per_layer, "fill_s": fill_s, "history_records": records,
           "network": args.network, "device": args.device, "budget": args.budget,
           "layers": len(report["layers"]), "layers_tuned": len(per_layer),
           "without_history_s": without_s,
           "with_history_s": with_s,
           "history_s_per_layer": {"mean": round(sum(per_layer) / max(len(per_layer), 1), 2),
                                   "max": round(max(per_layer, default=0.0), 2)}}
    write_report(got, args.out)
    return 0


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
