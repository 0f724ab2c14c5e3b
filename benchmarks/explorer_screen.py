"""Screen explorer options: the benchmark's table for one strategy, without Kernel Tuner.

``benchmarks/search_quality.py`` runs every strategy and Kernel Tuner; to compare
variants of one strategy, this script makes the same runs for it alone (one run per
space, seed and budget: the explorer plans for its budget, so a run of 200 cut at
25 is not a run of 25) and prints the same table. Use it to screen ideas with few
seeds, then confirm the winner with the benchmark itself.

Usage::

    .venv/bin/python -m benchmarks.explorer_screen --seeds 10 \\
        --options '{"stall": {"source": "far"}}' --spaces ../shared/data/tuning-spaces/*.json.gz

prints the benchmark's table (mean score, standard error, % within 5%, stall length)
and the mean over the spaces per budget.

Examples
--------
>>> parse_args(["--options", '{"epsilon": 0.2}', "--seeds", "3"]).options
{'epsilon': 0.2}
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.search_quality import DEFAULT_BUDGETS, default_spaces
from benchmarks.sq.recorded import load_recorded_space, score_run
from benchmarks.sq.report import markdown_tables, summarise


def screen(path: Path, strategy: str, options: dict, budgets: list[int], seeds: list[int]):
    """The runs of ``strategy`` on one space, one per seed and budget."""
    from search.kt_cache import load_cache
    from search.measure.replay import ReplayMeasurer
    from search.replay_space import ReplaySpace
    from search.tuner import tune

    cache = load_cache(path)
    recorded = load_recorded_space(path, cache)
    space, measurer = ReplaySpace(cache), ReplayMeasurer(cache)
    out = []
    for seed in seeds:
        for b in budgets:
            res = tune(space, measurer, strategy=strategy, budget=b, seed=seed, options=options)
            keys = [recorded.key(t.config) for t in res.trials]
            out.append(score_run(recorded, strategy, b, seed, keys))
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.explorer_screen",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--spaces", nargs="+", type=Path, default=None)
    p.add_argument("--budgets", nargs="+", type=int, default=list(DEFAULT_BUDGETS))
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--first-seed", type=int, default=0,
                   help="seeds are first-seed .. first-seed + seeds - 1 "
                        "(fresh seeds to confirm a screen)")
    p.add_argument("--strategy", default="explorer")
    p.add_argument("--options", type=json.loads, default={},
                   help="the strategy's options as JSON (nested objects for nested options)")
    args = p.parse_args(argv)
    if args.seeds < 1 or min(args.budgets) < 1:
        p.error("--seeds and --budgets must be >= 1")
    args.budgets = sorted(set(args.budgets))  # a budget named twice is not run twice
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from benchmarks.sq.recorded import space_name
    paths = args.spaces or default_spaces()
    names = [space_name(p) for p in paths]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:  # their runs would be one cell: two spaces' scores as seeds of one
        raise SystemExit(f"error: two spaces are named {twice[0]!r}; rename one file")
    start = time.process_time()
    runs = [r for path in paths
            for r in screen(path, args.strategy, args.options, args.budgets,
                            list(range(args.first_seed, args.first_seed + args.seeds)))]
    rows = summarise(runs)
    print(f"{args.strategy} {json.dumps(args.options)}: {args.seeds} seeds, "
          f"{time.process_time() - start:.0f} CPU s\n")
    print(markdown_tables(rows))
    spaces = {r.space for r in rows}
    means = [sum(r.mean_score for r in rows if r.budget == b) / len(spaces)
             for b in args.budgets]
    print("mean over the spaces: " + " / ".join(f"{m:.3f}" for m in means))
    return 0


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
