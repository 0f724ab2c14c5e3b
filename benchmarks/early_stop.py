"""Runs of ``iobound tune`` stopped early (SIGINT or SIGTERM), counted by how they ended.

Each run tunes ``--layer`` with ``--executor`` and is sent SIGINT or SIGTERM (drawn at
random) after a delay drawn uniformly from ``--stop-after`` seconds: with the ``ray``
executor, 2-4 s lands in Ray's start-up, its first jobs and its shutdown. A stopped run
must end with exit code 130 and its ``interrupted`` line, and leave a log that
``--resume`` reads (a run stopped before its log exists leaves none, and says so); a
negative exit code is a signal that killed the process (-11: a segmentation fault).
Prints one row per exit code and writes the runs as JSON with ``--out``. ``--iobound``
runs another command line in place of the installed ``iobound`` (another checkout's, or
one that ends as every Python program does:
``--iobound "python -c 'import sys; from search.cli.main import main; sys.exit(main(sys.argv[1:]))'"``).

Measured here (``--runs 30 --seed 1``, results/early_stop_*.json; ``*_teardown``: the
process ending as every Python program does): Ray 2.60's driver threads outlive
``ray.shutdown`` and crashed the interpreter's teardown in 7 of 30 Ray runs, and with the
local executor (``--stop-after 0.5 5``) a stop during the teardown killed 8 of 30 finished
runs without their line; none of either since ``iobound`` skips that teardown
(search/cli/process_exit.py).

Run: ``.venv/bin/python benchmarks/early_stop.py [--runs 30] [--executor ray] [--stop-after 2 4]``
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from iobound.errors import InvalidInputError  # noqa: E402
from search.records import read_log  # noqa: E402

STOPS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM}
#: iobound ending as every Python program does, with the interpreter's teardown (what
#: search/cli/process_exit.py skips): the ``--iobound`` of the "before" runs
TEARDOWN = [sys.executable, "-c",
            "import sys; from search.cli.main import main; sys.exit(main(sys.argv[1:]))"]


def installed_iobound() -> list[str]:
    """The installed console script (what a user runs), else the module."""
    script = Path(sys.executable).with_name("iobound")
    return [str(script)] if script.exists() else [sys.executable, "-m", "search.cli.main"]


def _log_state(log: Path) -> str:
    """``none`` (no log yet), ``readable`` (the records a resume starts from) or why not."""
    if not log.exists():
        return "none"
    try:
        read_log(log)
    except InvalidInputError as exc:  # what --resume would refuse
        return f"unreadable: {' '.join(str(exc).split())[:120]}"
    return "readable"


def one_run(cmd: list[str], log: Path, stop: str, delay_s: float, timeout_s: float) -> dict:
    """Start ``cmd`` (a tune writing ``log``), send ``stop`` after ``delay_s``, and say how
    it ended."""
    proc = subprocess.Popen(cmd + ["--log", str(log)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(delay_s)
    proc.send_signal(STOPS[stop])
    try:
        _, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        return {"stop": stop, "delay_s": round(delay_s, 2), "exit": "timeout",
                "line": False, "log": _log_state(log)}
    lines = err.strip().splitlines()
    return {"stop": stop, "delay_s": round(delay_s, 2), "exit": proc.returncode,
            "line": bool(lines) and "interrupted" in lines[-1], "log": _log_state(log)}


def _summary(runs: list[dict]) -> list[dict]:
    rows = collections.Counter((r["exit"], r["line"], r["log"]) for r in runs)
    return [{"exit": e, "interrupted_line": line, "log": log, "runs": n}
            for (e, line, log), n in sorted(rows.items(), key=lambda kv: -kv[1])]


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--executor", choices=["local", "ray"], default="ray")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--layer", default="resnet50.conv3_1")
    parser.add_argument("--budget", type=int, default=48)
    parser.add_argument("--stop-after", type=float, nargs=2, default=[2.0, 4.0],
                        metavar=("MIN_S", "MAX_S"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds a stopped run has to end (default 120)")
    parser.add_argument("--iobound", help="the command line to run in place of the "
                        "installed iobound (split as a shell would)")
    parser.add_argument("--out", type=Path, help="write the runs and the summary as JSON")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.workers < 1 or args.budget < 1:
        raise SystemExit("error: --runs, --workers and --budget must be >= 1")
    if args.iobound is not None:
        try:
            args.iobound = shlex.split(args.iobound)
        except ValueError as exc:
            raise SystemExit(f"error: --iobound: {exc}") from None
        if not args.iobound:
            raise SystemExit("error: --iobound is empty")
    lo, hi = args.stop_after
    if not 0 <= lo <= hi:
        raise SystemExit("error: --stop-after needs 0 <= MIN_S <= MAX_S")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    rng = random.Random(args.seed)
    cmd = (args.iobound or installed_iobound()) + [
        "tune", "--layer", args.layer, "--budget", str(args.budget), "--executor", args.executor,
        "--workers", str(args.workers), "--seed", str(args.seed)]
    folder = Path(tempfile.mkdtemp(prefix="iobound-early-stop-"))
    runs = []
    try:
        for i in range(args.runs):
            run = one_run(cmd, folder / f"run{i}.jsonl", rng.choice(sorted(STOPS)),
                          rng.uniform(*args.stop_after), args.timeout)
            runs.append(run)
            print(f"run {i}: {run['stop']} after {run['delay_s']} s -> exit {run['exit']}, "
                  f"line {run['line']}, log {run['log']}", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    summary = _summary(runs)
    print(f"\n{args.runs} runs, {args.executor} executor, stopped after "
          f"{args.stop_after[0]:g}-{args.stop_after[1]:g} s:")
    print("| exit | interrupted line | log | runs |\n|---|---|---|---|")
    for row in summary:
        print(f"| {row['exit']} | {row['interrupted_line']} | {row['log']} | {row['runs']} |")
    if args.out:
        args.out.write_text(json.dumps({"arguments": {k: (str(v) if isinstance(v, Path) else v)
                                                      for k, v in vars(args).items()},
                                        "summary": summary, "runs": runs}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
