"""A small network's throughput with its layers tuned one after another vs all at once.

Three small layers (1x8x12x12 -> 8/16/24, 3x3, pad 1), the ``emulate`` measurer (a g++
build per configuration), the explorer, budget 12 per layer, 2 local workers: tuned with
``parallel_layers=1`` and with ``parallel_layers=3`` (every layer at once over the same
pool). Each variant runs in a fresh process with its own build cache (so neither reuses
the other's builds), the two in alternating order for each seed. Besides the evaluations
per second, it checks that both variants found the same best configurations (a layer's
results must not depend on the concurrency).

Run: ``.venv/bin/python benchmarks/network_overlap.py [--seeds 1 2]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "network_overlap.json"


def one(at_once: int, seed: int) -> dict:
    """Tune the three layers with ``at_once`` layers at a time; wall time and results. Its
    build cache and kernel folder are scratch, removed when it returns."""
    with tempfile.TemporaryDirectory(prefix="iobound-overlap-") as cache, \
            tempfile.TemporaryDirectory(prefix="iobound-overlap-kernels-") as out_dir:
        os.environ["IOBOUND_CACHE"] = cache
        return _one(at_once, seed, out_dir)


def _one(at_once: int, seed: int, out_dir: str) -> dict:
    from iobound.layer import ConvLayer
    from kernels.config import config_from_dict
    from kernels.emulator import build_emulator
    from kernels.generate import generate
    from search.executors import ExecutorOptions
    from search.session import TuneSettings, tune_layers

    layers = [ConvLayer(n=1, c_in=8, h_in=12, w_in=12, c_out=c, k_h=3, k_w=3, padding=1,
                        name=f"small{c}") for c in (8, 16, 24)]
    pch = dict(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1)
    build_emulator(generate(layers[0], config_from_dict(pch, "direct")).code)  # not timed
    settings = TuneSettings(strategy="explorer", budget=12, seed=seed,
                            executor=ExecutorOptions(workers=2, parallel_layers=at_once))
    t0 = time.perf_counter()
    reports = tune_layers(layers, "v100", settings, measure="emulate",
                          out_dir=out_dir, verify=False)
    seconds = time.perf_counter() - t0
    evaluations = sum(r.result.evaluations for r in reports)
    return {"at_once": at_once, "seed": seed, "evaluations": evaluations,
            "seconds": round(seconds, 2), "per_second": round(evaluations / seconds, 4),
            "best": [r.result.best.config for r in reports], "load_1min": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--one", type=int, nargs=2, metavar=("AT_ONCE", "SEED"), help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(*args.one)))
        return 0
    rows = []
    for n, seed in enumerate(args.seeds):
        for at_once in ((1, 3) if n % 2 == 0 else (3, 1)):
            out = subprocess.run([sys.executable, __file__, "--one", str(at_once), str(seed)],
                                 capture_output=True, text=True, check=True).stdout
            rows.append(json.loads(out.strip().splitlines()[-1]))
            r = rows[-1]
            print(f"seed {seed}, {at_once} layer(s) at once: {r['evaluations']} evaluations in "
                  f"{r['seconds']:.1f} s = {r['per_second']:.3f}/s (load {r['load_1min']:.1f})",
                  flush=True)
    pairs = {}
    for r in rows:
        pairs.setdefault(r["seed"], {})[r["at_once"]] = r
    summary = {seed: {"at_once_over_in_turn": round(p[3]["per_second"] / p[1]["per_second"], 3),
                      "same_best": p[3]["best"] == p[1]["best"]} for seed, p in pairs.items()}
    for seed, s in summary.items():
        print(f"seed {seed}: 3 at once = {s['at_once_over_in_turn']:.2f}x the throughput of "
              f"one after another; same best configurations: {s['same_best']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"benchmark": "network_overlap", "cpus": os.cpu_count(),
                                    "runs": rows, "summary": summary}, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
