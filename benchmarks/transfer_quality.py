"""Transfer quality: leave one device out on recorded spaces, with and without history.

Every cache file is a target in turn; its history is every other file's records of
the same parameter names from another device (never the target's own: asserted,
see ``benchmarks/tq/runner.py``). Methods: the explorer without history, the
explorer with history (:func:`search.transfer.with_history`), the history-guided
GA (``gga``) and zero-shot (the history model's top K measured, K = each budget).
A run per budget (the explorer plans for its budget) scores ``optimum / best time
found`` in that many unique evaluations, by replaying the recorded measurements.

Usage (from the repository root)::

    nice .venv/bin/python -m benchmarks.transfer_quality               # the convolution spaces
    .venv/bin/python -m benchmarks.transfer_quality --spaces a.json.gz b.json.gz \\
        --seeds 10 --budgets 10 25 --methods explorer explorer+history:decay=0.5 --jobs 2

Writes ``<tag>_runs.json`` (every run), ``<tag>_summary.json``, ``<tag>.md`` (the
table printed) and ``<tag>.png`` into ``--out`` (default ``benchmarks/results``,
tag ``transfer_quality``), the issue's goals checked below the table
(:mod:`benchmarks.tq.goals`). ``--reuse RUNS.json`` takes runs of the same (space,
method, seed, budgets) from an earlier runs file instead of running them again, where the
target's file and history are the same as this run's (their digests, in the runs file);
``--summarise RUNS.json`` runs nothing and writes an earlier runs file's summary, table,
goals and plot again (either half).

``--leave-network-out`` runs the other half instead (:mod:`benchmarks.tq.network`):
our conv template with the ``model`` measurer, history from the layers of
``--history-networks`` (ResNet-18, VGG-16), targets the distinct layer shapes of
``--target-network`` (ResNet-50; ``--target-layers`` for a subset, or for layers of no
preset network given as specs), the explorer without and with history (tag
``transfer_network``; no ``--reuse``: a target's reference is the best any of its runs
found; ``--device`` the GPU preset, V100 by default; the target network is never a history
network, and the preset layers of ``--target-layers`` are its own; the meta says which
targets have a layer of the same shape in the history)::

    nice .venv/bin/python -m benchmarks.transfer_quality --leave-network-out --seeds 5
    nice .venv/bin/python -m benchmarks.transfer_quality --leave-network-out --seeds 5 \
        --target-network squeezenet --device t4 --methods explorer explorer+history zero-shot
    .venv/bin/python -m benchmarks.transfer_quality --leave-network-out --seeds 5 \
        --target-layers "cin=96,hin=35,cout=96,kh=3,pad=1" "cin=320,hin=17,cout=320,kh=1"
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import os
import platform
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.tq.network import (DEFAULT_NETWORK_METHODS, NETWORK_METHODS, distinct_layers,
                                   network_history, run_network_target, target_layers)
from benchmarks.tq.runner import history_summary, load_targets, parse_method, run_method
from benchmarks.shared_data import SPACES_DIR
from benchmarks.tq.runs_file import read_runs, reused_runs, runs_title, write_outputs
from search.file_names import file_stem

REPO = Path(__file__).resolve().parents[1]
DEFAULT_METHODS = ("explorer", "explorer+history", "gga", "zero-shot")
DEFAULT_BUDGETS = (10, 25, 50, 100)
TAG = "transfer_quality"

_TARGETS: dict = {}


def _init(paths: list[str], names: list[str], notify: bool = True) -> None:
    _TARGETS.update({t.name: t for t in load_targets(paths, names, notify)})


def _init_history(hist: list) -> None:
    _TARGETS["history"] = hist


#: Workers start from a fork server, not by fork(): by the time the pool starts, this process
#: has run XGBoost, whose OpenMP thread pool a forked child cannot use (with xgboost-cpu 2.1
#: the child hangs in its first training, which copies the booster in a parallel loop).
_POOL_START = "forkserver"


def _job(args: tuple) -> object:
    name, method, seed, budgets = args
    return run_method(_TARGETS[name], method, seed, budgets)


def _network_job(args: tuple) -> tuple:
    layer, a, budgets = args
    return run_network_target(layer, a.device, _TARGETS["history"], a.methods, a.seeds, budgets,
                              a.reference_budget, a.target_network)


def _network_runs(a, budgets: list[int]) -> tuple[list, dict]:
    """(runs, meta) of the leave-network-out half (see module doc)."""
    t0 = time.time()
    hist = network_history(a.history_networks, a.device, a.history_budget)
    _TARGETS["history"] = hist
    targets = (target_layers(a.target_layers) if a.target_layers
               else distinct_layers([a.target_network]))
    jobs = [(layer, a, budgets) for layer in targets]
    if a.jobs == 1:
        done = [_network_job(j) for j in jobs]
    else:
        with multiprocessing.get_context(_POOL_START).Pool(a.jobs, _init_history, (hist,)) as pool:
            done = pool.map(_network_job, jobs, chunksize=1)
    runs = [r for rs, _ in done for r in rs]
    meta = {"history_networks": a.history_networks, "history_records": len(hist),
            "history_budget": a.history_budget, "target_network": a.target_network,
            "targets": [f for _, f in done], "device": a.device, "seeds": a.seeds,
            "budgets": budgets, "methods": a.methods, "reference_budget": a.reference_budget,
            "measurer": "model (analytic estimate, not a GPU)",
            "score": "reference / best found (reference: best of a long explorer run and of "
                     "every run on the target)", "wall_s": round(time.time() - t0, 1)}
    return runs, meta


def space_names(paths: list[Path]) -> list[str]:
    """A name per file: its name without endings, with its folder's name in front where
    two files share that name (``convolution/A100`` and ``dedispersion/A100``); the same
    file twice is an error.

    >>> space_names([Path("c/A100.json.gz"), Path("d/A100.json.gz"), Path("d/T4.json")])
    ['c/A100', 'd/A100', 'T4']
    """
    resolved = [Path(p).resolve() for p in paths]
    twice = sorted({str(p) for p in paths if resolved.count(Path(p).resolve()) > 1})
    if twice:
        raise SystemExit(f"error: --spaces names a file twice: {twice[0]}")
    stems = [file_stem(p) for p in paths]
    names = [f"{Path(p).resolve().parent.name}/{s}" if stems.count(s) > 1 else s
             for p, s in zip(paths, stems)]
    if len(set(names)) != len(names):
        raise SystemExit("error: --spaces files must have distinct names (file or folder/file)")
    return names


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spaces", nargs="+", type=Path,
                    default=sorted(SPACES_DIR.glob("convolution_*.json.gz")),
                    help="Kernel Tuner cache files, each a target in turn (default: the shared "
                         "convolution spaces)")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--budgets", type=int, nargs="+", default=list(DEFAULT_BUDGETS))
    ap.add_argument("--methods", nargs="+", default=list(DEFAULT_METHODS),
                    help="explorer, explorer+history[:key=value,...], gga, zero-shot")
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                    help="worker processes (default: the CPUs this process may use; every "
                         "run is seeded, so the numbers do not depend on it)")
    ap.add_argument("--out", type=Path, default=None,
                    help="output folder (default: benchmarks/results; with --summarise, the "
                         "runs file's folder)")
    ap.add_argument("--tag", default=TAG, help="output file name prefix")
    ap.add_argument("--reuse", nargs="+", type=Path, default=[],
                    help="runs files of earlier runs: a (space, method, seed) found there with "
                         "the same budgets, of a target whose file and history are this run's, "
                         "is taken from it instead of run again")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--summarise", type=Path, metavar="RUNS.json",
                    help="run nothing: write the summary, table, goals and plot of an earlier "
                         "runs file (either half; tag: its name without _runs.json)")
    net = ap.add_argument_group("leave-network-out (our conv template, model measurer)")
    net.add_argument("--leave-network-out", action="store_true",
                     help="run this half instead of the recorded spaces")
    net.add_argument("--history-networks", nargs="+", default=["resnet18", "vgg16"])
    net.add_argument("--target-network", default="resnet50")
    net.add_argument("--target-layers", nargs="+", default=[],
                     help="a subset of the target network's layers (default: every distinct "
                          "shape), or layers of no preset network as specs "
                          "('cin=64,hin=56,cout=64,kh=3,pad=1', as iobound tune --layer takes)")
    net.add_argument("--device", default="v100")
    net.add_argument("--history-budget", type=int, default=100)
    net.add_argument("--reference-budget", type=int, default=300)
    a = ap.parse_args(argv)
    if a.out is None:
        a.out = a.summarise.parent if a.summarise else REPO / "benchmarks" / "results"
    return a


def _check_device_arguments(a) -> None:
    """Leave-one-device-out's arguments: readable files, positive counts, known methods."""
    if a.seeds < 1 or any(b < 1 for b in a.budgets) or a.jobs < 1:
        raise SystemExit("error: --seeds, --budgets and --jobs must be >= 1")
    missing = [str(p) for p in a.spaces if not Path(p).is_file()]
    if missing or len(a.spaces) < 2:
        raise SystemExit(f"error: need at least two readable cache files; missing: {missing}")
    _check_methods(a.methods)
    check_targets(a.spaces)


def _check_methods(methods: list[str]) -> None:
    """Every method known, its options its own (:func:`parse_method`), none named twice
    (its seeds would count twice in the means and their standard errors)."""
    twice = sorted({m for m in methods if methods.count(m) > 1})
    if twice:
        raise SystemExit(f"error: --methods names {twice[0]} twice")
    try:
        for m in methods:
            parse_method(m)
    except ValueError as e:
        raise SystemExit(f"error: {' '.join(str(e).split())}") from None


def check_targets(paths) -> None:
    """Every file is a cache (or T4 results file) with a timed configuration (a target is
    scored against its optimum), checked before any worker starts; else one error line."""
    from iobound.errors import InvalidInputError
    from benchmarks.tq.runner import check_target_files
    try:
        check_target_files(paths)
    except InvalidInputError as e:
        raise SystemExit(f"error: {e}") from None


def main(argv: list[str] | None = None) -> int:
    a = _arguments(argv)
    if a.summarise:
        return _main_summarise(a)
    if a.leave_network_out:
        return _main_network(a)
    _check_device_arguments(a)
    paths, names = [str(p) for p in a.spaces], space_names(list(a.spaces))
    budgets = sorted(set(a.budgets))
    t0 = time.time()
    targets = history_summary(paths, names)  # its notices once, here: the runs load quietly
    reused = reused_runs(a.reuse, budgets, targets)
    wanted = list(itertools.product(names, a.methods, range(a.seeds)))
    jobs = [(n, m, s, budgets) for n, m, s in wanted if (n, m, s) not in reused]
    if not jobs:
        fresh = []
    elif a.jobs == 1:
        _init(paths, names, False)
        fresh = [_job(j) for j in jobs]
    else:
        ctx = multiprocessing.get_context(_POOL_START)
        with ctx.Pool(a.jobs, _init, (paths, names, False)) as pool:
            fresh = pool.map(_job, jobs, chunksize=1)
    got = {(r.target, r.method, r.seed): r for r in fresh} | reused
    runs = [got[k] for k in wanted]
    meta = {"spaces": names, "seeds": a.seeds, "budgets": budgets, "methods": a.methods,
            "reused_runs": len(runs) - len(fresh), "reused_from": [str(p) for p in a.reuse],
            "wall_s": round(time.time() - t0, 1), "python": platform.python_version(),
            "score": "optimum / best time found (zero-shot: K = budget)",
            "history": "every other file's records of the same parameters, other devices only",
            "targets": targets}
    table = _write(a, runs, meta)
    print(table)
    print(f"({meta['wall_s']} s)")
    return 0


def _main_summarise(a) -> int:
    runs, meta = read_runs(a.summarise)
    if a.tag == TAG:
        a.tag = a.summarise.name.removesuffix(".json").removesuffix("_runs")
    print(_write(a, runs, meta))
    return 0


def _write(a, runs: list, meta: dict) -> str:
    return write_outputs(a.out, a.tag, runs, meta, runs_title(meta), plot=not a.no_plot)


def _check_network_arguments(a) -> None:
    """Leave-network-out's arguments: a known device and networks, a target network not among
    the history's, and target layers of the target network (another network's layer could be
    in the history itself)."""
    from iobound.devices import get_device
    from iobound.errors import IoboundError
    from iobound.networks import network_layers
    # preset names are case-insensitive: compared as the presets know them
    a.target_network = a.target_network.lower()
    a.history_networks = [net.lower() for net in a.history_networks]
    try:
        get_device(a.device)
        for net in a.history_networks:
            network_layers(net)
        own = {layer.name for layer in network_layers(a.target_network)}
        layers = target_layers(a.target_layers)
    except IoboundError as e:  # an unknown preset name, a bad layer spec
        raise SystemExit(f"error: {e}") from None
    if a.target_network in a.history_networks:
        raise SystemExit(f"error: the target network {a.target_network} is also a history "
                         "network; leave it out of --history-networks")
    stray = [spec for spec, layer in zip(a.target_layers, layers)
             if "=" not in spec and layer.name not in own]
    if stray:
        raise SystemExit(f"error: --target-layers {', '.join(stray)} not in the target network "
                         f"{a.target_network}")
    names = [layer.name for layer in layers]
    if len(set(names)) != len(names):
        raise SystemExit("error: --target-layers names one layer twice")


def _main_network(a) -> int:
    if a.reuse:
        raise SystemExit("error: --reuse does not apply to --leave-network-out")
    _check_network_arguments(a)
    if a.tag == TAG:
        a.tag = "transfer_network"
    if a.methods == list(DEFAULT_METHODS):
        a.methods = list(DEFAULT_NETWORK_METHODS)
    bad = [m for m in a.methods if m.partition(":")[0] not in NETWORK_METHODS]
    if bad or a.seeds < 1 or any(b < 1 for b in a.budgets) or a.jobs < 1:
        raise SystemExit(f"error: methods must be among {', '.join(NETWORK_METHODS)} (got {bad}); "
                         "--seeds, --budgets and --jobs must be >= 1")
    _check_methods(a.methods)
    runs, meta = _network_runs(a, sorted(set(a.budgets)))
    print(_write(a, runs, meta))
    print(f"({meta['wall_s']} s)")
    return 0


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
