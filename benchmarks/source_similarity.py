"""Which likeness should say which source the history rounds follow: an offline judge.

The history rounds first measure the picker's order (the consensus's best, every
source's best, the consensus's next...: ``prior@K`` of ``benchmarks/history_ceiling.py``).
After those, a judged round could instead take the consensus with each source weighted
by how like the target it has been on what the target measured so far
(``exp(match * (s - the best s))``, :meth:`search.transfer.HistoryPrior.weighted_order`,
as ``matched_order`` does).
Which likeness ``s`` to use decides which source is followed. Without tuning, the
target's recorded times standing in for its measurements, leave one device out as
``benchmarks/transfer_quality.py`` builds the history, this prints the best target score
(``optimum / time``) among the first K picks of each sequence:

- ``picker``: the picker's order throughout (what the history rounds walk today);
- ``kendall``: after the first ``--first`` picks, rounds of ``--batch`` from the consensus
  weighted by Kendall's tau of each source with the target (``matched_order``);
- ``weighted``: the same weighted by scipy's weighted tau (hyperbolic weights by rank,
  the fastest first): agreement among the fast configurations counts more than in the
  bulk, the order the history rounds want to follow.

Usage (from the repository root)::

    .venv/bin/python -m benchmarks.source_similarity                  # the convolution spaces
    .venv/bin/python -m benchmarks.source_similarity --spaces a.json b.json c.json

Writes ``<tag>.json`` and ``<tag>.md`` into ``--out`` (default ``benchmarks/results``, tag
``source_similarity``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a file: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.history_ceiling import add_spaces_argument, check_spaces, target_scores
from benchmarks.transfer_quality import REPO, space_names
from benchmarks.tq.runner import Target, load_targets

LIKENESSES = ("kendall", "weighted")
SEQUENCES = ("picker",) + LIKENESSES
DEFAULT_KS = (4, 8, 12, 16, 25, 33, 50)


def likeness(source_times: dict[int, float], known: dict[int, float], kind: str) -> float:
    """How one source's times order the target's ``known`` costs (index -> cost): Kendall's
    tau, or the weighted tau, which counts agreement among the fastest most; 0.0 below
    three shared configurations or when either side is constant.

    >>> src = {0: 1.0, 1: 2.0, 2: 3.0, 3: 4.0}
    >>> likeness(src, {0: 1.0, 1: 2.0, 2: 4.0, 3: 3.0}, "kendall")  # one slow pair swapped
    0.6666666666666669
    >>> round(likeness(src, {0: 1.0, 1: 2.0, 2: 4.0, 3: 3.0}, "weighted"), 3)  # counts less
    0.813
    >>> round(likeness(src, {0: 2.0, 1: 1.0, 2: 3.0, 3: 4.0}, "weighted"), 3)  # the top swapped
    0.52
    """
    from scipy.stats import kendalltau, weightedtau

    both = [(source_times[i], c) for i, c in known.items() if i in source_times]
    if len(both) < 3:
        return 0.0
    a, b = (np.array(v, dtype=float) for v in zip(*both))
    tau = kendalltau(a, b)[0] if kind == "kendall" else weightedtau(-a, -b)[0]
    return 0.0 if np.isnan(tau) else float(tau)


def sequences(target: Target, first: int, batch: int, length: int,
              match: float) -> dict[str, list[int]]:
    """``{name: the first length picks}`` for each of :data:`SEQUENCES` (module doc)."""
    score = target_scores(target)
    prior = target.prior
    picker = prior.picker()
    start = picker.picks(min(first, length), set())
    out = {"picker": start + picker.picks(length - len(start), set(start))}
    times = prior.rel_times
    for kind in LIKENESSES:
        seq = list(start)
        while len(seq) < length:
            known = {i: 1.0 / score[i] for i in seq if score[i] > 0}
            s = [likeness(t, known, kind) for t in times]
            asked = set(seq)
            new = [int(i) for i in prior.weighted_order(s, match) if int(i) not in asked][:batch]
            if not new:
                break
            seq += new
        out[kind] = seq[:length]
    return out


def best_at(target: Target, seqs: dict[str, list[int]], ks) -> dict[str, dict[int, float]]:
    """``{name: {K: the best target score among the first K picks}}``."""
    score = target_scores(target)
    return {name: {k: float(score[np.asarray(seq[:k], dtype=np.int64)].max()) if seq[:k] else 0.0
                   for k in ks} for name, seq in seqs.items()}


def markdown(rows: list[dict], ks) -> str:
    """A row per target and sequence, then the means."""
    lines = ["| target | sequence | " + " | ".join(f"@{k}" for k in ks) + " |",
             "|---" * (len(ks) + 2) + "|"]
    for r in rows + [{"target": "mean", "best": {
            name: {k: float(np.mean([r["best"][name][k] for r in rows])) for k in ks}
            for name in SEQUENCES}}]:
        for name in SEQUENCES:
            cells = [f"{r['best'][name][k]:.3f}" for k in ks]
            lines.append(f"| {r['target']} | {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_spaces_argument(ap)
    ap.add_argument("--ks", type=int, nargs="+", default=list(DEFAULT_KS))
    ap.add_argument("--first", type=int, default=8,
                    help="picks of the picker before the judged rounds (default 8: two "
                         "unjudged rounds of 4)")
    ap.add_argument("--batch", type=int, default=4, help="picks per judged round")
    ap.add_argument("--match", type=float, default=15.0,
                    help="sharpness of the weights (GuidedOptions.match)")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    ap.add_argument("--tag", default="source_similarity", help="output file name prefix")
    a = ap.parse_args(argv)
    if any(k < 1 for k in a.ks) or a.first < 1 or a.batch < 1 or a.match < 0:
        raise SystemExit("error: --ks, --first and --batch must be >= 1 and --match >= 0")
    ks = sorted(set(a.ks))
    check_spaces(a.spaces)
    targets = load_targets([str(p) for p in a.spaces], space_names(list(a.spaces)))
    rows = [{"target": t.name, "device": t.device,
             "best": best_at(t, sequences(t, a.first, a.batch, max(ks), a.match), ks)}
            for t in targets]
    table = markdown(rows, ks)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / f"{a.tag}.json").write_text(json.dumps(
        {"meta": {"spaces": [str(p) for p in a.spaces], "ks": ks, "first": a.first,
                  "batch": a.batch, "match": a.match,
                  "score": "optimum / time on the target"}, "rows": rows}, indent=1))
    (a.out / f"{a.tag}.md").write_text(
        f"# Which likeness picks the sources (leave one device out, offline)\n\n{table}\n",
        encoding="utf-8")
    print(table)
    return 0


if __name__ == "__main__":
    from search.cli.script_entry import run_script
    sys.exit(run_script(main))
