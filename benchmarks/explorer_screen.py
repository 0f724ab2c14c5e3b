"""Screen explorer options cheaply: one run per (space, seed), scored at every budget.

``benchmarks/search_quality.py`` makes a separate run for every budget; to compare
variants of a strategy whose choices do not depend on the budget, this script makes
ONE run at the largest budget per space and seed and scores its first ``b``
evaluations for each budget ``b`` (the benchmark's runs differ only in their last,
truncated batch), about half the CPU time. Use it to screen ideas with few seeds,
then confirm the winner with the benchmark itself.

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
    """The runs of ``strategy`` on one space, one per seed, scored at each budget."""
    from search.kt_cache import load_cache
    from search.measure.replay import ReplayMeasurer
    from search.replay_space import ReplaySpace
    from search.tuner import tune

    cache = load_cache(path)
    recorded = load_recorded_space(path, cache)
    space, measurer = ReplaySpace(cache), ReplayMeasurer(cache)
    out = []
    for seed in seeds:
        res = tune(space, measurer, strategy=strategy, budget=max(budgets), seed=seed,
                   options=options)
        keys = [recorded.key(t.config) for t in res.trials]
        out += [score_run(recorded, strategy, b, seed, keys) for b in budgets]
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.explorer_screen",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--spaces", nargs="+", type=Path, default=None)
    p.add_argument("--budgets", nargs="+", type=int, default=list(DEFAULT_BUDGETS))
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--strategy", default="explorer")
    p.add_argument("--options", type=json.loads, default={},
                   help="the strategy's options as JSON (nested objects for nested options)")
    args = p.parse_args(argv)
    if args.seeds < 1 or min(args.budgets) < 1:
        p.error("--seeds and --budgets must be >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    start = time.process_time()
    runs = [r for path in (args.spaces or default_spaces())
            for r in screen(path, args.strategy, args.options, sorted(args.budgets),
                            list(range(args.seeds)))]
    rows = summarise(runs)
    print(f"{args.strategy} {json.dumps(args.options)}: {args.seeds} seeds, "
          f"{time.process_time() - start:.0f} CPU s\n")
    print(markdown_tables(rows))
    spaces = {r.space for r in rows}
    means = [sum(r.mean_score for r in rows if r.budget == b) / len(spaces)
             for b in sorted(args.budgets)]
    print("mean over the spaces: " + " / ".join(f"{m:.3f}" for m in means))
    return 0


if __name__ == "__main__":
    sys.exit(main())
