"""How long building the Table 1 search domain (ConvSpace, OR-Tools CP-SAT) takes, per layer.

For every convolution layer of the chosen networks (default AlexNet, VGG-16, ResNet-50;
batch 1) on a device preset, builds ``ConvSpace`` for the direct kernel and, where it
applies (stride 1, square kernel larger than 1x1), for Winograd (e in 2,3,4), and
prints the build time (CP-SAT tile enumeration plus the per-tile thread tables) with the
exact unpruned and pruned sizes. The issue's target is at most 2 s per layer. Writes
JSON (``--out``, default ``benchmarks/results/domain_speed.json``); exit code 1 when a
build exceeds ``--limit`` seconds.

Run: ``.venv/bin/python benchmarks/domain_speed.py [--device v100] [--networks alexnet vgg16 resnet50]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from iobound.algorithms import winograd_offered
from iobound.devices import get_device
from iobound.networks import network_layers
from search.conv_space import ConvSpace

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "domain_speed.json"


def _build(layer, device, algorithm: str) -> dict:
    t0 = time.perf_counter()
    space = ConvSpace(layer, device, algorithm)
    seconds = time.perf_counter() - t0
    return {"algorithm": algorithm, "seconds": seconds, "unpruned_size": space.unpruned_size,
            "pruned_size": space.pruned_size, "ratio": space.ratio,
            "tile_combinations": len(space.tile_solutions.rows)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="v100")
    parser.add_argument("--networks", nargs="+", default=["alexnet", "vgg16", "resnet50"])
    parser.add_argument("--limit", type=float, default=2.0, help="seconds allowed per build")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    device = get_device(args.device)

    rows = []
    header = f"{'layer':<22} {'shape':<42} {'alg':<8} {'tiles':>6} {'unpruned':>10} {'pruned':>10} {'ratio':>7} {'build s':>8}"
    print(header)
    print("-" * len(header))
    for net in args.networks:
        for layer in network_layers(net):
            algs = ["direct"]
            if winograd_offered(layer):
                algs.append("winograd")
            for alg in algs:
                r = {"layer": layer.name, "shape": layer.short(), **_build(layer, device, alg)}
                rows.append(r)
                flag = "  SLOW" if r["seconds"] > args.limit else ""
                print(f"{r['layer']:<22} {r['shape']:<42} {alg:<8} {r['tile_combinations']:>6} "
                      f"{r['unpruned_size']:>10,} {r['pruned_size']:>10,} {r['ratio']:>7.2%} "
                      f"{r['seconds']:>8.3f}{flag}", flush=True)
    times = [r["seconds"] for r in rows]
    slow = [r for r in rows if r["seconds"] > args.limit]
    worst = max(rows, key=lambda r: r["seconds"])
    print(f"\n{len(rows)} builds on {device.name}: max {max(times):.3f} s ({worst['layer']} "
          f"{worst['algorithm']}), mean {sum(times) / len(times):.3f} s, total {sum(times):.1f} s; "
          f"{len(slow)} over the {args.limit:g} s limit")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"device": device.name, "networks": args.networks,
                                    "limit_seconds": args.limit, "rows": rows}, indent=1))
    print(f"wrote {args.out}")
    return 1 if slow else 0


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
