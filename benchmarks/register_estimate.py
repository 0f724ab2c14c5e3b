"""How far the analytic model's registers and occupancy are from what ptxas gives.

The analytic model (v6) estimates a thread's registers by a fit to ptxas' counts capped
by the launch bounds (:func:`kernels.limits.compiled_registers`, constants
:data:`kernels.limits.COMPILED_REGISTERS`, one row per :func:`kernels.limits.register_kind`:
direct, depthwise, Winograd) and its resident blocks per SM by the CUDA
Occupancy Calculator's rules (:func:`kernels.limits.resident_blocks_per_sm`);
:mod:`kernels.analytic` turns them into the features ``regs_per_thread``,
``blocks_per_sm`` and ``occupancy``. This benchmark measures the gap, and is the data the
constants were fitted on (the default cases, ``--arch sm_70`` and ``sm_80``).

For each case (a layer preset, its algorithm and Winograd ``e``) it draws ``--samples``
configurations uniformly from the pruned CP-SAT domain the tuner searches
(:class:`search.conv_space.ConvSpace`, seeded), compiles each with nvcc for ``--arch``
(:func:`kernels.nvcc.compile_cubin`, a temporary cache) and compares, on the matching
device preset (sm_70: V100, sm_80: A100, ...):

- ptxas' registers over the model's estimate, and the share of configs that spill;
- the model's blocks per SM against the Occupancy Calculator's blocks from ptxas'
  registers and shared memory (:func:`calculator_blocks`: registers in units of 256 a
  warp, warps in fours, shared memory in units of 256 B, or 128 B plus 1 KiB reserved
  per block from CC 8.0); 0 blocks means the kernel cannot be launched at all (its block
  needs more registers than an SM has). ``units alone`` is the share that differs when the
  calculator is given the model's own registers: the part of the gap due to the
  allocation rules, not the register estimate;
- the model's static shared memory against ptxas' (they should agree).

Per register kind it also fits the register estimate's form again, ``ptxas registers ~ a + b
* register words + c * Winograd tile elements`` (numpy least squares over the configs
ptxas did not cap at the device's maximum, whose count is censored; predictions capped at
that maximum), and prints its median absolute error next to the model's, and next to the
error of the template's other line (depthwise configs by the direct line and the other way
round: :data:`SIBLING_KINDS`). Printed only: the model is not changed.

Writes JSON (``--out``, default ``benchmarks/results/register_estimate_<arch>.json``); exit code
1 when a sampled config fails to compile or the shared memory of model and ptxas differs.
Without a compiler for ``--arch``: one line, exit code 2.

Run: ``.venv/bin/python benchmarks/register_estimate.py [--arch sm_80] [--samples 20]
[--layers resnet50.conv2_1b resnet50.conv2_1b:winograd:2 ...] [--seed 0]``
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a file: make the packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from iobound.devices import DEVICES  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
#: ``LAYER[:ALGORITHM[:E]]``: direct 3x3, 1x1, 7x7 and 5x5 layers, stride 2, grouped;
#: depthwise (stride 1 and 2, 32 to 1,024 channels); the other layers of one input channel a
#: group (:func:`kernels.limits.register_kind`): channel multipliers of 4 and 16, dense
#: layers of one input channel (5x5, 3x3); Winograd F(2x2), F(3x3), F(4x4) on 3x3 layers
#: and F(2x2) on a 5x5 one.
DEFAULT_CASES = ("resnet50.conv2_1b", "resnet50.conv2_1a", "resnet50.conv1", "alexnet.conv2",
                 "mobilenet.conv_dw_1", "resnet50.conv4_1b", "inception_v3.mixed_5b_branch5x5_2",
                 "resnet50.conv2_1b:winograd:2", "resnet50.conv2_1b:winograd:3",
                 "resnet50.conv2_1b:winograd:4", "vgg16.conv1_2:winograd:2",
                 "alexnet.conv2:winograd:2", "resnet18.conv5_2a:winograd:4",
                 "mobilenet.conv_dw_2", "mobilenet.conv_dw_6", "mobilenet.conv_dw_13",
                 "resnext50.conv3_1b", "cin=32,hin=56,cout=128,kh=3,pad=1,groups=32",
                 "cin=3,hin=112,cout=48,kh=3,pad=1,groups=3", "cin=1,hin=28,cout=32,kh=5",
                 "cin=1,hin=224,cout=64,kh=3,pad=1")
#: The device preset each arch is measured against: the presets table's first of the arch
#: (sm_70 V100, sm_80 the A100 SXM4, sm_86 the RTX A4000, ...).
ARCH_DEVICE = {}
for _device in DEVICES.values():
    ARCH_DEVICE.setdefault(_device.arch, _device.name)


@dataclass(frozen=True)
class Case:
    """One layer preset with its algorithm (and Winograd ``e``)."""

    spec: str
    layer: object
    algorithm: str
    e: int | None = None

    @property
    def label(self) -> str:
        name = self.layer.name or self.layer.short()
        return f"{name} {self.algorithm}" + (f" e={self.e}" if self.e else "")


def parse_case(spec: str) -> Case:
    """``"resnet50.conv2_1b"`` (direct), ``"resnet50.conv2_1b:winograd:2"``, or a layer spec
    in the place of the preset (``"cin=3,hin=56,cout=48,kh=3,pad=1,groups=3"``)."""
    from iobound.algorithms import winograd_offered
    from iobound.errors import InvalidInputError
    from iobound.layer_spec import parse_layer_spec

    name, _, rest = spec.partition(":")
    algorithm, _, e_text = rest.partition(":")
    algorithm = algorithm or "direct"
    if algorithm not in ("direct", "winograd"):
        raise InvalidInputError(f"case {spec!r}: algorithm must be direct or winograd, "
                                f"got {algorithm!r}")
    layer = parse_layer_spec(name)
    if algorithm == "direct":
        if e_text:
            raise InvalidInputError(f"case {spec!r}: only Winograd takes an e")
        return Case(spec, layer, algorithm)
    if not e_text.isdigit() or int(e_text) < 2:
        raise InvalidInputError(f"case {spec!r}: Winograd needs an e >= 2 (LAYER:winograd:E)")
    if not winograd_offered(layer):
        raise InvalidInputError(f"case {spec!r}: Winograd does not apply to {layer.short()}")
    return Case(spec, layer, algorithm, int(e_text))


def calculator_blocks(device, threads: int, shared: int, regs: int) -> int:
    """Blocks per SM by the CUDA Occupancy Calculator's rules (0: cannot launch).

    Written out scalar on purpose, not :func:`kernels.limits.resident_blocks_per_sm`: it is
    the reference the model's vectorised rules are measured against (``units alone``)."""
    warps = -(-threads // device.warp_size)
    by_warps = min(device.max_blocks_per_sm, device.max_threads_per_sm // device.warp_size // warps)
    regs_per_warp = -(-regs * device.warp_size // 256) * 256
    by_regs = (device.registers_per_sm // regs_per_warp // 4 * 4) // warps
    unit, reserved = (128, 1024) if device.compute_capability >= (8, 0) else (256, 0)
    block_shared = -(-shared // unit) * unit + reserved
    by_shared = (device.shared_mem_per_sm_bytes // block_shared if block_shared
                 else device.max_blocks_per_sm)
    return int(min(by_warps, by_regs, by_shared))


def measure_case(case: Case, device, arch: str, samples: int, seed: int, cache_root) -> list[dict]:
    """One row per sampled config of ``case``: the model's numbers and ptxas'."""
    from kernels.analytic import FEATURE_NAMES, analytic_features
    from kernels.config import config_from_dict
    from kernels.generate import generate
    from kernels.limits import register_kind
    from kernels.nvcc import compile_cubin
    from kernels.ptxas import parse_ptxas
    from search.conv_space import ConvSpace

    extra = {"winograd_e": (case.e,)} if case.e else {}
    space = ConvSpace(case.layer, device, case.algorithm, **extra)
    idx = space.sample(min(samples, len(space)), np.random.default_rng(seed))
    rows = []
    for i in sorted(int(i) for i in idx):
        knobs = space.get(i)
        cfg = config_from_dict(knobs, case.algorithm)
        f = dict(zip(FEATURE_NAMES, analytic_features(
            case.layer, device, case.algorithm, np.array([[knobs[p] for p in space.params]]))[0]))
        built = compile_cubin(generate(case.layer, cfg), arch, cache_root=cache_root)
        row = {"case": case.label, "layer": case.layer.name, "algorithm": case.algorithm,
               "kind": register_kind(case.layer, case.algorithm), "e": case.e, "config": knobs, "threads": cfg.threads,
               "tile_elements": ((case.e + case.layer.k_h - 1) * (case.e + case.layer.k_w - 1)
                                 if case.e else 0),
               "register_words": int(f["ilp"]), "estimated_registers": int(f["regs_per_thread"]),
               "model_shared_bytes": int(f["shared_bytes"]),
               "model_blocks_per_sm": int(f["blocks_per_sm"]),
               "model_occupancy": float(f["occupancy"]),
               "calculator_blocks_from_estimate": calculator_blocks(
                   device, cfg.threads, int(f["shared_bytes"]), int(f["regs_per_thread"])),
               "status": built.status.value, "compile_seconds": round(built.seconds, 3)}
        if built.ok:
            info = next(iter(parse_ptxas(built.log).values()), None)
            calc = calculator_blocks(device, cfg.threads, built.shared_bytes, built.registers)
            row.update(ptxas_registers=built.registers, ptxas_shared_bytes=built.shared_bytes,
                       spill_stores=built.spill_stores, spill_loads=built.spill_loads,
                       stack_bytes=info.stack_bytes if info else None,
                       calculator_blocks_per_sm=calc,
                       calculator_occupancy=calc * -(-cfg.threads // device.warp_size)
                       / (device.max_threads_per_sm / device.warp_size))
        else:
            row["log_tail"] = built.log[-400:]
        rows.append(row)
    return rows


def summarise(label: str, rows: list[dict]) -> dict:
    """Counts, register ratios, spills, blocks and shared memory of ``rows`` (compiled ones)."""
    ok = [r for r in rows if r["status"] == "ok"]
    out = {"group": label, "configs": len(rows), "compiled": len(ok),
           "compile_errors": len(rows) - len(ok)}
    if not ok:
        return out
    ratio = np.array([r["ptxas_registers"] / r["estimated_registers"] for r in ok])
    model = np.array([r["model_blocks_per_sm"] for r in ok])
    calc = np.array([r["calculator_blocks_per_sm"] for r in ok])
    units = np.array([r["calculator_blocks_from_estimate"] for r in ok])
    launch = calc > 0
    out.update(
        registers_ratio_median=float(np.median(ratio)), registers_ratio_min=float(ratio.min()),
        registers_ratio_max=float(ratio.max()),
        spill_share=float(np.mean([r["spill_stores"] + r["spill_loads"] > 0 for r in ok])),
        cannot_launch_share=float(np.mean(~launch)),
        blocks_differ_share=float(np.mean(model != calc)),
        blocks_differ_by_units_alone_share=float(np.mean(model != units)),
        blocks_ratio_median=float(np.median(model[launch] / calc[launch])) if launch.any() else None,
        shared_equal_share=float(np.mean([r["model_shared_bytes"] == r["ptxas_shared_bytes"]
                                          for r in ok])))
    return out


#: The register kinds of one kernel template: each one's configs are also estimated by the
#: others' lines, to show the kind's own line is the one that fits them.
SIBLING_KINDS = {"direct": ("depthwise",), "depthwise": ("direct",), "winograd": ()}


def sibling_line_errors(kind: str, rows: list[dict], device) -> dict[str, float]:
    """Median absolute error, over the compiled configs of ``rows`` (all of register
    ``kind``), of each :data:`SIBLING_KINDS` line's estimate, capped as the model caps its
    own (:func:`kernels.limits.compiled_registers`)."""
    from kernels.limits import compiled_registers

    ok = [r for r in rows if r["status"] == "ok"]
    ptxas = np.array([r["ptxas_registers"] for r in ok], dtype=float)
    return {other: float(np.median(np.abs(np.array([compiled_registers(
        r["register_words"], other, device, r["threads"], r["tile_elements"]) for r in ok]) - ptxas)))
        for other in SIBLING_KINDS[kind]} if ok else {}


def fit_registers(kind: str, rows: list[dict], cap: int) -> dict | None:
    """``ptxas ~ a + b * register words (+ c * tile elements)`` by least squares over the
    uncapped configs of one register ``kind`` (their tile column only for Winograd); median
    absolute errors of the fit (capped at ``cap``) and of the model's estimate over all."""
    ok = [r for r in rows if r["status"] == "ok"]
    cols = [np.ones(len(ok)), [r["register_words"] for r in ok]]
    if kind == "winograd":
        cols.append([r["tile_elements"] for r in ok])
    x = np.array(cols, dtype=float).T
    ptxas = np.array([r["ptxas_registers"] for r in ok], dtype=float)
    fit = ptxas < cap
    if len(np.unique(x[fit], axis=0)) < x.shape[1]:
        return None
    coef, *_ = np.linalg.lstsq(x[fit], ptxas[fit], rcond=None)
    pred = np.minimum(x @ coef, cap)
    model = np.array([r["estimated_registers"] for r in ok], dtype=float)
    return {"kind": kind, "configs": len(ok), "fitted_on": int(fit.sum()),
            "a": float(coef[0]), "b": float(coef[1]), "c": float(coef[2]) if len(coef) > 2 else 0.0,
            "median_abs_error": float(np.median(np.abs(pred - ptxas))),
            "model_median_abs_error": float(np.median(np.abs(model - ptxas)))}


def _pct(x) -> str:
    return "-" if x is None else f"{x:.0%}"


def table(summary: list[dict], fits: list[dict]) -> str:
    """The summary rows and the candidate fits as text."""
    head = (f"{'group':<34} {'n':>3} {'err':>3}  {'ptxas/est: median [min, max]':<28} "
            f"{'spills':>6} {'no launch':>9} {'blocks differ':>13} {'units alone':>11} "
            f"{'model/calc':>10} {'smem equal':>10}")
    lines = [head, "-" * len(head)]
    for s in summary:
        if not s["compiled"]:
            lines.append(f"{s['group']:<34} {s['configs']:>3} {s['compile_errors']:>3}  (none compiled)")
            continue
        ratio = (f"{s['registers_ratio_median']:.2f} [{s['registers_ratio_min']:.2f}, "
                 f"{s['registers_ratio_max']:.2f}]")
        med = "-" if s["blocks_ratio_median"] is None else f"{s['blocks_ratio_median']:.2f}"
        lines.append(f"{s['group']:<34} {s['compiled']:>3} {s['compile_errors']:>3}  {ratio:<28} "
                     f"{_pct(s['spill_share']):>6} {_pct(s['cannot_launch_share']):>9} "
                     f"{_pct(s['blocks_differ_share']):>13} "
                     f"{_pct(s['blocks_differ_by_units_alone_share']):>11} {med:>10} "
                     f"{_pct(s['shared_equal_share']):>10}")
    lines += ["", "register estimate refitted: ptxas registers ~ a + b * register words + c * "
              "Winograd tile elements (least squares over uncapped configs, capped at 255)"]
    for f in fits:
        lines.append(f"  {f['kind']:<9} n={f['configs']:<3} (fit on {f['fitted_on']}) "
                     f"a={f['a']:7.2f} b={f['b']:5.2f} c={f['c']:5.2f}  median |error| "
                     f"{f['median_abs_error']:5.1f} registers (model: "
                     f"{f['model_median_abs_error']:5.1f}"
                     + "".join(f"; by the {k} line: {v:5.1f}"
                               for k, v in f.get("sibling_lines", {}).items()) + ")")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", nargs="+", default=list(DEFAULT_CASES), metavar="LAYER[:ALG[:E]]")
    ap.add_argument("--arch", default="sm_80", choices=sorted(ARCH_DEVICE))
    ap.add_argument("--samples", type=int, default=20, help="configs per case")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help="default: benchmarks/results/register_estimate_<arch>.json")
    args = ap.parse_args(argv)
    args.out = args.out or RESULTS / f"register_estimate_{args.arch}.json"
    if args.samples < 1:
        ap.error(f"--samples must be >= 1, got {args.samples}")

    from iobound.devices import get_device
    from iobound.errors import ToolchainError
    from kernels.nvcc import find_toolchain

    cases = [parse_case(spec) for spec in args.layers]  # every spec checked first
    device = get_device(ARCH_DEVICE[args.arch])
    tc = find_toolchain(args.arch)
    if tc is None:
        raise ToolchainError(f"no nvcc (nor NVRTC + ptxas) supports {args.arch}: this "
                             "benchmark needs ptxas' register counts")
    start = time.perf_counter()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as cache:
        for case in cases:
            t0 = time.perf_counter()
            new = measure_case(case, device, args.arch, args.samples, args.seed, cache)
            rows += new
            print(f"{case.label}: {len(new)} configs ({time.perf_counter() - t0:.1f} s)",
                  file=sys.stderr, flush=True)
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    summary = [summarise(c.label, [r for r in rows if r["case"] == c.label]) for c in cases]
    summary += [summarise(f"all {k}", [r for r in rows if r["kind"] == k]) for k in kinds]
    fits = []
    for k in kinds:
        of_kind = [r for r in rows if r["kind"] == k]
        if fit := fit_registers(k, of_kind, device.registers_per_thread_max):
            fits.append(dict(fit, sibling_lines=sibling_line_errors(k, of_kind, device)))
    seconds = time.perf_counter() - start
    print(f"{device.name}, {args.arch} ({tc.release}), {args.samples} samples a case, seed {args.seed}")
    print(table(summary, fits))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "device": device.name, "arch": args.arch, "toolchain": tc.release, "samples": args.samples,
        "seed": args.seed, "cases": [c.spec for c in cases], "seconds": round(seconds, 1),
        "summary": summary, "fits": fits, "rows": rows}, indent=1))
    print(f"wrote {args.out} ({seconds:.0f} s)")
    bad = [r for r in rows if r["status"] != "ok"
           or r["model_shared_bytes"] != r["ptxas_shared_bytes"]]
    for r in bad:
        print(f"FAILED: {r['case']} {r['config']}: " + (
            r["status"] if r["status"] != "ok" else
            f"shared memory model {r['model_shared_bytes']} B, ptxas {r['ptxas_shared_bytes']} B"),
            file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
