"""Counted global traffic of the best generated kernel, divided by the best I/O lower bound.

For each layer (small and medium, batch 1) and each on-chip budget S (words per block),
every kernel configuration of a grid (tiles of powers of two and the output's own
sizes, channel chunks 1..8, Winograd e = 2, 3, 4) that runs on the device (A100 limits:
48 KiB static shared memory, <= 256 threads for the emulator, the register cap) and
uses at most S on-chip words (shared + register words) is scored by the dataflow's
exact I/O formula. The config with the least traffic is then **run in the CPU
emulator**: its LDG/STG counts (which must equal the formula), the flops it executed
(which must equal the model's, ``kernels.kernel_flops``) and its numerics are checked, and the counted traffic is divided by the best lower bound at S
(``iobound.report.best_lower_bound``). A ratio >= 1 always; near 1 means the dataflow
is near I/O-optimal at that S.

Run: ``.venv/bin/python benchmarks/kernel_traffic.py [--budgets 1024 4096]
[--out benchmarks/results/kernel_traffic.json]``; prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "kernel_traffic.json"
LAYERS = (
    "cin=8,hin=16,cout=16,kh=3,pad=1",
    "cin=8,hin=17,cout=16,kh=3,stride=2",
    "cin=3,hin=63,cout=16,kh=11,stride=4,pad=2",
    "cin=16,hin=20,cout=16,kh=5,pad=2",
    "cin=32,hin=28,cout=32,kh=3,pad=1",
    "cin=32,hin=14,cout=64,kh=1",
    "cin=64,hin=14,cout=64,kh=3,pad=1",
)
MAX_EMULATED_THREADS = 256


def _sizes(limit: int) -> list[int]:
    """Powers of two up to ``limit``, plus ``limit`` itself."""
    out = {limit}
    p = 1
    while p < limit:
        out.add(p)
        p *= 2
    return sorted(out)


def _largest_divisor_at_most(n: int, cap: int) -> int:
    return max(d for d in range(1, min(n, cap) + 1) if n % d == 0)


def _threads(x_units: int, y_units: int, z: int, per_unit: int):
    """A thread split (tx, ty, tz) within the register cap and the emulator's thread limit."""
    from kernels.limits import MAX_ACCUMULATORS_PER_THREAD

    tx = _largest_divisor_at_most(x_units, 16)
    ty = _largest_divisor_at_most(y_units, max(1, MAX_EMULATED_THREADS // tx))
    for tz in (d for d in range(1, z + 1) if z % d == 0):
        acc = (x_units // tx) * (y_units // ty) * (z // tz) * per_unit
        if acc <= MAX_ACCUMULATORS_PER_THREAD and tx * ty * tz <= MAX_EMULATED_THREADS:
            return tx, ty, tz
    return None


def _candidates(layer):
    from iobound.algorithms import winograd_offered
    from kernels.config import DirectConfig, WinogradConfig

    for x in _sizes(layer.w_out):
        for y in _sizes(layer.h_out):
            for z in _sizes(layer.c_out):
                t = _threads(x, y, z, 1)
                for alpha in (a for a in (1, 2, 4, 8) if a <= layer.c_in):
                    if t:
                        yield DirectConfig(x, y, z, alpha, *t)
    if not winograd_offered(layer):
        return
    for e in (2, 3, 4):
        n2 = (e + layer.k_h - 1) ** 2
        tiles = -(-layer.w_out // e), -(-layer.h_out // e)
        for xt in _sizes(tiles[0]):
            for yt in _sizes(tiles[1]):
                for z in _sizes(layer.c_out):
                    t = _threads(xt, yt, z, 2 * n2)
                    if t:
                        yield WinogradConfig(e, xt * e, yt * e, z, *t)


def best_config(layer, algorithm: str, budget: int, device):
    """The valid config of ``algorithm`` with the least exact traffic within ``budget`` words."""
    from kernels.config import check_config, onchip_words
    from kernels.verify import expected_io

    best = None
    for cfg in _candidates(layer):
        if cfg.algorithm != algorithm or onchip_words(layer, cfg) > budget:
            continue
        if check_config(layer, cfg, device):
            continue
        total = expected_io(layer, cfg).total
        key = (total, onchip_words(layer, cfg))
        if best is None or key < best[0]:
            best = (key, cfg)
    return None if best is None else best[1]


def row(layer, algorithm: str, budget: int, device) -> dict | None:
    from iobound.report import bound_report
    from kernels.verify import emulate_and_check

    cfg = best_config(layer, algorithm, budget, device)
    if cfg is None:
        return None
    start = time.perf_counter()
    chk = emulate_and_check(layer, cfg, with_bound=False)
    e = cfg.e if algorithm == "winograd" else None
    rep = bound_report(layer, budget, algorithm, e)
    counted = chk.global_loads + chk.global_stores
    return {
        "layer": layer.short(), "algorithm": algorithm, "budget_words": budget,
        "config": cfg.to_dict(), "onchip_words": chk.onchip_words,
        "counted_traffic": counted, "formula_traffic": chk.expected_loads + chk.expected_stores,
        "traffic_matches": chk.traffic_matches, "numerics_ok": chk.numerics_ok,
        "flops": chk.flops, "model_flops": chk.expected_flops, "flops_matches": chk.flops_matches,
        "lower_bound": rep.best, "bound_method": rep.best_method,
        "ratio": counted / rep.best, "seconds": time.perf_counter() - start,
    }


def _table(rows: list[dict]) -> str:
    head = ("| layer | algorithm | S (words) | best config | on-chip | counted traffic | "
            "= formula | flops = model | lower bound (method) | ratio |")
    lines = [head, "|" + "---|" * 10]
    for r in rows:
        cfg = ",".join(f"{k}={v}" for k, v in r["config"].items())
        alg = r["algorithm"] + (f" F({r['config']['e']})" if r["algorithm"] == "winograd" else "")
        lines.append(f"| {r['layer']} | {alg} | {r['budget_words']} | {cfg} | {r['onchip_words']} | "
                     f"{r['counted_traffic']:,} | {'yes' if r['traffic_matches'] else 'NO'} | "
                     f"{'yes' if r['flops_matches'] else 'NO'} | "
                     f"{r['lower_bound']:,.0f} ({r['bound_method']}) | {r['ratio']:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", nargs="+", default=list(LAYERS), metavar="SPEC")
    ap.add_argument("--budgets", nargs="+", type=int, default=[1024, 4096], metavar="WORDS")
    ap.add_argument("--device", default="a100")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if min(args.budgets) < 1:
        raise SystemExit(f"error: --budgets must be >= 1 word, got {min(args.budgets)}")

    from iobound.algorithms import winograd_offered
    from iobound.devices import get_device
    from iobound.layer_spec import parse_layer_spec

    device = get_device(args.device)
    layers = [parse_layer_spec(spec) for spec in args.layers]  # every spec checked first
    budgets = list(dict.fromkeys(args.budgets))
    rows, missing = [], []
    for layer in layers:
        for budget in budgets:
            for algorithm in ("direct", "winograd"):
                if algorithm == "winograd" and not winograd_offered(layer):
                    continue
                r = row(layer, algorithm, budget, device)
                if r is None:
                    missing.append(f"{layer.short()} {algorithm} S={budget}")
                    continue
                rows.append(r)
                print(f"{r['layer']} {algorithm} S={budget}: ratio {r['ratio']:.2f} "
                      f"({r['seconds']:.1f} s)", file=sys.stderr)
    if not rows:  # nothing to check: no table, no file (an earlier result stays)
        print(f"FAILED: no kernel configuration fits any of --budgets "
              f"{' '.join(map(str, budgets))} words on {device.name}", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"device": device.name, "rows": rows}, indent=1))
    print(_table(rows))
    # Exit 1 when a kernel's counted traffic differs from the formula or its flops from the
    # model's, its output is wrong, or it beat the lower bound (ratio < 1: a bug in the
    # kernel, the counter or the bound).
    bad = [r for r in rows if not (r["traffic_matches"] and r["flops_matches"] and r["numerics_ok"]
                                   and r["ratio"] >= 1.0)]
    for r in bad:
        print(f"FAILED: {r['layer']} {r['algorithm']} S={r['budget_words']}", file=sys.stderr)
    if missing:  # a cell without a kernel is a cell not checked
        print(f"FAILED: no kernel configuration within the budget for {len(missing)} cells: "
              + "; ".join(missing), file=sys.stderr)
    return 1 if bad or missing else 0


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
