"""Kernel Tuner results of an earlier benchmark run, reused instead of running them again.

Kernel Tuner's strategies do not change when ours do, and they are most of the
benchmark's CPU time; ``--reuse-kt`` takes their results from an earlier
``search_quality_runs.json`` (every run; not kept in the repository) or
``search_quality_summary.json`` (a row per cell; kept in ``benchmarks/results``).

Examples
--------
>>> import json, tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> row = {"space": "s", "strategy": "kt:pso", "budget": 25, "n_runs": 2, "mean_score": 0.7,
...        "std_score": 0, "se_score": 0, "min_score": 0.7, "frac_within_5pct": 0,
...        "median_evals_to_5pct": None, "n_reached": 0, "mean_evals": 25, "mean_wall_s": 0}
>>> meta = {"kernel_tuner": kt_version(), "seeds": [0, 1]}
>>> _ = (d / "summary.json").write_text(json.dumps({"meta": meta, "summary": [row]}))
>>> runs, rows = reusable_kt(d / "summary.json", drop_failed=False, seeds=[0, 1])
>>> runs, rows[("s", "kt:pso", 25)].mean_score
({}, 0.7)
>>> reusable_kt(d / "summary.json", drop_failed=False, seeds=[0, 1, 2])[1]
{}
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from .kt_runner import kt_version
from .report import SummaryRow

__all__ = ["reusable_kt"]

log = logging.getLogger(__name__)


#: What must agree between a space the earlier file recorded and this run's.
SPACE_KEYS = ("device", "size", "n_ok", "optimum_ms", "params")


def _same_spaces(meta: dict, spaces: dict | None) -> set | None:
    """The names of ``spaces`` (name -> this run's ``describe()``) that the earlier file
    recorded as the same recording (:data:`SPACE_KEYS`); ``None``: no check asked."""
    if spaces is None:
        return None
    theirs = {s.get("name"): s for s in meta.get("spaces") or [] if isinstance(s, dict)}
    same = {n for n, d in spaces.items() if n in theirs
            and all(theirs[n].get(k) == d.get(k) for k in SPACE_KEYS)}
    for n in sorted(set(spaces) - same):
        log.warning("space %s is not the recording the earlier file scored: its Kernel Tuner "
                    "results are not reused", n)
    return same


def reusable_kt(path: Path, drop_failed: bool, seeds: list[int],
                spaces: dict | None = None) -> tuple[dict, dict]:
    """Kernel Tuner results of an earlier run: ``(runs, rows)``.

    From a runs JSON (``search_quality_runs.json``): every ``kt:*`` run, keyed by
    (space, strategy, budget, seed); ``rows`` is empty. From a summary JSON
    (``search_quality_summary.json``, the one kept in the repository): the ``kt:*``
    summary rows made with exactly ``seeds``, every one of them (a cell some of whose
    runs failed is run again), keyed by (space, strategy, budget); ``runs`` is empty (a
    reused cell is taken whole, never mixed with new runs). With ``spaces`` (name -> this
    run's ``describe()``), only spaces the earlier file recorded as the same recording.
    Refused (``SystemExit``) when the file was made with another Kernel Tuner version
    or the other failure mode, so that a stale result is never mixed in silently.
    """
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise SystemExit(f"error: cannot read {path}: {exc}") from exc
    meta = data.get("meta", {})
    mode = "dropped from the space" if drop_failed else "part of the space"
    if meta.get("kernel_tuner") != kt_version() or meta.get("failed_entries", mode) != mode:
        raise SystemExit(f"error: {path} was made with kernel_tuner {meta.get('kernel_tuner')!r} "
                         f"and failures {meta.get('failed_entries')!r}; this run has "
                         f"{kt_version()!r} and {mode!r}")
    same = _same_spaces(meta, spaces)
    if "runs" in data:
        return {(r["space"], r["strategy"], r["budget"], r["seed"]): r for r in data["runs"]
                if r["strategy"].startswith("kt:") and "error" not in r
                and (same is None or r["space"] in same)}, {}
    if "summary" not in data:
        raise SystemExit(f"error: {path} is neither a runs nor a summary JSON of this benchmark")
    if meta.get("seeds") != seeds:
        log.warning("%s summarises seeds %s..., not the %d asked: its rows are not reused",
                    path, meta.get("seeds", [])[:3], len(seeds))
        return {}, {}
    failed = {(e.get("space"), e.get("strategy"), e.get("budget"))
              for e in data.get("errors") or [] if isinstance(e, dict)}
    return {}, {(r["space"], r["strategy"], r["budget"]): SummaryRow(**r)
                for r in data["summary"] if r["strategy"].startswith("kt:")
                and r.get("n_runs") == len(seeds)
                and (r["space"], r["strategy"], r["budget"]) not in failed
                and (same is None or r["space"] in same)}
