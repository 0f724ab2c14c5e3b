"""How close the near I/O-optimal dataflow comes to the best I/O lower bound, layer by layer.

For every convolution layer of ResNet-50 and VGG-16 (batch 1) at a fast memory of 48 KiB
(fp32: 12288 words) per block, the direct dataflow of least exact I/O (``direct``: tiles of
any size, border tiles clipped -- the exact I/O counts them and the kernels guard them --
or, where windows do not overlap, runs of consecutive output positions, dataflow.runs;
the order ``ord``: output-, weight- or input-stationary o/w/i, ``r`` marks runs;
dataflow.stationary) is compared with the best lower bound at S + 2
(proofs/test_multi_block.py). ``div`` is the best rectangle dividing the output (the search
domain's Table 1), and ``wino`` Winograd F(e x e, 3 x 3) for the layers it applies to (the
paper's footprint or one accumulator array, whichever moves less;
dataflow.winograd_accumulate). ``gap`` is the relative gap of ``x y`` vs ``R z``
(R = reuse_max) of the chosen tiles. Prints a table and writes JSON (``--out``, default
``benchmarks/results/dataflow_ratio.json``).

Run: ``.venv/bin/python benchmarks/dataflow_ratio.py [--fast-memory 48KiB] [--networks resnet50 vgg16]``
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

from dataflow.evaluate import evaluate_dataflow
from iobound.algorithms import winograd_offered
from iobound.networks import network_layers
from iobound.units import fast_memory_words

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "dataflow_ratio.json"


def _row(layer, s: int, e: int) -> dict:
    keys = ("tiles", "order", "io_exact", "io_exact_parts", "io_paper_approx", "lower_bound",
            "lower_bound_method", "ratio_to_bound", "footprint_words", "optimality_condition")
    row = {"layer": layer.name, "shape": layer.short(),
           "direct": {k: evaluate_dataflow(layer, s, divisors=False).to_dict()[k] for k in keys}}
    div = evaluate_dataflow(layer, s, divisors=True).to_dict()
    row["direct_dividing"] = {k: div[k] for k in ("tiles", "order", "io_exact", "ratio_to_bound",
                                                   "footprint_words")}
    if winograd_offered(layer):
        w = evaluate_dataflow(layer, s, algorithm="winograd", e=e)
        row["winograd"] = {k: w.to_dict()[k] for k in (
            "tiles", "order", "io_exact", "lower_bound", "lower_bound_method", "ratio_to_bound",
            "footprint_words")}
    return row


def _tiles(d: dict) -> str:
    t = d["tiles"]
    return f"run {t['m']},{t['z']}" if "m" in t else f"{t['x']},{t['y']},{t['z']}"


def _order(d: dict) -> str:
    return d["order"][0] + ("r" if d["order"].endswith("-runs") else "")


def _summary(values: list[float]) -> dict:
    return {"count": len(values), "min": min(values), "median": statistics.median(values),
            "max": max(values), "geomean": math.exp(sum(math.log(v) for v in values) / len(values))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast-memory", default="48KiB", help="per block (default 48KiB)")
    parser.add_argument("--dtype", default="fp32")
    parser.add_argument("--networks", nargs="+", default=["resnet50", "vgg16"])
    parser.add_argument("--winograd-e", type=int, default=2)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    s = fast_memory_words(args.fast_memory, args.dtype)

    start = time.perf_counter()
    rows = [_row(layer, s, args.winograd_e) for net in args.networks for layer in network_layers(net)]
    elapsed = time.perf_counter() - start

    head = (f"{'layer':<20} {'shape':<44} {'tiles':>12} {'ord':>3} {'I/O exact':>13} {'bound':>13} "
            f"{'ratio':>6} {'gap':>6} {'div':>6} {'wino':>6}")
    print(head)
    print("-" * len(head))
    for r in rows:
        d = r["direct"]
        wino = f"{r['winograd']['ratio_to_bound']:6.2f}" if "winograd" in r else f"{'-':>6}"
        print(f"{r['layer']:<20} {r['shape']:<44} {_tiles(d):>12} {_order(d):>3} "
              f"{d['io_exact']:>13,} {d['lower_bound']:>13,.0f} {d['ratio_to_bound']:>6.2f} "
              f"{d['optimality_condition']['relative_gap']:>+6.2f} "
              f"{r['direct_dividing']['ratio_to_bound']:>6.2f} {wino}")

    summary = {}
    for net in args.networks:
        mine = [r for r in rows if r["layer"].startswith(net + ".")]
        summary[net] = {"direct": _summary([r["direct"]["ratio_to_bound"] for r in mine]),
                        "direct_dividing": _summary([r["direct_dividing"]["ratio_to_bound"] for r in mine])}
        wino = [r["winograd"]["ratio_to_bound"] for r in mine if "winograd" in r]
        if wino:
            summary[net][f"winograd_e{args.winograd_e}"] = _summary(wino)
    print()
    for net, kinds in summary.items():
        for kind, sm in kinds.items():
            print(f"{net:<9} {kind:<16} layers {sm['count']:>3}  ratio min {sm['min']:.2f}  "
                  f"median {sm['median']:.2f}  geomean {sm['geomean']:.2f}  max {sm['max']:.2f}")
    print(f"\nS = {s} words per block (bound evaluated at S + 2, proofs/test_multi_block.py); {elapsed:.1f} s")

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "fast_memory_words": s, "fast_memory": args.fast_memory, "dtype": args.dtype,
        "processors": 1, "winograd_e": args.winograd_e,
        "tiles": "direct: any size or runs, order of least exact I/O; direct_dividing: dividing rectangles",
        "summary": summary, "layers": rows, "seconds": elapsed,
    }, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
