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
import contextlib
import json
import sys

from iobound.errors import InvalidInputError
from search.interrupts import Interrupted
from search.measure import KERNEL_MEASURES
from search.tune_args import DEFAULT_BUDGET

from .common import LAYER_HELP, add_algorithm_argument, ascii_int, add_json_argument, nonempty, print_notice
from .executor_args import add_executor_arguments, resolve_executor_options
from .resume_args import fill_from_log
from .measure_args import DEFAULT_DEVICE, device_for as _device, resolve_measure as _resolve_measure
from .tune_print import print_choice, print_replay, printer
from .zero_shot_args import (add_zero_shot_arguments, check_zero_shot_resume, resolve_zero_shot,
                             zero_shot_options)

#: --out-dir when not given (a replay, which writes no kernel, refuses a given one): the
#: session's ``search.session.plan.DEFAULT_OUT_DIR``, spelt here so that building the parser
#: imports no session module (tests/search/test_cli_tune_options.py holds them equal).
DEFAULT_OUT_DIR = "iobound-kernels"

HELP = "auto-tune kernel configurations (cost model + random-walk explorer)"
DESCRIPTION = (
    "Search the tile/thread configurations of our direct (or Winograd) kernel for a layer "
    "with an XGBoost cost model and parallel random walks (paper section 6), or replay a "
    "recorded Kernel Tuner cache or T4 results file (--measure replay:FILE, which defines "
    "the space and the device). Without --measure: cuda when a GPU and pycuda are present, "
    "else the analytic model (estimates), whose winner is then checked by the CPU emulator "
    "on a reduced-size copy of the layer."
)

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``iobound tune``'s options to ``parser`` (:func:`search.cli.main.build_parser`).

    Run by the README's `iobound tune` examples (tests/test_readme_examples.py).
    """
    _add_target_arguments(parser)
    _add_search_arguments(parser)
    _add_run_file_arguments(parser)
    add_zero_shot_arguments(parser)
    _add_output_arguments(parser)
    parser.add_argument("--tune-repeats", action="store_true",
                        help="with --network: tune every layer, also one whose shape an earlier "
                             "layer has (by default it takes that layer's result and kernel, "
                             "measuring nothing)")
    parser.add_argument("--no-verify", action="store_true",
                        help="skip the emulator check of the winner (not with --measure "
                             "replay:FILE, which checks none)")
    add_executor_arguments(parser)
    add_json_argument(parser)


def _add_target_arguments(parser: argparse.ArgumentParser) -> None:
    """What is tuned, for which device, and how it is measured."""
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--layer", metavar="SPEC", help=LAYER_HELP)
    what.add_argument("--network", metavar="NAME", help="tune every layer of a network preset")
    parser.add_argument("--device", metavar="PRESET", type=nonempty("device name"),
                        help=f"device preset (default: with --measure cuda the GPU's own "
                             f"preset, or for a GPU without one its own name and the limits "
                             f"its driver gives; else {DEFAULT_DEVICE}, the paper's GPU)")
    add_algorithm_argument(parser, default=None, extra=("all",),
                           help="kernel template: direct (default), winograd, or all: each "
                                "layer with every template that computes it (Winograd only "
                                "on a dense, square, stride-1, undilated kernel larger than "
                                "1x1, as select), each tuned with "
                                "the whole --budget, and the fastest kept (its own log, "
                                "resume and export files: run.<layer>.<algorithm>.jsonl)")
    parser.add_argument("--measure", metavar="KIND",
                        help="cuda | emulate | model | replay:FILE (default: cuda if a GPU and "
                             "pycuda are present, else model)")


def _add_search_arguments(parser: argparse.ArgumentParser) -> None:
    """The strategy and what bounds its search."""
    parser.add_argument("--strategy",
                        help="explorer (default) | random | grid | ga | sa | gga (history-guided "
                             "GA; plain ga, with a notice, without history records of this "
                             "space) | zero_shot (see --zero-shot)")
    parser.add_argument("--budget", type=ascii_int, metavar="N",
                        help=f"unique configurations to measure (default {DEFAULT_BUDGET})")
    parser.add_argument("--seed", type=ascii_int, metavar="S",
                        help="random seed (default 0, or with --resume alone the log's)")
    parser.add_argument("--batch-size", type=ascii_int, metavar="N",
                        help="configurations per round (default: the strategy's: 4 for explorer, 8 for the others)")
    parser.add_argument("--patience", type=ascii_int, metavar="R",
                        help="stop after R rounds without improvement (default: off)")


def _add_run_file_arguments(parser: argparse.ArgumentParser) -> None:
    """The run's log, its resume, and the tuning database it reads and writes."""
    parser.add_argument("--log", metavar="FILE",
                        help="write every measurement to this JSON-lines log (with --network "
                             "or --algorithm all, one per layer and algorithm: FILE's name "
                             "with .<layer>[.<algorithm>] before its ending)")
    parser.add_argument("--resume", metavar="FILE", type=nonempty("path"),
                        help="continue the run logged in FILE (nothing is measured twice; "
                             "or a network run's --log name, whose logs are named as --log "
                             "says); "
                             "without --layer, --network and --measure, the run's layer or "
                             "network, device, measurer, strategy, budget, seed and history "
                             "are its log's")
    parser.add_argument("--history", metavar="DB",
                        help="tuning database: the run's measurements are stored in it, and "
                             "explorer / sa / ga / gga / zero_shot learn from its timed records "
                             "of this parameter space: every device and problem, earlier runs "
                             "of this layer on this device included (they make the next run "
                             "short), not those of the log --resume continues nor estimates of "
                             "another analytic model version or of a workload measured for "
                             "real on the device; with --network "
                             "each layer also from the layers stored before it")
    parser.add_argument("--reuse", action="store_true",
                        help="with --history: configurations of this layer (or recorded space) "
                             "measured before on this device with this toolchain are taken "
                             "from the database instead of measured again; each counts toward "
                             "the budget when the search asks for it, as a Kernel Tuner cache "
                             "hit does")


def _add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """What a run writes besides its report: the cache, the kernel, the network table."""
    parser.add_argument("--export-cache", metavar="FILE",
                        help="write the measurements as a Kernel Tuner cache file (gzipped "
                             "when FILE ends in .gz, else plain JSON; per layer and algorithm "
                             "named as --log's)")
    parser.add_argument("--out-dir", default=None, metavar="DIR",
                        help=f"where the best kernel's .cu is written (default ./{DEFAULT_OUT_DIR}; "
                             "not with --measure replay:FILE, which writes none)")
    parser.add_argument("--network-json", metavar="FILE",
                        help="with --network: write the network table (per layer: best time, "
                             "lower bound, ratio, kernel, log) as JSON to FILE")


# -- arguments -> settings ----------------------------------------------------------

def _settings(args, kind: str):
    """The session's settings; bad numbers and an unknown strategy or option in one line."""
    from search.session import TuneSettings
    from search.strategies import strategy_class
    if args.strategy is not None:
        strategy_class(args.strategy)  # unknown names -> one-line error
    for flag, value in (("--budget", args.budget), ("--batch-size", args.batch_size),
                        ("--patience", args.patience)):
        if value is not None and value < 1:
            raise InvalidInputError(f"{flag} must be >= 1, got {value}")
    if args.tune_repeats and args.network is None:
        raise InvalidInputError("--tune-repeats needs --network NAME (the layers of one run that "
                                "share a shape)")
    if getattr(args, "parallel_layers", None) is not None and args.network is None:
        raise InvalidInputError("--parallel-layers needs --network NAME (the layers tuned at once)")
    options = {"batch_size": args.batch_size} if args.batch_size is not None else None
    resolve_zero_shot(args)  # and the --strategy / --budget defaults
    options = zero_shot_options(args, options)
    executor = resolve_executor_options(args, "local" if kind in KERNEL_MEASURES else None)
    return TuneSettings(strategy=args.strategy, budget=args.budget, seed=args.seed,
                        options=options, patience=args.patience, log=args.log, resume=args.resume,
                        history=args.history, reuse=args.reuse,
                        export_cache=args.export_cache, executor=executor,
                        tune_repeats=args.tune_repeats)


def _layers(args):
    """The layers of ``--layer`` or ``--network`` that the algorithm computes (for Winograd:
    stride 1, square, ungrouped; for ``all``: any of them), and ``[{"layer", "reason"}]``
    of the network's others."""
    from iobound.algorithms import ALGORITHMS, get_algorithm
    from kernels.families import kernel_family
    from iobound.layer_spec import parse_layer_spec
    from iobound.networks import network_layers

    if args.layer is None and args.network is None:  # one given empty is its own error
        raise InvalidInputError("give --layer SPEC or --network NAME (or --measure replay:FILE)")
    layers = network_layers(args.network) if args.network is not None else [parse_layer_spec(args.layer)]
    names = ALGORITHMS if args.algorithm == "all" else (args.algorithm,)
    kernels = [kernel_family(get_algorithm(name)) for name in names]

    def problem(layer):  # None: a kernel computes it; else the first kernel's reason
        reasons = [k.problem(layer) for k in kernels]
        return None if None in reasons else reasons[0]

    skipped = [l for l in layers if problem(l) is not None]
    layers = [l for l in layers if problem(l) is None]
    if not layers and len(skipped) == 1:
        raise InvalidInputError(problem(skipped[0]))
    if not layers:
        raise InvalidInputError(f"{kernels[0].name.capitalize()} does not apply to "
                                + ", ".join(l.name for l in skipped))
    return layers, [{"layer": l.name, "reason": problem(l)} for l in skipped]


# -- run --------------------------------------------------------------------------------

def _run_replay(args, file: str, settings, notice: str | None = None) -> int:
    from search.session import tune_replay
    if any(v is not None for v in (args.layer, args.network, args.device, args.algorithm)):
        raise InvalidInputError("--measure replay:FILE defines the space and the device; "
                                "do not give --layer/--network/--device/--algorithm")
    # no kernel is written or checked, no network table: these would be dropped; the
    # message gives the reason of each flag given (--no-verify: there is nothing to verify)
    reasons = {"--out-dir": "writes no kernel", "--no-verify": "verifies nothing (it runs no kernel)",
               "--network-json": "writes no network table"}
    given = [flag for flag, value in (("--out-dir", args.out_dir), ("--no-verify", args.no_verify),
                                      ("--network-json", args.network_json)) if value]
    if given or args.out_dir is not None:
        given = given or ["--out-dir"]
        raise InvalidInputError(f"--measure replay:FILE {' and '.join(reasons[f] for f in given)}; "
                                f"do not give {'/'.join(given)}")
    check_zero_shot_resume(args, [settings.resume])
    if settings.resume is not None:
        from search.log_writer import check_not_written
        check_not_written(settings.resume)  # before the notice: bad input is its one line
    _check_executor(settings)
    if notice and not args.json:
        print_notice(notice)
    rep = tune_replay(file, settings, observer=None if args.json else printer(args))
    if args.json:
        payload = rep.to_dict()
        if notice:
            payload["notice"] = notice
        print(json.dumps(payload))
        return 0 if rep.result.best else 1
    return print_replay(rep)


def _check_executor(settings) -> None:
    """Ray missing or its ``--ray-address`` not answering, refused before a notice prints
    (the run's own connect would refuse it after)."""
    if settings.executor is not None and settings.executor.executor == "ray":
        from search.executors.ray_cluster import check_cluster
        check_cluster(settings.executor)


def run(args: argparse.Namespace) -> int:
    """Run ``iobound tune`` with the parsed ``args``; the exit code (bad input raises,
    and :func:`search.cli.main.main` makes it one line and exit 2).

    Run by the README's `iobound tune` examples (tests/test_readme_examples.py).
    """
    resumed = fill_from_log(args)  # --resume FILE alone: the run's own command
    kind, file, notice = _resolve_measure(args)
    notice = "; ".join(filter(None, (resumed, notice))) or None
    settings = _settings(args, kind)
    if kind == "replay":
        return _run_replay(args, file, settings, notice)
    args.algorithm = args.algorithm or "direct"
    args.out_dir = DEFAULT_OUT_DIR if args.out_dir is None else args.out_dir
    from search.session import plan_layers, run_layers
    from search.session.plan import check_resumes

    from .tune_network import check_network_json
    check_network_json(args)
    layers, skipped = _layers(args)
    check_network_json(args, layers, settings)  # and not a layer's own file
    device, dev_note = _device(args, kind)
    jobs = plan_layers(layers, device, settings, measure=kind, algorithm=args.algorithm,
                       out_dir=args.out_dir, verify=not args.no_verify)
    check_zero_shot_resume(args, [job.settings.resume for job in jobs])
    check_resumes(jobs, measurer=True)  # before the notice: bad input is its one line
    _check_executor(settings)
    if notice and not args.json:
        print_notice(notice)
    if skipped and not args.json:
        print_notice(f"{len(skipped)} of the {len(layers) + len(skipped)} layers of {args.network} "
                     f"left out ({args.algorithm} does not compute them): "
                     + ", ".join(s["layer"] for s in skipped))
    if not args.json:
        print(f"device {device.name}{dev_note}; measure {kind}; strategy {args.strategy}; "
              f"budget {args.budget}; seed {args.seed}")
    many = len(jobs) > 1
    # with --json, stdout is the JSON document only: what else prints while tuning goes to
    # stderr (Ray prints a worker's death to stdout, from a thread of its own)
    with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
        reports = run_layers(jobs, None if args.json else printer(args, many, jobs))
    try:
        return _finish(args, jobs, reports, device, kind, notice, skipped)
    except KeyboardInterrupt as exc:  # every layer is tuned and stored: say so, and where
        if isinstance(exc, Interrupted):
            raise
        from search.session.parallel import interrupted_run
        raise interrupted_run(jobs, reports, {}) from None


def _finish(args, jobs, reports, device, kind: str, notice, skipped=()) -> int:
    """After every layer ran: the ``--json`` output, the network table; the exit code.
    ``skipped``: the network's layers the algorithm does not compute (name, reason)."""
    from search.session import choose_algorithms

    from .tune_network import finish_network

    many = len(jobs) > 1
    if args.json:
        payload = reports[0].to_dict() if not many else {
            "network": args.network, "strategy": args.strategy,
            "evaluations": sum(r.evaluations for r in reports),
            "layers": [r.to_dict() for r in reports]}
        if args.network:
            payload["skipped"] = list(skipped)
        if args.algorithm == "all":
            payload["choices"] = [c.to_dict() for c in choose_algorithms(reports)]
        payload["measure"] = kind
        if notice:
            payload["notice"] = notice
        print(json.dumps(payload, default=str))
    if args.network:
        finish_network(args, jobs, reports, device, kind, skipped)
    elif args.algorithm == "all" and not args.json:  # one layer, tuned with every algorithm
        print_choice(choose_algorithms(reports)[0])
    if args.algorithm == "all":  # a layer has a result if any algorithm has one
        return 0 if all(c.chosen is not None for c in choose_algorithms(reports)) else 1
    return 0 if all(r.result.best is not None for r in reports) else 1
