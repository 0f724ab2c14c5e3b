"""The transfer benchmark's files: runs written and read back, and what is written with them.

:func:`write_outputs` writes ``<tag>_runs.json`` (every run), ``<tag>_summary.json`` (the
means, and the issue's goals checked: :mod:`.goals`), ``<tag>.md`` (the table and the goals,
as printed) and ``<tag>.png``; :func:`read_runs` reads a runs file back (for ``--reuse`` and
``--summarise``), one error line when the file is not one.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> from benchmarks.tq.runner import TargetRun
>>> out = Path(tempfile.mkdtemp())
>>> runs = [TargetRun("A", "explorer", 0, {10: 0.5})]
>>> print(write_outputs(out, "t", runs, {"seeds": 1}, "T", plot=False).splitlines()[2])
| A | explorer | 0.500 |
>>> got, meta = read_runs(out / "t_runs.json")
>>> [r.__dict__ for r in got] == [r.__dict__ for r in runs], meta
(True, {'seeds': 1})
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from .goals import check_goals, goals_markdown
from .report import markdown_table, plot_scores, summarise
from .runner import TargetRun

__all__ = ["write_outputs", "read_runs", "new_shape_targets", "reused_runs", "runs_title"]


def write_outputs(out: Path, tag: str, runs: list, meta: dict, title: str,
                  plot: bool = True) -> str:
    """Write runs, summary (with the issue's goals checked), table and plot under ``tag``
    in ``out``; the table and the goals, as printed."""
    rows = summarise(runs)
    goals = check_goals(runs)
    text = f"{markdown_table(rows)}\n\n{goals_markdown(goals)}"
    extra = {}
    new = new_shape_targets(meta)
    if new and len(new) < len(goals["targets"]):  # some targets' shapes are in the history
        extra["goals_new_shapes"] = check_goals([r for r in runs if r.target in new])
        text += "\n\n" + goals_markdown(extra["goals_new_shapes"],
                                         "the targets no history layer has the shape of, these")
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{tag}_runs.json").write_text(json.dumps(
        {"meta": meta, "runs": [r.__dict__ for r in runs]}, indent=1))
    (out / f"{tag}_summary.json").write_text(json.dumps(
        {"meta": meta, "summary": rows, "goals": goals, **extra}, indent=1))
    (out / f"{tag}.md").write_text(f"# {title} ({meta['seeds']} seeds)\n\n{text}\n",
                                   encoding="utf-8")  # ± and — whatever the locale
    if plot:
        plot_scores(rows, out / f"{tag}.png")
    return text


def new_shape_targets(meta: dict) -> set[str] | None:
    """The targets of a leave-network-out run whose shape no history layer has (their
    history holds no measurement of their own problem); None for runs without the record.

    >>> sorted(new_shape_targets({"targets": [{"target": "a", "same_shape_in_history": []},
    ...                                       {"target": "b", "same_shape_in_history": ["x"]}]}))
    ['a']
    """
    targets = meta.get("targets")
    if not isinstance(targets, list) or not all(
            isinstance(t, dict) and "same_shape_in_history" in t for t in targets):
        return None
    return {t["target"] for t in targets if not t["same_shape_in_history"]}


def read_runs(path: Path) -> tuple[list[TargetRun], dict]:
    """(runs, meta) of a runs file this benchmark wrote (either half); one error line if it
    is not one."""
    try:
        data = json.loads(Path(path).read_text())
        runs = [TargetRun(r["target"], r["method"], int(r["seed"]),
                          {int(b): v for b, v in r["scores"].items()}) for r in data["runs"]]
        meta = dict(data["meta"])
        int(meta["seeds"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise SystemExit(f"error: {path} is not a runs file of this benchmark: "
                         f"{type(e).__name__}: {e}") from None
    return runs, meta


#: What must agree between a runs file's target and this run's for a run to be reused.
FINGERPRINT = ("file_sha256", "history_sha256")


def reused_runs(files: Sequence[Path], budgets: list[int], targets: dict) -> dict:
    """(space, method, seed) -> run, from earlier runs files with exactly these budgets,
    of a target whose file and history are this run's (``targets``: this run's
    :func:`~benchmarks.tq.runner.history_summary`, compared on :data:`FINGERPRINT` with the
    file's own; a file written before it recorded them has none to match). The runs left
    out are counted in a notice on stderr."""
    import sys
    out = {}
    for f in files:
        runs, meta = read_runs(f)
        theirs = meta.get("targets") or {}
        same = {t for t, fp in targets.items() if isinstance(theirs.get(t), dict)
                and all(theirs[t].get(k) == fp.get(k) is not None for k in FINGERPRINT)}
        skipped = 0
        for r in runs:
            if sorted(r.scores) != budgets:
                continue
            if r.target in same:
                out[(r.target, r.method, r.seed)] = r
            else:
                skipped += 1
        if skipped:
            print(f"note: {f}: {skipped} run(s) not reused: their target's file or history "
                  "differs from this run's (or the file records no fingerprint of them)",
                  file=sys.stderr)
    return out


def runs_title(meta: dict) -> str:
    """The table's title for a runs file's meta (either half).

    >>> runs_title({"target_network": "resnet50", "history_networks": ["resnet18", "vgg16"]})
    'Leave-network-out: resnet50 from resnet18 + vgg16'
    >>> runs_title({"spaces": ["a", "b"]})
    'Transfer quality'
    """
    if "target_network" not in meta:
        return "Transfer quality"
    return (f"Leave-network-out: {meta['target_network']} from "
            f"{' + '.join(meta.get('history_networks', []))}")
