"""Summaries of search-quality runs: per (space, strategy, budget) rows, a markdown table, a plot.

Examples
--------
>>> from benchmarks.sq.recorded import RunResult
>>> runs = [RunResult("s", "random", 25, seed, 25, 1.0, score, score >= 1 / 1.05, e)
...         for seed, (score, e) in enumerate([(1.0, 10), (0.5, None), (0.96, 20)])]
>>> row = summarise(runs)[0]
>>> round(row.mean_score, 3), round(row.frac_within_5pct, 3), row.median_evals_to_5pct, row.n_reached
(0.82, 0.667, 15.0, 2)
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Sequence

from .recorded import RunResult

__all__ = ["SummaryRow", "summarise", "markdown_tables", "plot_scores", "best_kt_gaps"]


@dataclass(frozen=True)
class SummaryRow:
    """The runs of one (space, strategy, budget) cell, summarised.

    ``se_score`` is the standard error of the mean score (sample standard deviation
    over sqrt(n); ``None`` for one run, whose standard error is undefined). ``median_evals_to_5pct`` is over the ``n_reached``
    runs that came within 5% (``None`` when none did); ``mean_evals`` is the mean
    number of unique evaluations made (below the budget for strategies that stop early);
    ``mean_stall`` the mean number of evaluations since the last improvement at the end
    of a run (``None`` when the runs do not record it, e.g. rows read from an old summary).
    """

    space: str
    strategy: str
    budget: int
    n_runs: int
    mean_score: float
    std_score: float
    se_score: float | None
    min_score: float
    frac_within_5pct: float
    median_evals_to_5pct: float | None
    n_reached: int
    mean_evals: float
    mean_wall_s: float
    mean_cpu_s: float = 0.0
    mean_stall: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def summarise(runs: Iterable[RunResult]) -> list[SummaryRow]:
    """One :class:`SummaryRow` per (space, strategy, budget), in first-seen order."""
    cells: dict[tuple, list[RunResult]] = defaultdict(list)
    for r in runs:
        cells[(r.space, r.strategy, r.budget)].append(r)
    rows = []
    for (space, strategy, budget), rs in cells.items():
        scores = [r.score for r in rs]
        reached = [r.evals_to_5pct for r in rs if r.evals_to_5pct is not None]
        stalls = [r.stall for r in rs if r.stall is not None]
        rows.append(SummaryRow(
            space=space, strategy=strategy, budget=budget, n_runs=len(rs),
            mean_score=statistics.fmean(scores),
            std_score=statistics.stdev(scores) if len(scores) > 1 else 0.0,
            se_score=statistics.stdev(scores) / len(scores) ** 0.5 if len(scores) > 1 else None,
            min_score=min(scores),
            frac_within_5pct=sum(r.within_5pct for r in rs) / len(rs),
            median_evals_to_5pct=float(statistics.median(reached)) if reached else None,
            n_reached=len(reached),
            mean_evals=statistics.fmean(r.n_evals for r in rs),
            mean_wall_s=statistics.fmean(r.wall_s for r in rs),
            mean_cpu_s=statistics.fmean(r.cpu_s for r in rs),
            mean_stall=statistics.fmean(stalls) if stalls else None))
    return rows


def _ordered(values: Iterable) -> list:
    return list(dict.fromkeys(values))


def markdown_tables(rows: Sequence[SummaryRow]) -> str:
    """One markdown table per space: a strategy per row, ``mean ±se (% within 5%, stall)``
    per budget, the stall being the mean evaluations since the last improvement at the
    end of the runs (left out when the rows do not record it).

    The last column gives the median evaluations to reach 5% at the largest budget,
    with how many runs got there. A strategy that made fewer evaluations than the
    budget on average is marked ``*`` with its mean count.
    """
    out = []
    for space in _ordered(r.space for r in rows):
        srows = [r for r in rows if r.space == space]
        budgets = sorted({r.budget for r in srows})
        cell = {(r.strategy, r.budget): r for r in srows}
        head = ["strategy"] + [f"{b} evals" for b in budgets] + [f"evals to 5% (at {budgets[-1]})"]
        lines = [f"**{space}**: mean score = optimum / best found (1.0 = optimum) "
                 f"±standard error (% of runs within 5% of the optimum, mean stall: evaluations "
                 f"since the last improvement at the end of a run)", "",
                 "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for strategy in _ordered(r.strategy for r in srows):
            cells = []
            for b in budgets:
                r = cell.get((strategy, b))
                if r is None:
                    cells.append("-")
                    continue
                stall = "" if r.mean_stall is None else f", stall {r.mean_stall:.0f}"
                se = "" if r.se_score is None else f" ±{r.se_score:.3f}"  # none for one run
                text = f"{r.mean_score:.3f}{se} ({100 * r.frac_within_5pct:.0f}%{stall})"
                if r.mean_evals < b - 0.5:
                    text += f" *{r.mean_evals:.0f}"
                cells.append(text)
            last = cell.get((strategy, budgets[-1]))
            if last is None or last.median_evals_to_5pct is None:
                cells.append(f"- (0/{last.n_runs if last else 0})")
            else:
                cells.append(f"{last.median_evals_to_5pct:.0f} ({last.n_reached}/{last.n_runs})")
            lines.append("| " + " | ".join([strategy] + cells) + " |")
        out.append("\n".join(lines))
    note = ("`*N`: the strategy stopped by itself after N unique evaluations on average "
            "(fewer than the budget).")
    return "\n\n".join(out) + "\n\n" + note + "\n"


def best_kt_gaps(rows: Sequence[SummaryRow], ours: str = "explorer") -> list[dict]:
    """Per (space, budget): ``ours``'s mean score against the best Kernel Tuner strategy's.

    ``gap`` = ours - best (positive: ours is better); ``gap_se`` its standard error
    (independent runs; ``None`` when either cell has one run). Note that the best of several noisy means is biased upwards.

    Examples
    --------
    >>> rows = [SummaryRow("s", n, 25, 10, m, 0, 0, 0, 0, None, 0, 25, 0)
    ...         for n, m in [("explorer", 0.9), ("kt:pso", 0.95), ("kt:diff_evo", 0.8)]]
    >>> best_kt_gaps(rows)[0]["best_kt"], round(best_kt_gaps(rows)[0]["gap"], 3)
    ('kt:pso', -0.05)
    """
    out = []
    for space in _ordered(r.space for r in rows):
        for budget in sorted({r.budget for r in rows if r.space == space}):
            cell = [r for r in rows if r.space == space and r.budget == budget]
            mine = [r for r in cell if r.strategy == ours]
            kt = [r for r in cell if r.strategy.startswith("kt:")]
            if not mine or not kt:
                continue
            best = max(kt, key=lambda r: r.mean_score)
            out.append({"space": space, "budget": budget, "ours": ours,
                        "ours_mean_score": mine[0].mean_score, "best_kt": best.strategy,
                        "best_kt_mean_score": best.mean_score,
                        "gap": mine[0].mean_score - best.mean_score,
                        "gap_se": None if None in (mine[0].se_score, best.se_score)
                        else (mine[0].se_score ** 2 + best.se_score ** 2) ** 0.5,
                        "ours_frac_within_5pct": mine[0].frac_within_5pct,
                        "best_kt_frac_within_5pct": best.frac_within_5pct})
    return out


#: Our strategies: solid, dark/neutral colours (the explorer black and thickest).
_OURS_COLOURS = ("black", "#7f7f7f", "#8c564b", "#bcbd22", "#17becf")
#: Kernel Tuner's: dashed, bright colours, a marker each.
_KT_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#e377c2", "#17becf",
               "#393b79", "#e7ba52", "#31a354", "#843c39", "#7b4173", "#6b6ecf")
_KT_MARKERS = ("o", "s", "^", "v", "D", "x", "P", "*", "h", "<", ">", "d", "p")


def _line_styles(strategies: Sequence[str]) -> dict[str, dict]:
    out, ours, kt = {}, 0, 0
    for s in strategies:
        if s.startswith("kt:"):
            out[s] = dict(color=_KT_COLOURS[kt % len(_KT_COLOURS)],
                          marker=_KT_MARKERS[kt % len(_KT_MARKERS)], markersize=4,
                          linestyle="--", linewidth=1.1)
            kt += 1
        else:
            out[s] = dict(color=_OURS_COLOURS[ours % len(_OURS_COLOURS)], marker="o",
                          markersize=5, linestyle="-", linewidth=3.0 if ours == 0 else 2.0)
            ours += 1
    return out


def plot_scores(rows: Sequence[SummaryRow], path: str | Path) -> Path:
    """Mean score (top) and fraction within 5% (bottom) against the budget; a panel per space.

    Our strategies are solid lines (the first, normally the explorer, black), Kernel
    Tuner's dashed.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    spaces = _ordered(r.space for r in rows)
    strategies = _ordered(r.strategy for r in rows)
    fig, axes = plt.subplots(2, len(spaces), figsize=(5.2 * len(spaces), 8.4), squeeze=False,
                             sharex=True)
    styles = _line_styles(strategies)
    for col, space in enumerate(spaces):
        for strategy in strategies:
            pts = sorted((r.budget, r.mean_score, r.frac_within_5pct) for r in rows
                         if r.space == space and r.strategy == strategy)
            if not pts:
                continue
            b, m, f = zip(*pts)
            axes[0, col].plot(b, m, label=strategy, **styles[strategy])
            axes[1, col].plot(b, f, label=strategy, **styles[strategy])
        axes[0, col].set_title(space)
        axes[0, col].set_ylabel("mean optimum / best found")
        axes[1, col].set_ylabel("fraction of runs within 5%")
        axes[1, col].set_xlabel("unique evaluations (budget)")
        for row in (0, 1):
            axes[row, col].set_xscale("log", base=2)
            axes[row, col].grid(True, alpha=0.3)
        budgets = sorted({r.budget for r in rows if r.space == space})
        axes[1, col].set_xticks(budgets, [str(b) for b in budgets])
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(6, len(labels)), fontsize=8)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
