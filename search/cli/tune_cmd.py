"""``iobound tune``: search kernel configurations of a layer (or a recorded space).

Examples
--------
>>> from search.cli.main import main
>>> main(["tune", "--measure", "replay"])  # doctest: +SKIP
iobound tune: error: --measure replay needs a file: replay:FILE
2
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

from iobound.errors import InvalidInputError

from .common import LAYER_HELP, add_algorithm_argument, add_json_argument

HELP = "auto-tune kernel configurations (cost model + random-walk explorer)"
DESCRIPTION = (
    "Search the tile/thread configurations of our direct (or Winograd) kernel for a layer "
    "with an XGBoost cost model and parallel random walks (paper section 6), or replay a "
    "recorded Kernel Tuner cache file (--measure replay:FILE, which defines the space and "
    "the device). Without --measure: cuda when a GPU and pycuda are present, else the "
    "analytic model (estimates), whose winner is then checked by the CPU emulator on a "
    "reduced-size copy of the layer."
)

DEFAULT_DEVICE = "v100"
MEASURES = ("cuda", "emulate", "model", "replay:FILE")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--layer", metavar="SPEC", help=LAYER_HELP)
    what.add_argument("--network", metavar="NAME", help="tune every layer of a network preset")
    parser.add_argument("--device", metavar="PRESET",
                        help=f"device preset (default {DEFAULT_DEVICE}, the paper's GPU)")
    add_algorithm_argument(parser, help="kernel template: direct (default) or Winograd")
    parser.add_argument("--measure", metavar="KIND",
                        help="cuda | emulate | model | replay:FILE (default: cuda if a GPU and "
                             "pycuda are present, else model)")
    parser.add_argument("--strategy", default="explorer",
                        help="explorer (default) | random | grid | ga | sa")
    parser.add_argument("--budget", type=int, default=48, metavar="N",
                        help="unique configurations to measure (default 48)")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    parser.add_argument("--batch-size", type=int, metavar="N",
                        help="configurations per round (default: the strategy's: 4 for explorer, 8 for the others)")
    parser.add_argument("--patience", type=int, metavar="R",
                        help="stop after R rounds without improvement (default: off)")
    parser.add_argument("--log", metavar="FILE", help="write every measurement to this JSON-lines log")
    parser.add_argument("--resume", metavar="FILE",
                        help="continue the run logged in FILE (nothing is measured twice)")
    parser.add_argument("--history", metavar="DB",
                        help="also store the measurements in this SQLite history database")
    parser.add_argument("--export-cache", metavar="FILE",
                        help="write the measurements as a Kernel Tuner cache file (.json[.gz])")
    parser.add_argument("--out-dir", default="iobound-kernels", metavar="DIR",
                        help="where the best kernel's .cu is written (default ./iobound-kernels)")
    parser.add_argument("--no-verify", action="store_true",
                        help="skip the emulator check of the winner")
    add_json_argument(parser)


# -- helpers ------------------------------------------------------------------------

def _fmt_cfg(cfg: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in cfg.items())


def _fmt_ms(rec) -> str:
    if rec.time_ms is not None:
        return f"{rec.time_ms:.4g}{'*' if rec.estimate else ''}"
    s = rec.surrogate_cost
    return f"{s:.6g}w" if s is not None and rec.is_ok else "-"


def _resolve_measure(args) -> tuple[str, str | None, str | None]:
    """(kind, replay file, notice)."""
    if args.measure is None:
        from search.measure.cuda import cuda_available
        if cuda_available():
            return "cuda", None, None
        return "model", None, ("no GPU with pycuda here: measuring with the analytic model "
                               "(estimates); the winner is checked by the CPU emulator")
    kind, _, file = args.measure.partition(":")
    if kind == "replay":
        if not file:
            raise InvalidInputError("--measure replay needs a file: replay:FILE")
        return "replay", file, None
    if kind not in ("cuda", "emulate", "model") or file:
        raise InvalidInputError(f"--measure must be one of {', '.join(MEASURES)}; got {args.measure!r}")
    return kind, None, None


def _this_gpu():
    """(preset of GPU 0, note); the default preset when GPU 0 has none."""
    from iobound.devices import get_device
    from iobound.errors import UnknownPresetError
    from search.measure.cuda import gpu_name

    name = gpu_name()
    try:
        return get_device(name or ""), " (this GPU)"
    except UnknownPresetError:
        return get_device(DEFAULT_DEVICE), f" (no preset for {name}; default limits)"


def _per_layer_path(path: str | None, layer, many: bool) -> str | None:
    if path is None or not many:
        return path
    p = Path(path)
    return str(p.with_name(f"{p.stem}.{layer.name or 'layer'}{p.suffix or '.jsonl'}"))


def _tune_kwargs(args) -> dict:
    from search.strategies import make_options
    opts = {"batch_size": args.batch_size} if args.batch_size is not None else {}
    options = make_options(args.strategy, opts)
    return dict(strategy=args.strategy, budget=args.budget, seed=args.seed, options=options,
                patience=args.patience)


def _check_args(args) -> None:
    """Reject bad numbers, an unknown strategy and an unusable --history before any output."""
    from search.strategies import strategy_class
    strategy_class(args.strategy)  # unknown names -> one-line error
    for flag, value in (("--budget", args.budget), ("--batch-size", args.batch_size),
                        ("--patience", args.patience)):
        if value is not None and value < 1:
            raise InvalidInputError(f"{flag} must be >= 1, got {value}")
    _tune_kwargs(args)
    if args.history:
        import sqlite3

        from search.history import History
        try:
            History(args.history).close()
        except sqlite3.Error as exc:
            raise InvalidInputError(f"--history {args.history}: cannot open the database: {exc}") from exc


def _has_log(path: str) -> bool:
    """Whether ``path`` holds a log (a run killed before writing its header leaves 0 bytes)."""
    p = Path(path)
    return p.is_file() and p.stat().st_size > 0


def _check_log_paths(args, layers) -> None:
    """--log must be new and --resume must exist (per layer for a network; a network
    killed mid-way has no logs for the layers it did not reach, which start afresh)."""
    many = len(layers) > 1
    if args.resume:
        paths = [_per_layer_path(args.resume, l, many) for l in layers]
        if not any(_has_log(p) for p in paths):
            per_layer = f" (one per layer, e.g. {paths[0]!r})" if many else ""
            raise InvalidInputError(f"--resume: no log {args.resume!r}{per_layer}: missing or empty")
    if args.log and args.log != args.resume:
        for layer in layers:
            p = _per_layer_path(args.log, layer, many)
            if _has_log(p):
                raise InvalidInputError(f"--log {p!r} exists; pass it as --resume to continue that run")


def _progress(args, label: str, budget: int, unit: str = "ms"):
    if args.json:
        return None
    from search.progress import ProgressBar
    return ProgressBar(budget, label=label, unit=unit)


def _run_tune(args, space, measurer, label, log_path, resume_path, header):
    from search.tuner import tune
    if resume_path is not None and not _has_log(resume_path):
        # a network run killed before this layer: nothing to resume, start its log afresh
        log_path, resume_path = log_path or resume_path, None
    unit = "words" if measurer.name == "emulate" else "ms"
    bar = _progress(args, label, args.budget, unit)
    try:
        return tune(space, measurer, log=log_path, resume=resume_path, progress=bar,
                    header=header, **_tune_kwargs(args))
    finally:
        if bar is not None:
            bar.close()


def _store(args, result, space, layer_key: str, device: str, measurer) -> dict:
    out = {}
    if args.history:
        from search.history import History, HistoryKey
        key = HistoryKey(layer=layer_key, device=device, toolchain=measurer.toolchain())
        with History(args.history) as h:
            h.add(key, [t.record for t in result.trials], run=f"{result.strategy}:seed{result.seed}")
            best = h.best(key)
        out["history"] = {"db": args.history, "key": key.__dict__,
                          "best_ever_ms": best.time_ms if best else None}
    return out


def _export(args, result, space, path, **meta) -> None:
    from search.kt_cache import records_to_cache, write_cache
    tune_params = {p: space.values(p) for p in space.params}
    write_cache(path, records_to_cache([t.record for t in result.trials], tune_params, **meta))


def _summary_rows(result, k: int = 5) -> list:
    order = {id(t): k for k, t in enumerate(result.trials)}
    ranked = sorted(result.trials, key=lambda t: (t.record.cost, order[id(t)]))
    return ranked[:k]


def _print_table(result) -> None:
    print(f"  {'rank':>4}  {'cost':>10}  {'status':<13}  config")
    for r, t in enumerate(_summary_rows(result), 1):
        print(f"  {r:>4}  {_fmt_ms(t.record):>10}  {t.record.status.value:<13}  {_fmt_cfg(t.config)}")
    if any(t.record.estimate for t in result.trials):
        print("        (* analytic estimate, not a measurement)")
    counts = ", ".join(f"{s} {n}" for s, n in sorted(result.status_counts().items()))
    print(f"  evaluations {result.evaluations} ({counts}) in {result.rounds} rounds; "
          f"stopped: {result.stop_reason}; strategy {result.strategy_seconds:.2f} s, "
          f"measure {result.measure_seconds:.2f} s"
          + (f"; {result.resumed} resumed from the log" if result.resumed else ""))


# -- replay -------------------------------------------------------------------------

def _run_replay(args, file: str) -> int:
    from search.measure.replay import ReplayMeasurer
    from search.replay_space import ReplaySpace

    if args.layer or args.network or args.device:
        raise InvalidInputError("--measure replay:FILE defines the space and the device; "
                         "do not give --layer/--network/--device")
    _check_log_paths(args, [None])
    space = ReplaySpace(file)
    measurer = ReplayMeasurer(space.cache)
    desc = space.describe()
    header = {"replay": file, "device": space.cache.device_name}
    if not args.json:
        print(f"iobound tune: replaying {file}")
        print(f"  device {space.cache.device_name} (from the file), kernel {space.cache.kernel_name}, "
              f"{len(space):,} recorded configurations ({', '.join(f'{k} {v}' for k, v in sorted(desc['statuses'].items()))})")
        print(f"  strategy {args.strategy}, budget {args.budget}, seed {args.seed}")
    t0 = time.perf_counter()
    result = _run_tune(args, space, measurer, "tune", args.log, args.resume, header)
    elapsed = time.perf_counter() - t0
    ok_times = [e["time"] for e in space.cache.entries if not isinstance(e.get("time"), str)]
    optimum = min(ok_times) if ok_times else None
    extra = _store(args, result, space, f"replay:{space.cache.kernel_name}:"
                   f"{space.cache.problem_size}", space.cache.device_name, measurer)
    if args.export_cache:
        _export(args, result, space, args.export_cache, device_name=space.cache.device_name,
                kernel_name=space.cache.kernel_name, problem_size=space.cache.problem_size)
    if args.json:
        out = result.to_dict()
        out.update(device=space.cache.device_name, replay_file=file, recorded_optimum_ms=optimum,
                   seconds=round(elapsed, 3), **extra)
        print(json.dumps(out))
        return 0 if result.best else 1
    _print_table(result)
    if result.best is None:
        print("no configuration ran successfully")
        return 1
    b = result.best.record
    print(f"best config: {_fmt_cfg(result.best.config)}")
    print(f"best time: {b.time_ms:.4f} ms (replayed measurement)")
    if optimum:
        print(f"recorded optimum of the space: {optimum:.4f} ms "
              f"(best found is {optimum / b.time_ms:.1%} of optimal speed)")
    print(f"took {elapsed:.1f} s")
    return 0


# -- our kernels ----------------------------------------------------------------------

def _make_measurer(kind: str, layer, device, algorithm: str):
    from search.measure import make_measurer
    if kind == "model":
        return make_measurer("model", layer, device, algorithm)
    if kind == "cuda":
        return make_measurer("cuda", layer, algorithm)
    return make_measurer("emulate", layer, algorithm)


def _tune_layer(args, layer, device, kind, many: bool) -> dict:
    from search.conv_space import ConvSpace
    from search.winner import bound_info, emulator_check, write_kernel

    space = ConvSpace(layer, device, args.algorithm)
    measurer = _make_measurer(kind, layer, device, args.algorithm)
    header = {"layer": layer.to_dict(), "layer_name": layer.name, "device": device.name,
              "algorithm": args.algorithm}
    if not args.json:
        print(f"iobound tune: {layer.name or 'layer'}  {layer.short()}")
        print(f"  space: {args.algorithm}, {len(space):,} configurations (Table 1 pruned; "
              f"{space.unpruned_size:,} unpruned)")
    t0 = time.perf_counter()
    result = _run_tune(args, space, measurer, layer.name or "tune",
                       _per_layer_path(args.log, layer, many),
                       _per_layer_path(args.resume, layer, many), header)
    elapsed = time.perf_counter() - t0
    out = {"layer": layer.name, "layer_shape": layer.short(), "device": device.name,
           "algorithm": args.algorithm, "space_size": len(space),
           "unpruned_size": space.unpruned_size, "result": result, "seconds": elapsed}
    out.update(_store(args, result, space, json.dumps(layer.to_dict(), sort_keys=True),
                      device.name, measurer))
    if args.export_cache:
        _export(args, result, space, _per_layer_path(args.export_cache, layer, many),
                device_name=device.name, kernel_name=f"iobound_{args.algorithm}",
                problem_size=layer.to_dict())
    if result.best is not None:
        cfg = result.best.config
        out["bound"] = bound_info(layer, cfg, args.algorithm)
        out["kernel_path"] = write_kernel(layer, cfg, args.algorithm, args.out_dir)
        if not args.no_verify and kind != "emulate":
            out["emulator_check"] = emulator_check(layer, cfg, args.algorithm)
    return out


def _print_layer(out: dict) -> None:
    result = out["result"]
    _print_table(result)
    if result.best is None:
        print("  no configuration ran successfully")
        return
    rec = result.best.record
    print(f"best config: {_fmt_cfg(result.best.config)}")
    if rec.time_ms is not None:
        label = "estimate (analytic model, not measured)" if rec.estimate else "measured median"
        print(f"{'estimated time' if rec.estimate else 'time'}: {rec.time_ms:.4f} ms  [{label}]")
    else:
        print(f"emulated traffic: {rec.extra.get('traffic_words')} words  [emulator: no time]")
    b = out["bound"]
    print(f"I/O: this dataflow moves {b['dataflow_io_words']:,} words; lower bound "
          f"{b['lower_bound_words']:,.0f} words ({b['method']}, S = {b['fast_memory_words']:,} "
          f"on-chip words) -> {b['ratio_to_bound']:.2f}x the bound")
    print(f"kernel: {out['kernel_path']}")
    chk = out.get("emulator_check")
    if chk is not None:
        if chk["checked"]:
            verdict = "matches numpy" if chk["matches_numpy"] else "DIFFERS from numpy"
            traffic = "=" if chk["traffic_matches"] else "!="
            print(f"emulator check on a reduced copy ({chk['layer']}): {verdict} "
                  f"(max rel err {chk['max_rel_err']:.2g}); traffic {chk['traffic_words']:,} "
                  f"words {traffic} formula {chk['formula_words']:,}")
        else:
            print(f"emulator check skipped: {chk['reason']}")
    if "history" in out:
        h = out["history"]
        print(f"history: stored in {h['db']}; best ever for this key "
              f"{h['best_ever_ms'] if h['best_ever_ms'] is None else round(h['best_ever_ms'], 5)} ms")
    print(f"took {out['seconds']:.1f} s")


def _json_layer(out: dict) -> dict:
    d = out["result"].to_dict()
    d.update({k: v for k, v in out.items() if k != "result"})
    d["seconds"] = round(d["seconds"], 3)
    return d


def run(args: argparse.Namespace) -> int:
    kind, file, notice = _resolve_measure(args)
    _check_args(args)
    if kind == "replay":
        return _run_replay(args, file)
    from iobound.devices import get_device
    from iobound.layer_spec import parse_layer_spec
    from iobound.networks import network_layers

    if not args.layer and not args.network:
        raise InvalidInputError("give --layer SPEC or --network NAME (or --measure replay:FILE)")
    dev_note = ""
    if args.device:
        device = get_device(args.device)
    elif kind == "cuda":
        device, dev_note = _this_gpu()
    else:
        device, dev_note = get_device(DEFAULT_DEVICE), " (default; --device to change)"
    layers = network_layers(args.network) if args.network else [parse_layer_spec(args.layer)]
    if args.algorithm == "winograd":
        skipped = [l for l in layers if not l.winograd_applicable]
        layers = [l for l in layers if l.winograd_applicable]
        if not layers:
            raise InvalidInputError("Winograd does not apply to " + ", ".join(l.name for l in skipped))
    _check_log_paths(args, layers)
    if notice and not args.json:
        sys.stdout.flush()
        print(f"notice: {notice}", file=sys.stderr, flush=True)
    if not args.json:
        print(f"device {device.name}{dev_note}; measure {kind}; strategy {args.strategy}; "
              f"budget {args.budget}; seed {args.seed}")
    outs = []
    for layer in layers:
        out = _tune_layer(args, layer, device, kind, many=len(layers) > 1)
        outs.append(out)
        if not args.json:
            _print_layer(out)
            if len(layers) > 1:
                print()
    if args.json:
        payload = _json_layer(outs[0]) if len(outs) == 1 else {
            "network": args.network, "strategy": args.strategy,
            "evaluations": sum(o["result"].evaluations for o in outs),
            "layers": [_json_layer(o) for o in outs]}
        payload["measure"] = kind
        if notice:
            payload["notice"] = notice
        print(json.dumps(payload, default=str))
    elif len(outs) > 1:
        print(f"{'layer':<22} {'best':>10} {'evals':>5} {'io/bound':>8}  kernel")
        for o in outs:
            r = o["result"]
            best = _fmt_ms(r.best.record) if r.best else "-"
            ratio = f"{o['bound']['ratio_to_bound']:.2f}" if "bound" in o else "-"
            print(f"{o['layer']:<22} {best:>10} {r.evaluations:>5} {ratio:>8}  {o.get('kernel_path', '-')}")
    return 0 if all(o["result"].best is not None for o in outs) else 1
