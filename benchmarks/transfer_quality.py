"""Transfer quality: leave one device out on recorded spaces, with and without history.

Every cache file is a target in turn; its history is every other file's records of
the same parameter names from another device (never the target's own: asserted,
see ``benchmarks/tq/runner.py``). Methods: the explorer without history, the
explorer with history (:func:`search.transfer.with_history`), the history-guided
GA (``gga``) and zero-shot (the history model's top K measured, K = each budget).
A run scores ``optimum / best time found`` after each budget of unique
evaluations, by replaying the recorded measurements.

Usage (from the repository root)::

    nice .venv/bin/python -m benchmarks.transfer_quality               # the convolution spaces
    .venv/bin/python -m benchmarks.transfer_quality --spaces a.json.gz b.json.gz \\
        --seeds 10 --budgets 10 25 --methods explorer explorer+history:decay=0.5 --jobs 2

Writes ``<tag>_runs.json`` (every run), ``<tag>_summary.json``, ``<tag>.md`` (the
table printed) and ``<tag>.png`` into ``--out`` (default ``benchmarks/results``,
tag ``transfer_quality``). ``--reuse RUNS.json`` takes runs of the same (space,
method, seed, budgets) from an earlier runs file instead of running them again.
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import platform
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.tq.report import markdown_table, plot_scores, summarise
from benchmarks.tq.runner import TargetRun, load_targets, parse_method, run_method

REPO = Path(__file__).resolve().parents[1]
#: ``shared/data/tuning-spaces`` next to the checkout (or next to the worktrees' folder).
SPACES_DIR = next((p / "shared" / "data" / "tuning-spaces" for p in REPO.parents
                   if (p / "shared" / "data" / "tuning-spaces").is_dir()),
                  REPO.parent / "shared" / "data" / "tuning-spaces")
DEFAULT_METHODS = ("explorer", "explorer+history", "gga", "zero-shot")
DEFAULT_BUDGETS = (10, 25, 50, 100)

_TARGETS: dict = {}


def _init(paths: list[str], names: list[str]) -> None:
    _TARGETS.update({t.name: t for t in load_targets(paths, names)})


def _job(args: tuple) -> object:
    name, method, seed, budgets = args
    return run_method(_TARGETS[name], method, seed, budgets)


def _names(paths: list[Path]) -> list[str]:
    names = [p.name.split(".")[0] for p in paths]
    if len(set(names)) != len(names):
        raise SystemExit("error: --spaces files must have distinct names")
    return names


def _reused(files: list[Path], budgets: list[int]) -> dict:
    """(space, method, seed) -> run, from earlier runs files with exactly these budgets."""
    out = {}
    for f in files:
        try:
            runs = json.loads(Path(f).read_text())["runs"]
        except (OSError, ValueError, KeyError) as e:
            raise SystemExit(f"error: cannot read runs from {f}: {e}") from None
        for r in runs:
            scores = {int(b): v for b, v in r["scores"].items()}
            if sorted(scores) == budgets:
                out[(r["target"], r["method"], r["seed"])] = TargetRun(
                    r["target"], r["method"], r["seed"], scores)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spaces", nargs="+", type=Path,
                    default=sorted(SPACES_DIR.glob("convolution_*.json.gz")),
                    help="Kernel Tuner cache files, each a target in turn (default: the shared "
                         "convolution spaces)")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--budgets", type=int, nargs="+", default=list(DEFAULT_BUDGETS))
    ap.add_argument("--methods", nargs="+", default=list(DEFAULT_METHODS),
                    help="explorer, explorer+history[:key=value,...], gga, zero-shot")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    ap.add_argument("--tag", default="transfer_quality", help="output file name prefix")
    ap.add_argument("--reuse", nargs="+", type=Path, default=[],
                    help="runs files of earlier runs: a (space, method, seed) found there with "
                         "the same budgets is taken from it instead of run again")
    ap.add_argument("--no-plot", action="store_true")
    a = ap.parse_args(argv)
    missing = [str(p) for p in a.spaces if not Path(p).is_file()]
    if missing or len(a.spaces) < 2:
        raise SystemExit(f"error: need at least two readable cache files; missing: {missing}")
    if a.seeds < 1 or any(b < 1 for b in a.budgets) or a.jobs < 1:
        raise SystemExit("error: --seeds, --budgets and --jobs must be >= 1")
    try:
        for m in a.methods:
            parse_method(m)
    except ValueError as e:
        raise SystemExit(f"error: {e}") from None
    paths, names = [str(p) for p in a.spaces], _names(list(a.spaces))
    budgets = sorted(set(a.budgets))
    reused = _reused(a.reuse, budgets)
    wanted = list(itertools.product(names, a.methods, range(a.seeds)))
    jobs = [(n, m, s, budgets) for n, m, s in wanted if (n, m, s) not in reused]
    t0 = time.time()
    if not jobs:
        fresh = []
    elif a.jobs == 1:
        _init(paths, names)
        fresh = [_job(j) for j in jobs]
    else:
        with multiprocessing.get_context("fork").Pool(a.jobs, _init, (paths, names)) as pool:
            fresh = pool.map(_job, jobs, chunksize=1)
    got = {(r.target, r.method, r.seed): r for r in fresh} | reused
    runs = [got[k] for k in wanted]
    rows = summarise(runs)
    table = markdown_table(rows)
    a.out.mkdir(parents=True, exist_ok=True)
    meta = {"spaces": names, "seeds": a.seeds, "budgets": budgets, "methods": a.methods,
            "reused_runs": len(runs) - len(fresh), "reused_from": [str(p) for p in a.reuse],
            "wall_s": round(time.time() - t0, 1), "python": platform.python_version(),
            "score": "optimum / best time found (zero-shot: K = budget)",
            "history": "every other file's records of the same parameters, other devices only"}
    (a.out / f"{a.tag}_runs.json").write_text(json.dumps(
        {"meta": meta, "runs": [r.__dict__ for r in runs]}, indent=1))
    (a.out / f"{a.tag}_summary.json").write_text(json.dumps({"meta": meta, "summary": rows},
                                                            indent=1))
    (a.out / f"{a.tag}.md").write_text(f"# Transfer quality ({a.seeds} seeds)\n\n{table}\n")
    if not a.no_plot:
        plot_scores(rows, a.out / f"{a.tag}.png")
    print(table)
    print(f"({meta['wall_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
