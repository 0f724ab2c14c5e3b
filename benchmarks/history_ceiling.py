"""How far history can take a target at all: the ceiling of transfer, leave one device out.

Before asking a transfer method for a score, ask what its candidates could give.
For every cache file as the target (its history: the other files' records of the same
parameters from other devices, exactly as ``benchmarks/transfer_quality.py`` builds
it, the target's own records never in it), this prints

- ``prior@K``: the target's best score (``optimum / time``, 1.0 = the optimum) among
  the first K configurations the history rounds measure
  (:meth:`search.transfer.HistoryPrior.picker`: the consensus's best, each source's
  best, the consensus's second...);
- ``sources@K``: the best score among the configurations that *any* source device
  ranks in its own K best: no method that measures only what the history ranks in
  its top K (whatever it does with the ranks) can do better;
- ``rank>=T``: the best rank any source gives to a target configuration scoring at
  least T (0-based; ``-`` when no source measured one): the number of history
  picks it takes, at the least, before such a configuration can come up.

and, in a second table, what the target's space holds without any history:

- ``random@K``: the expected best score of K configurations drawn at random without
  replacement (exact, :func:`expected_best_of_random`; a failed one scores 0), the
  search any method must beat;
- ``n>=T``: how many configurations score at least T, of ``size``.

Usage (from the repository root)::

    .venv/bin/python -m benchmarks.history_ceiling                  # the convolution spaces
    .venv/bin/python -m benchmarks.history_ceiling --spaces a.json.gz b.json.gz c.json.gz

Writes ``<tag>.json`` and ``<tag>.md`` into ``--out`` (default ``benchmarks/results``,
tag ``history_ceiling``).

``--leave-network-out SUMMARY...`` does the same for leave-network-out runs of our conv
template instead (:mod:`benchmarks.tq.network_ceiling`): for each summary a
``benchmarks.transfer_quality --leave-network-out`` run wrote, the history it used is built
again (the same networks, device and budget) and each target layer gets, against that run's
reference, the best score among the first K of the ranking model's order, the regression's
(zero-shot's) and the history rounds' first picks (tag ``history_ceiling_network``; a
summary with the history and targets of an earlier one, another method's run on the same
set, is skipped)::

    .venv/bin/python -m benchmarks.history_ceiling --leave-network-out \
        benchmarks/results/transfer_network_resnext50_h100_summary.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a file: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.score import speed_score
from benchmarks.transfer_quality import REPO, SPACES_DIR, check_targets, space_names
from benchmarks.tq.runner import Target, load_targets

DEFAULT_KS = (1, 5, 10, 25, 50, 100)
DEFAULT_THRESHOLDS = (0.7, 0.85, 0.9, 0.95)


def target_scores(target: Target) -> np.ndarray:
    """``optimum / time`` of every configuration of the target's space (0 where it failed)."""
    space = target.space
    out = np.zeros(len(space))
    for e in space.cache.entries:
        t = e.get("time")
        i = space.index({p: e[p] for p in space.cache.tune_params})
        if i is not None and isinstance(t, (int, float)):
            out[i] = max(out[i], speed_score(target.optimum, t))
    return out


def ceiling(target: Target, ks) -> dict:
    """``{"prior": {K: score}, "sources": {K: score}}`` (module doc); a score is 0.0 when
    the history gives no candidate."""
    score = target_scores(target)
    picker = target.prior.picker() if target.prior else None
    order = picker.picks(max(ks), set()) if picker else []
    groups = target.prior.groups if target.prior else []

    def best(idx) -> float:
        return float(score[np.asarray(idx, dtype=np.int64)].max()) if len(idx) else 0.0

    return {"prior": {k: best(order[:k]) for k in ks},
            "sources": {k: best(np.unique(np.concatenate([g.indices[:k] for g in groups])))
                        if groups else 0.0 for k in ks}}


def best_source_rank(target: Target, thresholds) -> dict:
    """``{T: rank}``: the best rank a source gives to a target configuration scoring >= T
    (``None`` when no source measured one)."""
    score = target_scores(target)
    rank = np.full(len(score), np.iinfo(np.int64).max)
    for g in target.prior.groups if target.prior else []:
        rank[g.indices] = np.minimum(rank[g.indices], np.arange(len(g.indices)))
    out = {}
    for t in thresholds:
        r = rank[score >= t]
        out[t] = int(r.min()) if len(r) and r.min() < np.iinfo(np.int64).max else None
    return out


def expected_best_of_random(scores, k: int) -> float:
    """The expected maximum of ``k`` of ``scores`` drawn uniformly without replacement.

    Sorted best first, the i-th (from 1) is the maximum when it is drawn and none of
    the i - 1 better ones is: ``C(N - i, k - 1) / C(N, k)``, which starts at ``k / N`` and
    goes from i to i + 1 by the factor ``(N - i - k + 1) / (N - i)``.

    >>> round(expected_best_of_random([1.0, 0.5, 0.0], 2), 4)  # pairs (1, .5) (1, 0) (.5, 0)
    0.8333
    >>> expected_best_of_random([0.3, 0.9], 5)
    0.9
    """
    s = np.sort(np.asarray(scores, dtype=float))[::-1]
    n = len(s)
    if k >= n:
        return float(s[0]) if n else 0.0
    p, total = k / n, 0.0
    for i in range(1, n - k + 2):
        total += p * s[i - 1]
        p *= (n - i - k + 1) / (n - i) if n > i else 0.0
    return float(total)


def alone(target: Target, ks, thresholds) -> dict:
    """``{"size", "random": {K: expected best of K at random}, "count": {T: n >= T}}``."""
    score = target_scores(target)
    return {"size": len(score), "random": {k: expected_best_of_random(score, k) for k in ks},
            "count": {t: int((score >= t).sum()) for t in thresholds}}


def alone_markdown(rows: list[dict], ks, thresholds) -> str:
    """The second table: each target's space without history."""
    head = [f"random@{k}" for k in ks] + [f"n>={t}" for t in thresholds] + ["size"]
    lines = ["| target | " + " | ".join(head) + " |", "|---" * (len(head) + 1) + "|"]
    for r in rows:
        a = r["alone"]
        cells = ([f"{a['random'][k]:.3f}" for k in ks] + [str(a["count"][t]) for t in thresholds]
                 + [str(a["size"])])
        lines.append(f"| {r['target']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def markdown(rows: list[dict], ks, thresholds) -> str:
    """The table: a row per target, then the mean of the ceilings."""
    head = ([f"prior@{k}" for k in ks] + [f"sources@{k}" for k in ks]
            + [f"rank>={t}" for t in thresholds])
    lines = ["| target | " + " | ".join(head) + " |", "|---" * (len(head) + 1) + "|"]
    for r in rows:
        cells = ([f"{r['prior'][k]:.3f}" for k in ks] + [f"{r['sources'][k]:.3f}" for k in ks]
                 + ["-" if r["rank"][t] is None else str(r["rank"][t]) for t in thresholds])
        lines.append(f"| {r['target']} | " + " | ".join(cells) + " |")
    mean = ([f"{np.mean([r['prior'][k] for r in rows]):.3f}" for k in ks]
            + [f"{np.mean([r['sources'][k] for r in rows]):.3f}" for k in ks] + [""] * len(thresholds))
    lines.append("| mean | " + " | ".join(mean) + " |")
    return "\n".join(lines)


def network_markdown(sets: list[dict], ks) -> str:
    """The leave-network-out table: a row per target of each set, then each set's mean."""
    from benchmarks.tq.network_ceiling import LISTS
    head = [f"{name}@{k}" for name in LISTS for k in ks]
    lines = ["| set | target | " + " | ".join(head) + " |", "|---" * (len(head) + 2) + "|"]
    for st in sets:
        for r in st["rows"] + [{"target": "mean", **st["mean"]}]:
            cells = [f"{r[name][k]:.3f}" for name in LISTS for k in ks]
            new = "" if r["target"] == "mean" or r["same_problem"] else " (new)"
            lines.append(f"| {st['set']} | {r['target']}{new} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _summary_set(path: Path) -> tuple:
    """What a leave-network-out summary's ceilings depend on: its history (networks, device,
    budget) and its targets with their references; the method that ran does not enter."""
    try:
        meta = json.loads(Path(path).read_text())["meta"]
        return (tuple(meta["history_networks"]), meta["device"], meta["history_budget"],
                tuple((t["target"], float(t["reference_ms"])) for t in meta["targets"]),
                meta.get("target_network", "?"))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"error: {path} is not a leave-network-out summary "
                         f"(benchmarks.transfer_quality --leave-network-out): {e}") from None


def _network_set(path: Path, ks) -> dict:
    """The ceilings of every target of one leave-network-out summary."""
    from benchmarks.tq.network import network_history
    from benchmarks.tq.network_ceiling import layer_ceiling, mean_ceiling
    from iobound.networks import get_layer
    nets, device, budget, targets, target_network = _summary_set(path)
    history = network_history(list(nets), device, budget)
    rows = [layer_ceiling(get_layer(name), device, history, ref, ks) for name, ref in targets]
    name = Path(path).name.removesuffix(".json").removesuffix("_summary")
    return {"set": f"{target_network}/{device} ({name})", "summary": str(path),
            "rows": rows, "mean": mean_ceiling(rows, ks)}


def distinct_summaries(paths: list[Path]) -> list[Path]:
    """``paths`` keeping one summary of each history and targets: another method's run on
    the same set (``*_reopen``, ``*_keep_trusted``) has the same ceilings. The one with the
    shortest name (the plain run) stands for them, where the first of them stood."""
    kept: dict[tuple, Path] = {}
    for p in paths:
        key = _summary_set(p)
        if key in kept:
            p, other = sorted((p, kept[key]), key=lambda q: (len(q.name), q.name))
            print(f"skipped {other}: the same history and targets as {p}")
        kept[key] = p
    return list(kept.values())


def _main_network(a, ks) -> int:
    sets = [_network_set(p, ks) for p in distinct_summaries(a.leave_network_out)]
    table = network_markdown(sets, ks)
    tag = "history_ceiling_network" if a.tag == "history_ceiling" else a.tag
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / f"{tag}.json").write_text(json.dumps(
        {"meta": {"ks": ks, "score": "the run's reference / time (model measurer)"},
         "sets": sets}, indent=1))
    (a.out / f"{tag}.md").write_text(f"# History ceiling (leave network out)\n\n{table}\n",
                                     encoding="utf-8")
    print(table)
    return 0


def add_spaces_argument(ap: argparse.ArgumentParser) -> None:
    """``--spaces FILE...``: the cache files, each a target in turn (default: the shared
    convolution spaces, when ../shared is there); see :func:`check_spaces`."""
    ap.add_argument("--spaces", nargs="+", type=Path,
                    default=sorted(SPACES_DIR.glob("convolution_*.json.gz")),
                    help="Kernel Tuner cache files, each a target in turn")


def check_spaces(spaces: list[Path]) -> None:
    """``--spaces`` as the leave-one-device-out scripts take it: at least two files, each
    there and a target (``check_targets``); else one error line naming what is wrong."""
    missing = [str(p) for p in spaces if not Path(p).is_file()]
    if missing:
        raise SystemExit(f"error: --spaces: no such file: {', '.join(missing)}")
    if len(spaces) < 2:
        where = "" if spaces else f" (none given, none found in {SPACES_DIR})"
        raise SystemExit(f"error: need at least two Kernel Tuner cache files, each a target in "
                         f"turn{where}: give them with --spaces FILE FILE ...")
    check_targets(spaces)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_spaces_argument(ap)
    ap.add_argument("--ks", type=int, nargs="+", default=list(DEFAULT_KS))
    ap.add_argument("--thresholds", type=float, nargs="+", default=list(DEFAULT_THRESHOLDS))
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    ap.add_argument("--tag", default="history_ceiling", help="output file name prefix")
    ap.add_argument("--leave-network-out", nargs="+", type=Path, default=[], metavar="SUMMARY",
                    help="leave-network-out summaries (transfer_quality --leave-network-out): "
                         "the ceilings of their target layers instead")
    a = ap.parse_args(argv)
    if a.leave_network_out:
        if any(k < 1 for k in a.ks):
            raise SystemExit("error: --ks must be >= 1")
        return _main_network(a, sorted(set(a.ks)))
    if any(k < 1 for k in a.ks) or any(not 0 < t <= 1 for t in a.thresholds):
        raise SystemExit("error: --ks must be >= 1 and --thresholds in (0, 1]")
    ks, ts = sorted(set(a.ks)), sorted(set(a.thresholds))
    check_spaces(a.spaces)
    targets = load_targets([str(p) for p in a.spaces], space_names(list(a.spaces)))
    rows = [{"target": t.name, "device": t.device, **ceiling(t, ks),
             "rank": best_source_rank(t, ts), "alone": alone(t, ks, ts)} for t in targets]
    table = (markdown(rows, ks, ts) + "\n\nThe target's space alone (no history):\n\n"
             + alone_markdown(rows, ks, ts))
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / f"{a.tag}.json").write_text(json.dumps(
        {"meta": {"spaces": [str(p) for p in a.spaces], "ks": ks, "thresholds": ts,
                  "score": "optimum / time on the target"}, "rows": rows}, indent=1))
    (a.out / f"{a.tag}.md").write_text(f"# History ceiling (leave one device out)\n\n{table}\n",
                                       encoding="utf-8")
    print(table)
    return 0


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
