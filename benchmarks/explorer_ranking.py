"""How well cost-model variants rank the unmeasured configurations of traced explorer runs.

The stall diagnosis (``benchmarks/results/explorer_stalls.md``) blames the model's
ranking, so model variants are compared here on what they are used for, before any
full screen: the explorer runs once per space and seed (budget ``max(checkpoints)``);
at each checkpoint ``n`` every variant is fitted on the run's first ``n`` measurements
and ranks all unmeasured configurations. Per variant and checkpoint it prints

- ``rank``: the median rank of the optimum among the unmeasured ones (0 = first);
- ``hit4`` / ``hit16``: the share of runs whose 4 / 16 best-ranked unmeasured
  configurations hold one faster than the best measured so far (the explorer asks
  for 4 a round: ``hit4`` is the chance a round improves on the model alone).

Usage::

    .venv/bin/python -m benchmarks.explorer_ranking --seeds 10 --variants \\
        '{"mean8": {}, "topk16": {"pair_method": "topk", "pairs_per_sample": 16}}'

(each variant is a dict of :class:`search.cost_model.XGBOptions` fields).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a file: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.search_quality import default_spaces


def traced(path: Path, seeds: list[int], budget: int, options: dict):
    """The space's features, costs and the explorer's measured indices per seed."""
    from search.kt_cache import load_cache
    from search.measure.replay import ReplayMeasurer
    from search.replay_space import ReplaySpace
    from search.tuner import tune

    cache = load_cache(path)
    space, measurer = ReplaySpace(cache), ReplayMeasurer(cache)
    every = list(range(len(space)))
    cost = np.array([r.cost for r in measurer.measure([space.get(i) for i in every])])
    runs = [[space.index(t.config) for t in
             tune(space, measurer, strategy="explorer", budget=budget, seed=s, options=options).trials]
            for s in seeds]
    return space.features(every), cost, runs


def score_variant(X, cost, runs, checkpoints, options, seed=0) -> dict:
    """``{checkpoint: (median rank, hit4, hit16)}`` of one model variant over the runs."""
    from search.cost_model import XGBCostModel, XGBOptions

    best = int(np.argmin(cost))
    out = {}
    for n in checkpoints:
        rk, h4, h16 = [], [], []
        for run in runs:
            seen = np.array(run[:n])
            todo = np.setdiff1d(np.arange(len(cost)), seen)
            pred = XGBCostModel(XGBOptions(**options), seed=seed).fit(X[seen], cost[seen]).predict(X)
            order = todo[np.argsort(pred[todo], kind="stable")]
            if best in todo:
                rk.append(int(np.flatnonzero(order == best)[0]))
            cur = cost[seen].min()
            h4.append(cost[order[:4]].min() < cur)
            h16.append(cost[order[:16]].min() < cur)
        out[n] = (float(np.median(rk)) if rk else float("nan"), float(np.mean(h4)), float(np.mean(h16)))
    return out


def checked_variants(variants) -> None:
    """Refuse (``SystemExit``, one line) ``--variants`` that is not a JSON object of
    objects each making an :class:`search.cost_model.XGBOptions`: before any traced run."""
    from iobound.errors import IoboundError
    from search.cost_model import XGBOptions

    if not isinstance(variants, dict) or not variants:
        raise SystemExit("error: --variants must be a non-empty JSON object: name -> "
                         "XGBOptions fields")
    for name, opts in variants.items():
        if not isinstance(opts, dict):
            raise SystemExit(f"error: --variants {name!r} must be a JSON object of XGBOptions "
                             f"fields, got {type(opts).__name__}")
        try:
            XGBOptions(**opts)
        except (TypeError, ValueError, IoboundError) as exc:
            raise SystemExit(f"error: --variants {name!r}: {exc}") from None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.explorer_ranking",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--spaces", nargs="+", type=Path, default=None)
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--checkpoints", nargs="+", type=int, default=[25, 50, 100, 150])
    p.add_argument("--options", type=json.loads, default={}, help="the traced explorer's options")
    p.add_argument("--variants", type=json.loads, required=True,
                   help="JSON object: name -> XGBOptions fields")
    args = p.parse_args(argv)
    if args.seeds < 1 or min(args.checkpoints) < 2:
        p.error("--seeds must be >= 1 and --checkpoints >= 2")
    checked_variants(args.variants)
    traces = [traced(path, list(range(args.seeds)), max(args.checkpoints), args.options)
              for path in (args.spaces or default_spaces())]
    print("| variant | " + " | ".join(f"{n}: rank / hit4 / hit16" for n in args.checkpoints) + " |")
    print("|---|" + "---|" * len(args.checkpoints))
    for name, opts in args.variants.items():
        per = [score_variant(X, c, runs, args.checkpoints, opts) for X, c, runs in traces]
        cells = []
        for n in args.checkpoints:
            ranks = [s[n][0] for s in per if not np.isnan(s[n][0])]  # NaN: optimum measured
            h4, h16 = (np.mean([s[n][k] for s in per]) for k in (1, 2))
            rank = f"{np.mean(ranks):.0f}" if ranks else "-"
            cells.append(f"{rank} / {h4:.2f} / {h16:.2f}")
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
