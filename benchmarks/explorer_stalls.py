"""Why the explorer stops improving: trace its rounds on the recorded spaces (issue 16).

Each run is the ``explorer`` strategy (or another model-based one) driven through
:func:`search.tuner.tune` on a recorded space, with a tracing walk optimizer and
the model of each round kept. Per round (one ``ask``) it records:

- ``best``: optimum / best time measured so far;
- ``walk_*``: where the walkers started and ended (how many distinct end points,
  the share of ends at Hamming distance <= 1 from the best measured configuration);
- ``batch_d1_best``: the share of the proposed batch within Hamming distance 1 of
  the best measured configuration (the batch repeats the incumbent's region);
- ``batch_new_dist``: the mean Hamming distance from each proposed configuration
  to the nearest measured one (1 = next to something measured);
- ``top_overlap``: overlap of the model's 20 best-predicted unmeasured
  configurations with the previous round's (still unmeasured) 20;
- ``opt_rank``: the model's rank of the space's optimum among the unmeasured
  configurations (0 = it would be proposed first; ``None`` once measured);
- ``opt_dist``: Hamming distance from the measured set to the optimum;
- ``coverage``: the share of all parameter values seen in the measured set.

A run *stalls* when its last ``min_stall`` evaluations brought no improvement and
it ends below 0.99 of the optimum. Usage::

    .venv/bin/python -m benchmarks.explorer_stalls --seeds 10 --budget 200

writes ``explorer_stalls.json`` and ``explorer_stalls.png`` into ``--out``
(default ``benchmarks/results``) and prints a markdown summary.

Examples
--------
>>> import numpy as np
>>> hamming_to_set(np.array([[1., 2., 3.]]), np.array([[1., 2., 4.], [0., 0., 3.]])).tolist()
[1]
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
from benchmarks.sq.recorded import load_recorded_space

TOP = 20


def hamming_to_set(points: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """For each row of ``points`` the Hamming distance to the nearest row of ``measured``."""
    if len(measured) == 0:
        return np.full(len(points), points.shape[1])
    diff = (points[:, None, :] != measured[None, :, :]).sum(axis=2)
    return diff.min(axis=1)


class _TracingWalk:
    """Mixin for a walk optimizer: records every search's walker starts and ends."""

    def _walk(self, model, space, cur, *rest):
        starts = cur.copy()
        steps = super()._walk(model, space, cur, *rest)
        self.walks.append({"starts": starts, "ends": cur.copy(), "steps": steps})
        return steps


def _tracing_strategy(space, strategy: str, seed: int, options: dict | None = None):
    """A registered model-based strategy whose walks and models are recorded."""
    from search.optimizers.walk import WalkOptimizer
    from search.strategies import make_options, strategy_class

    base = strategy_class(strategy)

    class Traced(base):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.models: list = []
            if isinstance(self.optimizer, WalkOptimizer):
                walk = type("TracingWalk", (_TracingWalk, type(self.optimizer)), {})
                self.optimizer = walk(self.optimizer.options)
            self.optimizer.walks = []

        def _train(self):
            self.models.append(super()._train())
            return self.models[-1]

    strat = Traced(space, make_options(strategy, options), rng=np.random.default_rng(seed))
    return strat, strat.optimizer.walks, strat.models


class _RoundTracer:
    """Stands in for a traced strategy's ``ask``: asks it, then records the round's row
    (the per-round fields of the module doc) in ``rounds``."""

    def __init__(self, strat, walks: list, models: list, X: np.ndarray, times: np.ndarray, opt: int):
        self.strat, self.walks, self.models, self._ask = strat, walks, models, strat.ask
        self.X, self.times, self.opt = X, times, opt
        self.n_values = sum(len(np.unique(X[:, c])) for c in range(X.shape[1]))
        self.prev_top: list[int] = []
        self.rounds: list[dict] = []

    def __call__(self, n):
        X, times, opt = self.X, self.times, self.opt
        measured = np.array(list(self.strat.seen.cost), dtype=np.int64)
        n_walks, n_models = len(self.walks), len(self.models)
        batch = self._ask(n)
        row = {"evals": len(measured), "batch": len(batch),
               "best": float(times[opt] / min(times[measured].min(), np.inf)) if len(measured) else 0.0}
        model = self.models[-1] if len(self.models) > n_models else None
        if model is not None and len(measured):
            best_i = self.strat.seen.best(1)
            bx = X[best_i] if best_i else X[measured[:1]]
            row.update(self._model_view(model, measured, batch, bx))
            if len(self.walks) > n_walks:
                row.update(_walk_fields(self.walks[-1], X, bx))
        row["opt_dist"] = int(hamming_to_set(X[[opt]], X[measured])[0]) if len(measured) else None
        row["coverage"] = (sum(len(np.unique(X[measured, c])) for c in range(X.shape[1])) / self.n_values
                           if len(measured) else 0.0)
        self.rounds.append(row)
        return batch

    def _model_view(self, model, measured: np.ndarray, batch, bx: np.ndarray) -> dict:
        """The batch against the best measured ``bx`` and the model's ranking of the
        unmeasured configurations (its top ``TOP`` is kept for the next round)."""
        X, opt = self.X, self.opt
        row = {"batch_d1_best": float(((X[batch] != bx).sum(axis=1) <= 1).mean()),
               "batch_new_dist": float(hamming_to_set(X[batch], X[measured]).mean())}
        pred = model.predict(X)
        un = np.setdiff1d(np.arange(len(X)), measured)
        order = un[np.argsort(pred[un], kind="stable")]
        top = order[:TOP].tolist()
        still = [i for i in self.prev_top if i not in set(measured.tolist())]
        row["top_overlap"] = len(set(top) & set(still)) / max(len(still), 1) if still else None
        self.prev_top = top
        row["opt_rank"] = int(np.flatnonzero(order == opt)[0]) if opt in set(un.tolist()) else None
        return row


def _walk_fields(walk: dict, X: np.ndarray, bx: np.ndarray) -> dict:
    """Where one search's walkers ended: distinct ends, share within Hamming 1 of ``bx``, steps."""
    return {"walk_distinct_ends": int(len(np.unique(walk["ends"]))),
            "walk_ends_d1_best": float(((X[walk["ends"]] != bx).sum(axis=1) <= 1).mean()),
            "walk_steps": int(walk["steps"])}


def trace_run(path: Path, seed: int, budget: int, strategy: str = "explorer",
              options: dict | None = None) -> dict:
    """One traced run (see the module doc for the per-round fields)."""
    from search.kt_cache import load_cache
    from search.measure.replay import ReplayMeasurer
    from search.replay_space import ReplaySpace
    from search.tuner import tune

    cache = load_cache(path)
    recorded = load_recorded_space(path, cache)
    space, measurer = ReplaySpace(cache), ReplayMeasurer(cache)
    times = np.array([recorded.times[recorded.key(space.get(i))] or np.inf for i in range(len(space))])
    opt = int(np.argmin(times))
    strat, walks, models = _tracing_strategy(space, strategy, seed, options)
    tracer = _RoundTracer(strat, walks, models, space.features(range(len(space))), times, opt)
    strat.ask = tracer
    result = tune(space, measurer, strategy=strat, budget=budget)
    seq = [times[t.index] for t in result.trials]
    best_curve = np.minimum.accumulate(seq)
    last_imp = int(np.flatnonzero(best_curve == best_curve[-1])[0]) + 1
    return {"space": recorded.name, "seed": seed, "score": float(times[opt] / best_curve[-1]),
            "stall": len(seq) - last_imp, "curve": (times[opt] / best_curve).tolist(),
            "rounds": tracer.rounds, "end": _end_neighbourhoods(space, strat.seen.best(), opt)}


def _end_neighbourhoods(space, best: list[int], opt: int) -> dict:
    """At the end of a run: for the best 1, 3 and 8 measured configurations, how many of
    their Hamming-1 neighbours were never measured and whether the optimum is one of them."""
    measured = set(best)
    out = {"best_to_opt": int(sum(a != b for a, b in zip(space.get(best[0]).values(),
                                                         space.get(opt).values())))}
    for k in (1, 3, 8):
        ring = {j for i in best[:k] for j in space.neighbours(i)} - measured
        out[f"top{k}_unmeasured"] = len(ring)
        out[f"top{k}_has_opt"] = opt in ring
    return out


def _mean(rows: list[dict], key: str, lo: int, hi: int) -> float | None:
    vals = [r[key] for r in rows if lo <= r["evals"] < hi and r.get(key) is not None]
    return float(np.mean(vals)) if vals else None


def summarise(runs: list[dict], min_stall: int) -> str:
    """A markdown table: stalled against other runs, per stretch of evaluations."""
    groups = {"stalled": [r for r in runs if r["stall"] >= min_stall and r["score"] < 0.99],
              "other": [r for r in runs if not (r["stall"] >= min_stall and r["score"] < 0.99)]}
    keys = ("batch_d1_best", "walk_ends_d1_best", "walk_distinct_ends", "batch_new_dist",
            "top_overlap", "opt_rank", "opt_dist", "coverage")
    lines = ["| runs | evals | " + " | ".join(keys) + " |", "|" + "---|" * (len(keys) + 2)]
    for name, rs in groups.items():
        for lo, hi in ((8, 50), (50, 100), (100, 200)):
            cells = []
            for k in keys:
                vals = [v for v in (_mean(r["rounds"], k, lo, hi) for r in rs) if v is not None]
                cells.append(f"{np.mean(vals):.2f}" if vals else "-")
            lines.append(f"| {name} ({len(rs)}) | {lo}-{hi} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(runs: list[dict], min_stall: int, path: Path) -> None:
    """Four panels over evaluations, stalled runs red, others grey."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = (("best", "optimum / best so far"), ("batch_d1_best", "batch share at Hamming <= 1 of best"),
              ("opt_rank", "model's rank of the optimum (unmeasured)"),
              ("opt_dist", "Hamming distance measured set -> optimum"))
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    for ax, (key, label) in zip(axes.flat, panels):
        for r in sorted(runs, key=lambda r: r["stall"] >= min_stall and r["score"] < 0.99):
            stalled = r["stall"] >= min_stall and r["score"] < 0.99
            pts = [(x["evals"], x[key]) for x in r["rounds"] if x.get(key) is not None]
            if pts:
                ax.plot(*zip(*pts), color="tab:red" if stalled else "0.7",
                        alpha=0.9 if stalled else 0.4, linewidth=1.4 if stalled else 0.8)
        ax.set_xlabel("evaluations")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        if key == "opt_rank":
            ax.set_yscale("symlog", linthresh=10)
    axes[0, 0].set_title("red: stalled runs (no gain in the last "
                         f"{min_stall} evals, < 0.99); grey: the others", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def traceable_strategies() -> list[str]:
    """The registered strategies with a model and a walk optimizer (what is traced here)."""
    from search.strategies import strategy_class, strategy_names
    from search.strategies.model_based import ModelBasedStrategy

    return [n for n in strategy_names() if issubclass(strategy_class(n), ModelBasedStrategy)]


def checked_strategy(strategy: str, options: dict | None) -> None:
    """Refuse (``SystemExit``, one line) a strategy without an optimizer, or options it
    does not take, before any run."""
    from iobound.errors import IoboundError
    from search.strategies import make_options

    allowed = traceable_strategies()
    if strategy not in allowed:
        raise SystemExit(f"error: --strategy {strategy!r} has no model or optimizer to trace; "
                         f"choose one of {', '.join(allowed)}")
    try:
        make_options(strategy, options)
    except (TypeError, ValueError, IoboundError) as exc:
        raise SystemExit(f"error: --options: {exc}") from None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.explorer_stalls",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--spaces", nargs="+", type=Path, default=None)
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--budget", type=int, default=200)
    p.add_argument("--strategy", default="explorer")
    p.add_argument("--options", type=json.loads, default=None,
                   help="the strategy's options as JSON, e.g. '{\"stall\": null}'")
    p.add_argument("--min-stall", type=int, default=60)
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = p.parse_args(argv)
    if args.seeds < 1 or args.budget < 8:
        p.error("--seeds must be >= 1 and --budget >= 8")
    checked_strategy(args.strategy, args.options)
    paths = args.spaces or default_spaces()
    runs = [trace_run(path, seed, args.budget, args.strategy, args.options) for path in paths
            for seed in range(args.seeds)]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "explorer_stalls.json").write_text(json.dumps(
        {"strategy": args.strategy, "budget": args.budget, "min_stall": args.min_stall,
         "runs": runs}))
    plot(runs, args.min_stall, args.out / "explorer_stalls.png")
    for r in runs:
        e = r["end"]
        print(f"{r['space']} seed {r['seed']}: {r['score']:.3f}, stall {r['stall']}; best -> optimum "
              f"{e['best_to_opt']} changes; unmeasured neighbours of the best 1/3/8: "
              + ", ".join(f"{e[f'top{k}_unmeasured']}{' (optimum)' if e[f'top{k}_has_opt'] else ''}"
                          for k in (1, 3, 8)))
    print(summarise(runs, args.min_stall))
    return 0


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
