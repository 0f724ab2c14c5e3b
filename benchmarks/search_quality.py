"""Search quality on recorded GPU tuning spaces: our strategies against Kernel Tuner's.

For every recorded space (a Kernel Tuner cache file of a brute-forced space), every
budget of unique evaluations and every seed, each strategy searches the space by
replaying the recorded measurements; a run scores ``optimum / best time found``
(1.0 is the optimum). See ``benchmarks/sq/recorded.py`` for the counting rule (the
same for everyone: the first visit of a recorded configuration, failed ones
included, costs one evaluation) and ``benchmarks/sq/kt_runner.py`` for how Kernel
Tuner is driven (simulation mode, default options, ``max_fevals`` = budget).

Usage (from the repository root; needs the ``bench`` extra)::

    .venv/bin/python -m benchmarks.search_quality            # the shipped spaces
    .venv/bin/python -m benchmarks.search_quality --spaces other_cache.json \\
        --budgets 25 50 --seeds 5 --strategies explorer kt:pso --jobs 2
    .venv/bin/python -m benchmarks.search_quality --seeds 30 --strategies ours kt \
        --reuse-kt benchmarks/results/search_quality_summary.json   # Kernel Tuner not re-run

Writes ``search_quality_runs.json`` (every run and its trace),
``search_quality_summary.json``, ``search_quality.md`` (the table printed) and
``search_quality.png`` into ``--out`` (default ``benchmarks/results``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import multiprocessing
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.shared_data import SPACES_DIR
from benchmarks.sq.kt_runner import kt_available, kt_version
from benchmarks.sq.recorded import TOLERANCE, RunResult, load_recorded_space
from benchmarks.sq.report import best_kt_gaps, markdown_tables, plot_scores, summarise
from benchmarks.sq.reuse import reusable_kt
from benchmarks.sq.strategies import check_strategy_names, expand_strategies

log = logging.getLogger("search_quality")

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SPACES_DIR = SPACES_DIR
DEFAULT_BUDGETS = (25, 50, 100, 200)
COUNTING_RULE = (
    "A unique evaluation is the first visit of a configuration recorded in the cache file, "
    "failed entries (compile/runtime failures) included; repeats and configurations outside "
    "the recorded set cost nothing. Kernel Tuner's simulation runner counts max_fevals the same "
    "way. Each run's trace is its distinct configurations in order, truncated to the budget; "
    "a strategy that stops early keeps what it evaluated (n_evals < budget).")

# Per-process state: space name -> (RecordedSpace, KtCache, plain JSON path or None).
_STATE: dict[str, tuple] = {}


def default_spaces() -> list[Path]:
    """The shipped recorded spaces (``../shared/data/tuning-spaces/*.json.gz``)."""
    found = sorted(DEFAULT_SPACES_DIR.glob("*.json.gz"))
    if not found:
        raise SystemExit(f"error: no recorded spaces (*.json.gz) in {DEFAULT_SPACES_DIR}; "
                         "pass cache files with --spaces")
    return found


def load_spaces(paths: list[Path], tmpdir: str | None, write_copies: bool = True,
                drop_failed: bool = False) -> None:
    """Fill this process's state with the spaces (and plain-JSON copies for Kernel Tuner).

    ``tmpdir`` is where Kernel Tuner's uncompressed copies live (``None``: no Kernel
    Tuner runs); ``write_copies=False`` only points at copies written earlier.
    ``drop_failed`` removes the failed entries from the space, for everyone.
    """
    import dataclasses

    from search.kt_cache import entry_status, load_cache

    from benchmarks.sq.recorded import plain_json_copy

    for path in paths:
        cache = load_cache(path)
        if drop_failed:
            cache = dataclasses.replace(
                cache, entries=[e for e in cache.entries if entry_status(e).is_ok])
        space = load_recorded_space(path, cache)
        if space.name in _STATE:
            raise SystemExit(f"error: two spaces are named {space.name!r}; rename one file")
        plain = None
        if tmpdir:
            plain = (plain_json_copy(cache, tmpdir, space.name) if write_copies
                     else Path(tmpdir) / f"{space.name}.json")
        _STATE[space.name] = (space, cache, plain)


def _init_worker(paths: list[Path], tmpdir: str | None, drop_failed: bool) -> None:
    if not _STATE:  # spawn start method; fork inherits the parent's state
        load_spaces(paths, tmpdir, write_copies=False, drop_failed=drop_failed)


def run_one(task: tuple[str, str, int, int]) -> dict:
    """One run; returns ``RunResult.to_dict()`` or ``{..., "error": msg}``."""
    space_name, strategy, budget, seed = task
    space, cache, plain = _STATE[space_name]
    try:
        if strategy.startswith("kt:"):
            from benchmarks.sq.kt_runner import run_kt
            result = run_kt(space, plain, strategy[3:], budget, seed)
        else:
            from benchmarks.sq.our_runner import run_ours
            result = run_ours(space, cache, strategy, budget, seed)
        return result.to_dict()
    except Exception as exc:  # noqa: BLE001 -- one broken run must not lose the others
        log.exception("run %s failed", task)
        return {"space": space_name, "strategy": strategy, "budget": budget, "seed": seed,
                "error": f"{type(exc).__name__}: {exc}"}


def _cost_rank(task: tuple) -> int:
    """Slow strategies first, so that the pool's tail is short."""
    strategy, budget = task[1], task[2]
    slow = {"explorer": 3, "sa": 3, "kt:bayes_opt": 2, "kt:dual_annealing": 1}.get(strategy, 0)
    return -(slow * 1000 + budget)


def run_all(tasks: list[tuple], paths: list[Path], tmpdir: str | None, jobs: int,
            drop_failed: bool = False) -> list[dict]:
    """Every task, on ``jobs`` processes (inline when 1); results in task order."""
    order = sorted(range(len(tasks)), key=lambda i: _cost_rank(tasks[i]))
    results: list[dict | None] = [None] * len(tasks)
    start = time.perf_counter()
    if jobs <= 1:
        it = ((i, run_one(tasks[i])) for i in order)
        pool = None
    else:
        # not fork(): a process that has trained XGBoost (OpenMP) cannot be forked safely
        # (with xgboost-cpu 2.1 the children hang; see benchmarks/transfer_quality.py)
        ctx = multiprocessing.get_context("forkserver" if "forkserver" in
                                          multiprocessing.get_all_start_methods() else "spawn")
        pool = ctx.Pool(jobs, initializer=_init_worker, initargs=(paths, tmpdir, drop_failed))
        it = zip(order, pool.imap(run_one, [tasks[i] for i in order], chunksize=1))
    try:
        for done, (i, res) in enumerate(it, start=1):
            results[i] = res
            if done % 50 == 0 or done == len(tasks):
                log.info("%d/%d runs, %.0f s", done, len(tasks), time.perf_counter() - start)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    return [r for r in results if r is not None]


def _as_result(d: dict) -> RunResult:
    return RunResult(space=d["space"], strategy=d["strategy"], budget=d["budget"], seed=d["seed"],
                     n_evals=d["n_evals"], best_time=d["best_time_ms"], score=d["score"],
                     within_5pct=d["within_5pct"], evals_to_5pct=d["evals_to_5pct"],
                     wall_s=d["wall_s"], cpu_s=d.get("cpu_s", 0.0), stall=d.get("stall"))


def code_version() -> dict:
    """The checkout's commit and any uncommitted changes under ``search/`` (what ran)."""
    import subprocess

    def git(*a: str) -> str:
        try:
            return subprocess.run(["git", *a], cwd=REPO, capture_output=True, text=True,
                                  timeout=20).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    return {"commit": git("rev-parse", "HEAD"),
            "uncommitted_search_files": git("status", "--porcelain", "--", "search").splitlines()}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.search_quality",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--spaces", nargs="+", type=Path, default=None, metavar="PATH",
                   help="Kernel Tuner cache files (.json or .json.gz); default: "
                        f"{DEFAULT_SPACES_DIR}/*.json.gz")
    p.add_argument("--budgets", nargs="+", type=int, default=list(DEFAULT_BUDGETS),
                   help="unique evaluations per run (default: 25 50 100 200)")
    p.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1 per cell (default 10)")
    p.add_argument("--strategies", nargs="+", default=["ours", "kt"],
                   help="ours: explorer random ga sa; kt:NAME for a Kernel Tuner strategy; "
                        "'ours' and 'kt' name the default groups, 'kt:all' adds Kernel Tuner's "
                        "other strategies (default: ours kt)")
    p.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results",
                   help="output directory (default benchmarks/results)")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                   help="worker processes (default 2)")
    p.add_argument("--drop-failed", action="store_true",
                   help="remove the recorded failures from the space, for every strategy "
                        "(a sensitivity check; default: failures are part of the space)")
    p.add_argument("--reuse-kt", type=Path, default=None, metavar="JSON",
                   help="take Kernel Tuner results (kt:*) from an earlier search_quality_runs.json "
                        "(per run) or search_quality_summary.json (per cell, same seeds) instead "
                        "of running them again (same Kernel Tuner version and failure mode "
                        "required); our strategies always run")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG")
    args = p.parse_args(argv)
    if any(b < 1 for b in args.budgets):
        p.error(f"--budgets must be >= 1, got {args.budgets}")
    if args.seeds < 1:
        p.error(f"--seeds must be >= 1, got {args.seeds}")
    return args


def _checked_inputs(args) -> tuple[list[Path], list[str], bool]:
    """(cache files, strategies, whether Kernel Tuner runs), each checked."""
    paths = [Path(p) for p in args.spaces] if args.spaces else default_spaces()
    for p in paths:
        if not p.is_file():
            raise SystemExit(f"error: cache file {p} does not exist")
    strategies = expand_strategies(args.strategies)
    uses_kt = any(s.startswith("kt:") for s in strategies)
    if uses_kt and not kt_available():
        raise SystemExit("error: kernel_tuner is not installed; install the bench extra: "
                         ".venv/bin/pip install -e '.[bench]'")
    check_strategy_names(strategies)
    return paths, strategies, uses_kt


def _reuse_kt(args, tasks: list, strategies: list, budgets: list, seeds: list):
    """(runs taken from ``--reuse-kt``, the tasks left to run, summarised cells taken)."""
    if not args.reuse_kt:
        return [], tasks, []
    spaces = {name: s.describe() for name, (s, _c, _p) in _STATE.items()}
    reused, reused_rows = reusable_kt(args.reuse_kt, args.drop_failed, seeds, spaces)
    kept = [reused[t] for t in tasks if t in reused]
    tasks = [t for t in tasks if t not in reused and t[:3] not in reused_rows]
    kept_rows = [reused_rows[c] for c in itertools.product(_STATE, strategies, budgets)
                 if c in reused_rows]
    log.info("reusing %d Kernel Tuner runs and %d summarised cells from %s", len(kept),
             len(kept_rows), args.reuse_kt)
    return kept, tasks, kept_rows


def _constant_meta(args) -> dict:
    """What the results' meta says about the rules and the tools (not about this run's numbers)."""
    return {"counting_rule": COUNTING_RULE, "within": f"best <= {TOLERANCE} * optimum",
            "score": "optimum / best recorded time found (0 if nothing ran)",
            "kernel_tuner": kt_version(), "python": platform.python_version(),
            "cpu_count": os.cpu_count(), "reductions": "none",
            "failed_entries": "dropped from the space" if args.drop_failed else "part of the space",
            "reused_from": str(args.reuse_kt or "")}


def _write_outputs(args, meta: dict, runs: list, rows: list, gaps: list, errors: list) -> str:
    """Write the runs, the summary, the Markdown table and the plot; the table."""
    table = markdown_tables(rows)
    (args.out / "search_quality_runs.json").write_text(json.dumps({"meta": meta, "runs": runs}))
    (args.out / "search_quality_summary.json").write_text(json.dumps(
        {"meta": meta, "summary": [r.to_dict() for r in rows], "explorer_vs_best_kt": gaps,
         "errors": errors}, indent=1))
    (args.out / "search_quality.md").write_text(table, encoding="utf-8")  # ± whatever the locale
    if not args.no_plot and rows:
        plot_scores(rows, args.out / "search_quality.png")
    return table


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    _STATE.clear()
    version = code_version()  # at the start: what the runs import
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    paths, strategies, uses_kt = _checked_inputs(args)
    if args.jobs > 1:
        os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core per worker process
    args.out.mkdir(parents=True, exist_ok=True)
    budgets = sorted(set(args.budgets))
    seeds = list(range(args.seeds))
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="search_quality_") as tmp:
        load_spaces(paths, tmp if uses_kt else None, drop_failed=args.drop_failed)
        if uses_kt:
            from benchmarks.sq.kt_runner import kt_space_size
            for space, _cache, plain in _STATE.values():
                n = kt_space_size(space, plain)
                if n != space.size:
                    raise SystemExit(f"error: Kernel Tuner sees {n} configurations in {space.name}, "
                                     f"the file records {space.size}")
        tasks = [(name, s, b, seed) for name in _STATE for s in strategies for b in budgets
                 for seed in seeds]
        kept, tasks, kept_rows = _reuse_kt(args, tasks, strategies, budgets, seeds)
        log.info("%d runs: %d spaces x %d strategies x %d budgets x %d seeds on %d processes",
                 len(tasks), len(_STATE), len(strategies), len(budgets), len(seeds), args.jobs)
        runs = kept + run_all(tasks, paths, tmp if uses_kt else None, args.jobs, args.drop_failed)
        spaces_meta = [s.describe() for s, _c, _p in _STATE.values()]
    wall = time.perf_counter() - start
    order = {task: k for k, task in enumerate(
        itertools.product(_STATE, strategies, budgets, seeds))}  # the requested order
    runs.sort(key=lambda r: order.get((r["space"], r["strategy"], r["budget"], r["seed"]), -1))
    ok = [r for r in runs if "error" not in r]
    errors = [r for r in runs if "error" in r]
    cell_order = {c: k for k, c in enumerate(itertools.product(_STATE, strategies, budgets))}
    rows = sorted(summarise(_as_result(r) for r in ok) + kept_rows,
                  key=lambda r: cell_order.get((r.space, r.strategy, r.budget), -1))
    gaps = best_kt_gaps(rows) if uses_kt else []
    cpu_total = sum(r.get("cpu_s", 0.0) for r in ok)
    meta = {"budgets": budgets, "seeds": seeds, "strategies": strategies, "jobs": args.jobs,
            "wall_s": round(wall, 1), "runs_cpu_s": round(cpu_total, 1),
            "projected_wall_s_on_jobs_idle_cores": round(cpu_total / max(args.jobs, 1), 1),
            "n_runs": len(runs), "n_errors": len(errors), "spaces": spaces_meta, "code": version,
            "reused_kt_runs": len(kept), "reused_kt_cells": len(kept_rows), **_constant_meta(args)}
    print(_write_outputs(args, meta, runs, rows, gaps, errors))
    for g in gaps:
        print(f"{g['space']} @ {g['budget']}: explorer {g['ours_mean_score']:.3f} vs best "
              f"{g['best_kt']} {g['best_kt_mean_score']:.3f}: {g['gap']:+.3f} "
              + (f"(standard error {g['gap_se']:.3f})" if g["gap_se"] is not None
                 else "(one run: no standard error)"))
    print(f"{len(runs)} runs in {wall:.0f} s on {args.jobs} processes ({cpu_total:.0f} CPU s in "
          f"the runs{', reused ones included' if kept else ''}); outputs in {args.out}")
    if errors:
        print(f"{len(errors)} runs FAILED (see search_quality_summary.json 'errors'), e.g. "
              f"{errors[0]['strategy']}: {errors[0]['error']}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
