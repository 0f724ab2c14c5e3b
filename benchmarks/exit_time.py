"""Seconds from a command's last output to its process's end: the interpreter's teardown.

Runs ``iobound ARGS`` (default: a tune of ``resnet50.conv3_1`` with the model measurer,
48 evaluations) ``--repeats`` times as installed, which ends without the teardown
(search/cli/process_exit.py), and as every Python program ends (``sys.exit(main(...))``),
interleaved, and prints the median and the range of the time between the last byte on
stdout or stderr and the exit. A stop in that window kills a finished run without its
``interrupted`` line (benchmarks/early_stop.py).

Run: ``.venv/bin/python benchmarks/exit_time.py [--repeats 5] [-- bound --layer alexnet.conv1 --fast-memory 48KiB]``
"""

from __future__ import annotations

import argparse
import os
import selectors
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.early_stop import TEARDOWN, installed_iobound  # noqa: E402

DEFAULT_ARGS = ["tune", "--layer", "resnet50.conv3_1", "--budget", "48"]  # README's first


def tail_seconds(cmd: list[str], cwd: str) -> tuple[float, int]:
    """Seconds between ``cmd``'s last output and its exit, and its exit code."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
    sel = selectors.DefaultSelector()
    for stream in (proc.stdout, proc.stderr):
        sel.register(stream, selectors.EVENT_READ)
    last, open_streams = time.perf_counter(), 2
    while open_streams:
        for key, _ in sel.select():
            if os.read(key.fileobj.fileno(), 1 << 16):
                last = time.perf_counter()
            else:  # closed: the process has ended (or closed it)
                sel.unregister(key.fileobj)
                open_streams -= 1
    code = proc.wait()
    return time.perf_counter() - last, code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("args", nargs="*", help="iobound's arguments (after --)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        raise SystemExit("error: --repeats must be >= 1")
    iobound_args = args.args or DEFAULT_ARGS
    ways = {"iobound (no teardown)": installed_iobound(), "sys.exit (teardown)": TEARDOWN}
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    with tempfile.TemporaryDirectory(prefix="iobound-exit-time-") as cwd:
        for _ in range(args.repeats):
            for name, cmd in ways.items():
                tail, code = tail_seconds(cmd + iobound_args, cwd)
                if code != 0:
                    raise SystemExit(f"error: {' '.join(cmd + iobound_args)[:200]} "
                                     f"exited {code}")
                seconds[name].append(tail)
    print(f"iobound {' '.join(iobound_args)}: seconds from the last output to the exit, "
          f"{args.repeats} runs each")
    for name, values in seconds.items():
        print(f"{name:24s} median {statistics.median(values):.3f}  "
              f"min {min(values):.3f}  max {max(values):.3f}")
    return 0


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
