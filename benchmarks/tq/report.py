"""Summaries of transfer runs: mean score per (target, method, budget), a Markdown table, a plot.

Examples
--------
>>> from benchmarks.tq.runner import TargetRun
>>> runs = [TargetRun("A", "explorer", s, {10: v}) for s, v in enumerate([0.5, 0.7])]
>>> rows = summarise(runs)
>>> [(r["target"], r["method"], r["budget"], r["mean"], r["n"]) for r in rows]
[('A', 'explorer', 10, 0.6, 2)]
>>> print(markdown_table(rows).splitlines()[2])
| A | explorer | 0.600 ± 0.100 |
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Sequence

__all__ = ["summarise", "markdown_table", "plot_scores", "MEAN"]

#: The row label of the mean over targets.
MEAN = "mean"


def summarise(runs: Iterable) -> list[dict]:
    """One row per (target, method, budget) and per (mean over targets, method, budget),
    unrounded (rounded once, where printed: rounding twice moves a third decimal)."""
    cells: dict[tuple, list[float]] = defaultdict(list)
    runs = list(runs)
    for r in runs:
        for b, v in r.scores.items():
            if v is not None:
                cells[(r.target, r.method, int(b))].append(v)
    rows, means = [], {}
    for (t, m, b), vals in cells.items():
        # one seed has no standard error (None), not a zero one
        se = statistics.stdev(vals) / len(vals) ** 0.5 if len(vals) > 1 else None
        means[(t, m, b)] = statistics.fmean(vals)
        rows.append({"target": t, "method": m, "budget": b, "n": len(vals),
                     "mean": means[(t, m, b)], "se": se, "min": min(vals)})
    targets = sorted({r.target for r in runs})  # a target a method could not score included
    for m, b in sorted({(r["method"], r["budget"]) for r in rows}):
        per = [v for (_, m2, b2), v in means.items() if (m2, b2) == (m, b)]  # unrounded
        if len(per) == len(targets) and len(targets) > 1:
            rows.append({"target": MEAN, "method": m, "budget": b, "n": len(per),
                         "mean": statistics.fmean(per), "se": None, "min": min(per)})
    return rows


def _methods(rows: Sequence[dict]) -> list[str]:
    return list(dict.fromkeys(r["method"] for r in rows))


def markdown_table(rows: Sequence[dict]) -> str:
    """Targets x methods, one column per budget: mean optimum/best ± standard error (none
    for one seed, nor for the mean over the targets)."""
    budgets = sorted({r["budget"] for r in rows})
    cell = {(r["target"], r["method"], r["budget"]): r for r in rows}
    targets = sorted({r["target"] for r in rows} - {MEAN}) + ([MEAN] if any(
        r["target"] == MEAN for r in rows) else [])
    lines = ["| target | method | " + " | ".join(f"{b}" for b in budgets) + " |",
             "|---|---|" + "---|" * len(budgets)]
    for t in targets:
        for m in _methods(rows):
            vals = [cell.get((t, m, b)) for b in budgets]
            if not any(vals):
                continue
            text = [("—" if v is None else f"{v['mean']:.3f}" + (
                f" ± {v['se']:.3f}" if v["se"] is not None else "")) for v in vals]
            lines.append(f"| {t} | {m} | " + " | ".join(text) + " |")
    return "\n".join(lines)


def plot_scores(rows: Sequence[dict], path: str | Path) -> Path:
    """One panel per target (and the mean): mean score against budget, one line per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    targets = sorted({r["target"] for r in rows} - {MEAN})
    if any(r["target"] == MEAN for r in rows):
        targets.append(MEAN)
    fig, axes = plt.subplots(1, len(targets), figsize=(4 * len(targets), 3.4), squeeze=False)
    for ax, t in zip(axes[0], targets):
        for m in _methods(rows):
            pts = sorted((r["budget"], r["mean"]) for r in rows if r["target"] == t and r["method"] == m)
            if pts:
                ax.plot(*zip(*pts), marker="o", label=m)
        ax.set_title(t)
        ax.set_xscale("log")
        ax.set_xlabel("evaluations (zero-shot: K)")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("optimum / best found")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)
