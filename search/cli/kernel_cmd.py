"""``iobound kernel``: generate one CUDA kernel, optionally compile it and emulate it.

Examples
--------
>>> from search.cli.main import main
>>> main(["kernel", "--layer", "cin=2,hin=6,cout=2,kh=3,pad=1",
...       "--config", "x=3,y=3,z=2,alpha=1,tx=3,ty=3,tz=1", "--emulate", "--json"])  # doctest: +ELLIPSIS
{"layer": {...}, "algorithm": "direct", ..."emulate": {"ok": true, ...}}
0
"""

from __future__ import annotations

import argparse
import json

from iobound import limits
from iobound.errors import InvalidInputError
from kernels.status import Status
from search.cli.common import (
    add_algorithm_argument, add_json_argument, add_layer_argument, check_distinct_files,
    check_output_file, int_option, json_safe, ms_text, nonempty, resolve_layer,
)
from search.outputs import check_not_tuning_data

#: The device a kernel is made for when none is named: the A100 (sm_80), since CUDA 13's
#: nvcc no longer targets the V100 (sm_70) that the other commands default to.
DEFAULT_KERNEL_DEVICE = "a100"

HELP = "generate a CUDA kernel for a layer and config; compile it (nvcc) and emulate it (CPU)"
DESCRIPTION = (
    "Generate the CUDA C source of the direct or Winograd dataflow kernel for one layer and "
    "one configuration (tiles x,y,z, channel chunk alpha or Winograd e, threads tx,ty,tz). "
    "--compile builds it for --arch with nvcc (for an arch the installed nvcc no longer "
    "targets, sm_70 under CUDA 13: NVRTC and ptxas of the volta extra) and reports "
    "ptxas' registers, shared memory and spills; "
    "--emulate runs the same source on the CPU emulator and checks the output against "
    "numpy, the counted global loads/stores against the dataflow's exact I/O formula, the "
    "counted operations against the model's flops, and the total against the best I/O "
    "lower bound at S = the on-chip words the kernel uses + 2 "
    "(blocks share nothing on chip; JSON: onchip_words, lower_bound_fast_memory_words). "
    "Without tx,ty,tz the thread block is chosen from the tiles, greedily along x, then y, "
    "then z (tx the largest divisor of x -- x/e for Winograd -- of at most 256, ty the "
    "largest divisor of y -- y/e -- that keeps tx*ty within 256, then tz of z, keeping "
    "tx*ty*tz within 256 and at most 64 (CUDA's limit on blockDim.z); not always "
    "the block with the most threads) and printed. "
    "--from-history DB takes the configuration a tuning database holds as the fastest for "
    "the layer on --device (without --device: the one device it holds the layer on) "
    "instead of --config. "
    "Exit 0 when everything asked for succeeded, 1 when a compile or check failed or the "
    "system refused to write the source (a full disk), 2 for bad input (including a config "
    "that cannot run, with the reasons) or a toolchain that cannot be used."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``iobound kernel``'s options to ``parser`` (:func:`search.cli.main.build_parser`).

    Run by the README's `iobound kernel` examples (tests/test_readme_examples.py).
    """
    add_layer_argument(parser)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--config", metavar="K=V,...",
                       help="direct: x,y,z,alpha[,tx,ty,tz]; winograd: e,x,y,z[,tx,ty,tz] "
                            "(no threads: a default block from the tiles, printed)")
    which.add_argument("--from-history", metavar="DB",
                       help="the configuration a tuning database (iobound tune --history DB) "
                            "holds as the fastest for this layer on --device (of --algorithm "
                            "when given): the fastest measured, an estimate only when nothing "
                            "was measured")
    add_algorithm_argument(
        parser, default=None,
        help="kernel family (default: winograd when the config has e, else direct)")
    parser.add_argument("--device", default=None, metavar="PRESET", type=nonempty("device name"),
                        help=f"device preset whose limits the config must respect (default "
                             f"{DEFAULT_KERNEL_DEVICE}; with --from-history, the device the "
                             f"database holds the layer on when it holds it on one)")
    parser.add_argument("--emit", metavar="FILE.cu",
                        help="write the source here (default: a file in the cache folder)")
    parser.add_argument("--compile", action="store_true", help="compile with nvcc to a cubin")
    parser.add_argument("--arch", default=None,
                        help="nvcc target for --compile (default: the device's, sm_80 for a100; "
                             "refused without --compile)")
    parser.add_argument("--emulate", action="store_true",
                        help="run on the CPU emulator and check numerics, traffic, flops and bound")
    parser.add_argument("--seed", type=int_option("--seed", limits.SEED), default=None,
                        help="random data seed for --emulate (default 0; refused without "
                             "--emulate)")
    add_json_argument(parser)


def _config(args):
    """The config, and its thread block when it was chosen by default (else None)."""
    from kernels.config import parse_config, parse_config_items
    from kernels.thread_block import THREAD_KEYS

    defaulted = not any(k in parse_config_items(args.config) for k in THREAD_KEYS)
    config = parse_config(args.config, args.algorithm, default_threads=True)
    return config, ({k: getattr(config, k) for k in THREAD_KEYS} if defaulted else None)


def _history_config(args, layer):
    """(config, None, :class:`~search.db.queries.LayerBest`) of ``--from-history``: the
    database's fastest configuration of ``layer`` on ``--device``; bad input (one line)
    when the file is no tuning database or holds no timed record of the layer there."""
    import sqlite3

    from iobound.devices import get_device
    from kernels.config import config_from_dict
    from search.db.opening import open_database
    from search.db.queries import best_for_layer

    path = args.from_history
    try:
        with open_database(path, "--from-history", readonly=True) as db:
            if args.device is None:
                args.device = _device_of_layer(args, db, layer)
            device = get_device(args.device).name
            # under every name the database holds of the device: the preset's, and a
            # file's own ("Tesla V100-SXM2-16GB" from a Kernel Tuner cache)
            best = best_for_layer(db, layer, device, args.algorithm)
            elsewhere = [] if best else [d for d in db.devices() if best_for_layer(
                db, layer, d, args.algorithm)]
    except sqlite3.Error as exc:  # damage found while reading
        raise InvalidInputError(f"--from-history {path}: {' '.join(str(exc).split())}") from None
    if best is None:
        what = f"{args.algorithm} " if args.algorithm else ""
        raise InvalidInputError(
            f"--from-history {path}: no timed {what}record of {layer.short()} on {device}"
            + (f"; it holds the layer on {', '.join(elsewhere)} (--device)" if elsewhere else ""))
    stored = best.measurement.record.config
    try:
        return config_from_dict(stored), None, best
    except InvalidInputError as exc:
        raise _not_runnable(path, layer, device, stored, str(exc)) from None


def _device_of_layer(args, db, layer) -> str:
    """The device ``--from-history`` builds for when ``--device`` is not given: the one
    device (under any of its names) the database holds timed records of ``layer`` on; bad
    input when it holds none, naming them when several."""
    from search.db.device_names import same_device
    from search.db.queries import best_for_layer
    held = sorted(d for d in db.devices() if best_for_layer(db, layer, d, args.algorithm))
    if not held:
        what = f"{args.algorithm} " if args.algorithm else ""
        raise InvalidInputError(f"--from-history {args.from_history}: no timed {what}record "
                                f"of {layer.short()} on any device")
    if not all(same_device(held[0], d) for d in held[1:]):
        raise InvalidInputError(f"--from-history {args.from_history}: it holds {layer.short()} "
                                f"on {', '.join(held)}; choose one with --device")
    return held[0]


def _not_runnable(path, layer, device, config, why: str) -> InvalidInputError:
    """The error for a stored best configuration that is no kernel config of the layer (a
    damaged or hand-made database: imports check what they store)."""
    return InvalidInputError(f"--from-history {path}: the best record of {layer.short()} on "
                             f"{device} holds {json.dumps(config)[:120]}, no valid kernel "
                             f"config: {why}")


def _write_source(path, code: str) -> None:
    """Write the kernel source; a failure (the path was checked writable: a full disk, a
    file-size limit) is an OutputWriteError naming it (exit 1)."""
    from search.outputs import write_atomic
    try:
        write_atomic(path, code.encode())
    except OSError as exc:
        from search.session.files import OutputWriteError
        raise OutputWriteError(f"cannot write the kernel source to {str(path)!r}: "
                               f"{exc.strerror or exc}") from None


def _check_options(args: argparse.Namespace) -> None:
    """Bad options refused before anything is written: those of a step not asked for
    (they would be dropped; README, "Options that would be ignored"), a malformed
    ``--arch``, an ``--emit`` path that cannot be written."""
    if args.arch is not None and not args.compile:
        raise InvalidInputError("--arch is the nvcc target of --compile; give --compile")
    if args.seed is not None and not args.emulate:
        raise InvalidInputError("--seed is the data seed of --emulate; give --emulate")
    if args.arch is not None:
        from kernels.nvcc import check_arch
        check_arch(args.arch)
    if args.emit is not None:
        check_output_file("--emit", args.emit)
        check_distinct_files([("--from-history", args.from_history), ("--emit", args.emit)])
        check_not_tuning_data("--emit", args.emit)


def run(args: argparse.Namespace) -> int:
    """Run ``iobound kernel`` with the parsed ``args``; the exit code (bad input raises,
    and :func:`search.cli.main.main` makes it one line and exit 2).

    Run by the README's `iobound kernel` examples (tests/test_readme_examples.py).
    """
    from kernels.cache import cache_dir, content_key
    from kernels.config import check_config
    from kernels.generate import generate
    from kernels.source import InvalidConfigError

    _check_options(args)
    layer = resolve_layer(args)
    stored = None
    if args.from_history is not None:  # sets --device when it was not given
        config, default_threads, stored = _history_config(args, layer)
    else:
        args.device = DEFAULT_KERNEL_DEVICE if args.device is None else args.device
        config, default_threads = _config(args)
    reasons = check_config(layer, config, args.device)
    if reasons and stored is not None:
        raise _not_runnable(args.from_history, layer, stored.measurement.device,
                            stored.measurement.record.config, "; ".join(reasons))
    if reasons:
        raise InvalidConfigError(reasons)
    source = generate(layer, config, args.device)
    if args.emulate:  # what the emulator would refuse, refused before --emit is written
        from kernels.emulator import check_emulable
        check_emulable(source)
    path = args.emit or cache_dir("src") / f"{content_key(source.code)[:16]}.cu"
    _write_source(path, source.code)
    result = {"layer": layer.to_dict(), "algorithm": config.algorithm, "config": config.to_dict(),
              "source_path": str(path), "grid": list(source.grid), "block": list(source.block),
              "shared_bytes": source.shared_bytes, "default_threads": default_threads,
              "compile": None, "emulate": None}
    if stored is not None:
        m = stored.measurement
        result["from_history"] = {"db": args.from_history, "device": m.device,
                                  "toolchain": m.toolchain, "time_ms": m.time_ms,
                                  "estimate": m.record.estimate, "records": stored.records,
                                  "measured": stored.measured}
    failed = False
    if args.compile:
        from iobound.devices import get_device
        from kernels.nvcc import compile_cubin
        built = compile_cubin(source, get_device(args.device).arch if args.arch is None else args.arch)
        result["compile"] = {k: built.to_dict()[k] for k in (
            "status", "arch", "registers", "shared_bytes", "spill_stores", "spill_loads",
            "cubin_path", "seconds", "cached", "toolchain")}
        if not built.ok:
            result["compile"]["log"] = built.log
            failed = True
    if args.emulate:
        result["emulate"] = _emulate(layer, config, 0 if args.seed is None else args.seed)
        failed = failed or not result["emulate"]["ok"]
    if args.json:
        print(json.dumps(json_safe(result), allow_nan=False))
    else:
        _print(result, layer)
    return 1 if failed else 0


def _emulate(layer, config, seed: int) -> dict:
    """The emulation record; a kernel g++ rejects or that faults is ``ok: false`` with the error."""
    import dataclasses

    from kernels import emulator
    from kernels.emulator import EmulatorBuildError, EmulatorRunError
    from kernels.verify import EmulationCheck, emulate_and_check

    try:
        return emulate_and_check(layer, config, seed=seed,
                                 timeout=emulator.LAUNCH_TIMEOUT_S).to_dict()
    except (EmulatorBuildError, EmulatorRunError) as exc:
        keys = [f.name for f in dataclasses.fields(EmulationCheck)]  # the same keys, all None
        record = {**dict.fromkeys(keys), "ok": False, "error": str(exc)}
        if isinstance(exc, EmulatorBuildError):
            record["log"] = exc.log
        return record


def _print(res: dict, layer) -> None:
    print(f"layer    {layer.name or '(custom)'}: {layer.short()}")
    h = res.get("from_history")
    if h is not None:
        print(f"history  the fastest of {h['records']} timed records ({h['measured']} measured) "
              f"on {h['device']} in {h['db']}: {ms_text(h['time_ms'])} ms by {h['toolchain']}")
    print(f"kernel   {res['algorithm']} {res['config']}")
    if res["default_threads"] is not None:
        chosen = " ".join(f"{k}={v}" for k, v in res["default_threads"].items())
        print(f"threads  {chosen} (default: no tx,ty,tz given; chosen from the tiles)")
    print(f"launch   grid {tuple(res['grid'])}, block {tuple(res['block'])}, "
          f"{res['shared_bytes']} B shared")
    print(f"source   {res['source_path']}")
    c = res["compile"]
    if c is not None:
        if c["status"] == Status.OK.value:
            print(f"compile  ok ({c['arch']}, CUDA {c['toolchain']}): {c['registers']} registers, "
                  f"{c['shared_bytes']} B smem, spills {c['spill_stores']} B stores / "
                  f"{c['spill_loads']} B loads{' (cached)' if c['cached'] else ''}")
        else:
            print(f"compile  {c['status']} ({c['arch']}):")
            for line in c.get("log", "").strip().splitlines()[:20]:
                print(f"  {line}")
    e = res["emulate"]
    if e is not None and "error" in e:
        print(f"emulate  FAILED: {e['error']}")
        for line in e.get("log", "").strip().splitlines()[:20]:
            print(f"  {line}")
    elif e is not None:
        print(f"emulate  {'ok' if e['ok'] else 'FAILED'}: max abs err {e['max_abs_err']:.3g}, "
              f"max rel err {e['max_rel_err']:.3g} (error/tolerance {e['worst_ratio']:.3g})")
        print(f"traffic  loads {e['global_loads']:,} (formula {e['expected_loads']:,}), stores "
              f"{e['global_stores']:,} (formula {e['expected_stores']:,}): "
              f"{'match' if e['traffic_matches'] else 'MISMATCH'}")
        print(f"flops    executed {e['flops']:,} (model {e['expected_flops']:,}): "
              f"{'match' if e['flops_matches'] else 'MISMATCH'}")
        if e["lower_bound"] is not None:
            total = e["global_loads"] + e["global_stores"]
            # a bound of 0 (every output in the padding: no I/O is compulsory) has no ratio
            ratio = f"{total / e['lower_bound']:.2f}x" if e["lower_bound"] > 0 else "no ratio (bound 0)"
            print(f"bound    {total:,} words vs lower bound {e['lower_bound']:,.0f} at "
                  f"S = {e['lower_bound_fast_memory_words']} words (a block's "
                  f"{e['onchip_words']} on-chip + 2): {ratio}")
