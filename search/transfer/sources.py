"""History records grouped by source, and what the sources agree on.

A *source* is one workload on one device (:func:`timed_by_source`). Each source's
times are divided by its own best (devices of different speed share one scale) and
the source is weighted by how well its problem matches the target's (Mu et al.'s
match score to the power ``omega``; below ``min_match`` it is dropped,
:class:`~.prior_options.PriorOptions`). Whether it measured the target's *own*
problem is a separate fact (:func:`same_problem`). The :func:`consensus` orders the
configurations some source measured by their mean relative throughput over the sources
(Mu et al.'s filtering metric): what was fast everywhere first.

Examples
--------
>>> from search.db import Measurement, Workload
>>> from search.measure.base import MeasureRecord
>>> from search.grid_space import GridSpace
>>> space, w = GridSpace({"x": list(range(4))}), Workload("k", [4], ("x",))
>>> hist = [Measurement(w, "gpu0", "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + x))
...         for x in range(4)]
>>> (g,) = source_groups(space, hist, target_problem=[4])
>>> g.name, g.indices.tolist(), g.rel_time.tolist(), g.same_problem
('k [4]@gpu0', [0, 1, 2, 3], [1.0, 2.0, 3.0, 4.0], True)
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from iobound.errors import InvalidInputError

from ..option_checks import check_records, check_type, shown
from ..space import Space
from ..strategies.gga_history import full_layer, match_score, problem_dims
from .checks import check_reals
from .prior_options import PriorOptions
from .rows import rows_for

__all__ = ["SourceGroup", "same_problem", "source_devices", "timed_by_source", "source_groups",
           "consensus"]


@dataclass(frozen=True)
class SourceGroup:
    """One source's records: those in the space (indices, times relative to the source's
    best, best first: the consensus), the model rows of every record with one (``X``,
    ``rel``: its training data, :mod:`.rows`), the source's weight (its match score to the
    power ``omega``), whether its problem is the target's (``same_problem``:
    :func:`same_problem`) and the match score itself (``match``: what the thresholds
    compare, whatever ``omega`` is).

    >>> g = SourceGroup("gpu0", "k", np.array([3, 1]), np.array([1.0, 1.1]), weight=1.0)
    >>> g.name, g.same_problem, g.X is None
    ('k@gpu0', False, True)
    """

    device: str
    label: str
    indices: np.ndarray
    rel_time: np.ndarray
    weight: float
    X: np.ndarray | None = None
    rel: np.ndarray | None = None
    same_problem: bool = False
    match: float = 1.0

    @property
    def name(self) -> str:
        """``label@device``: how the source is named in features and statistics."""
        return f"{self.label}@{self.device}"

    @property
    def size(self) -> int:
        """Records of the source the prior uses (in the space or with a model row)."""
        return max(len(self.indices), 0 if self.rel is None else len(self.rel))


def same_problem(problem: Any, target_problem: Any) -> bool:
    """Whether a source's problem is the target's: the same dimensions (a layer's name
    aside), or either one not known (no target problem given; a T4 results file, which
    records none: the same parameter names are all there is to go by). Not a match score
    of 1: Mu et al.'s score is 1 whenever every divisor of the source's dimensions divides
    the target's (a 64-channel layer's records match a 256-channel target fully).

    >>> same_problem({"name": "a.conv1", "c_in": 64}, {"name": "b.conv3", "c_in": 64})
    True
    >>> same_problem([64, 64], [64, 256]), same_problem([64], None), same_problem(None, [64])
    (False, True, True)
    """
    if target_problem is None or problem is None:
        return True
    if isinstance(problem, dict) and isinstance(target_problem, dict):
        return _layer_key(problem) == _layer_key(target_problem)
    a, b = problem_dims(problem), problem_dims(target_problem)
    return a == b if a is not None or b is not None else problem == target_problem


def _layer_key(problem: dict) -> dict:
    """A problem dict without its name, every field in (stride, padding and dilation too,
    which :func:`problem_dims` leaves out; a layer's defaults filled: :func:`full_layer`)."""
    return {k: v for k, v in full_layer(problem).items() if k != "name"}


def source_devices(history: Sequence) -> dict[str, str]:
    """Each device name of ``history`` -> the device its records are a source of: itself,
    or the preset's name where the history holds several names of one preset (a cache's
    ``NVIDIA RTX A4000`` and tune's ``RTX-A4000``: one GPU, one source, not two that
    agree; :func:`search.db.device_names.same_device`).

    >>> from types import SimpleNamespace as M
    >>> source_devices([M(device="NVIDIA RTX A4000"), M(device="a4000"), M(device="T4")])
    {'NVIDIA RTX A4000': 'RTX-A4000', 'a4000': 'RTX-A4000', 'T4': 'T4'}
    >>> source_devices([M(device="Tesla T4")])  # one name of the preset: kept as it is
    {'Tesla T4': 'Tesla T4'}
    """
    from iobound.devices import canonical_device_name
    names = list(dict.fromkeys(h.device for h in history))
    preset = {n: canonical_device_name(n) for n in names}
    shared = Counter(preset.values())
    return {n: preset[n] if shared[preset[n]] > 1 else n for n in names}


def timed_by_source(history: Sequence) -> dict[tuple, list]:
    """The timed records of ``history`` by source, ``(workload, device)`` (the device as
    :func:`source_devices` names it): the sources by
    their best time (ties by workload and device), each one's records fastest first (ties
    by configuration, then timestamp). An order of what the records are, never of where
    they stand in ``history``: a database's row order (the same files imported in another
    order) must not change the models fitted on them, whose ranking objective samples
    its pairs by row position.

    >>> from search.db import Measurement, Workload
    >>> from search.measure.base import MeasureRecord
    >>> w = Workload("k", [8], ("x",))
    >>> hist = [Measurement(w, d, "t", MeasureRecord.ok({"x": x}, time_ms=t * (1 + x)))
    ...         for d, t in (("slow", 5.0), ("fast", 1.0)) for x in (2, 0, 1)]
    >>> [(device, [m.time_ms for m in ms]) for (_, device), ms in timed_by_source(hist).items()]
    [('fast', [1.0, 2.0, 3.0]), ('slow', [5.0, 10.0, 15.0])]
    """
    out: dict[tuple, list] = {}
    device = source_devices(history)
    for h in history:
        if h.time_ms is not None:
            out.setdefault((h.workload, device[h.device]), []).append(h)
    for ms in out.values():
        _fastest_first(ms)
    return dict(sorted(out.items(), key=lambda kv: (kv[1][0].time_ms, kv[0][0].key(), kv[0][1])))


def _fastest_first(ms: list) -> None:
    """Sort one source's records by time, equal times by configuration then timestamp (the
    configuration's canonical text is made for the tied ones only: a source may hold a
    whole recorded space)."""
    from ..db.model import canon
    ms.sort(key=lambda m: m.time_ms)
    start = 0
    while start < len(ms):
        end = start + 1
        while end < len(ms) and ms[end].time_ms == ms[start].time_ms:
            end += 1
        if end - start > 1:
            ms[start:end] = sorted(ms[start:end],
                                   key=lambda m: (canon(m.record.config), m.record.timestamp))
        start = end


def source_groups(space, history: Sequence, target_problem: Any = None,
                  options: PriorOptions | None = None, rows=None) -> list[SourceGroup]:
    """The history grouped by (workload, device), mapped into ``space`` (see module doc).

    ``rows`` (default :func:`~search.transfer.rows.rows_for` the space) makes the
    model rows. A configuration measured twice by one source keeps its best time;
    groups with neither a configuration of the space nor a model row, or matching
    too little, are left out. ``space``, ``history`` (Measurements) and ``options`` (None
    for the defaults) are checked as :meth:`~.prior.HistoryPrior.fit` checks them.

    >>> from search.db import Measurement, Workload
    >>> from search.measure.base import MeasureRecord
    >>> w = Workload("k", [8], ("x",))
    >>> hist = [Measurement(w, d, "t", MeasureRecord.ok({"x": x}, time_ms=t * (1 + x)))
    ...         for d, t in (("slow", 5.0), ("fast", 1.0)) for x in (2, 0, 1)]
    >>> from search.grid_space import GridSpace
    >>> groups = source_groups(GridSpace({"x": [0, 1]}), hist, target_problem=[16])
    >>> [(g.device, g.indices.tolist(), g.same_problem) for g in groups]  # x = 2: no index
    [('fast', [0, 1], False), ('slow', [0, 1], False)]
    """
    from ..db.model import Measurement
    check_type("space", space, Space)
    history = check_records("history", history, Measurement)
    if options is not None:
        check_type("options", options, PriorOptions)
    o = options or PriorOptions()
    rows = rows or rows_for(space)
    out = []
    for (workload, device), ms in timed_by_source(history).items():
        match = match_score(workload.problem, target_problem)
        if match < o.min_match:
            continue
        g = _group(space, rows, device, workload.label(), match, o.omega, ms,
                   same_problem(workload.problem, target_problem))
        if g is not None:
            out.append(g)
    return sorted(out, key=lambda g: (-g.weight, g.label, g.device))


def _group(space, rows, device: str, label: str, match: float, omega: float, ms: list,
           same: bool) -> SourceGroup | None:
    """One source's :class:`SourceGroup` (None when nothing of it is usable). Its model
    rows: each configuration of the space at its best time (best first), then the
    records outside the space that have a row."""
    where = [space.index(m.record.config) for m in ms]
    X = rows.record_rows(ms, where)
    best_in: dict[int, tuple[float, int]] = {}
    outside = []
    for k, (i, m) in enumerate(zip(where, ms)):
        if i is None:
            if X[k] is not None:
                outside.append((X[k], m.time_ms))
        elif m.time_ms < best_in.get(int(i), (math.inf, 0))[0]:
            best_in[int(i)] = (m.time_ms, k)
    if not best_in and not outside:
        return None
    idx = np.fromiter(best_in, dtype=np.int64, count=len(best_in))
    t = np.array([v[0] for v in best_in.values()], dtype=float)
    order = np.lexsort((idx, t))
    best = min(m.time_ms for m in ms)
    trained = [(X[best_in[int(i)][1]], best_in[int(i)][0]) for i in idx[order]
               if X[best_in[int(i)][1]] is not None] + outside
    tx = np.vstack([x for x, _ in trained]) if trained else None
    trel = np.array([b for _, b in trained]) / best if trained else None
    return SourceGroup(device, label, idx[order], t[order] / best, match ** omega, tx, trel,
                       same, match)


def consensus(groups: list[SourceGroup], scale: Sequence[float] | None = None) -> np.ndarray:
    """Measured indices by mean relative throughput over the sources, best first (module doc);
    ``scale`` multiplies each group's weight.

    Examples
    --------
    >>> g = [SourceGroup("a", "k", np.array([3, 1]), np.array([1.0, 1.1]), 1.0),
    ...      SourceGroup("b", "k", np.array([1, 3]), np.array([1.0, 1.5]), 1.0)]
    >>> consensus(g).tolist()
    [1, 3]
    >>> consensus(g, scale=[1.0])  # one per group
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: scale must hold 2 numbers (one per source), got 1
    """
    groups = check_records("groups", groups, SourceGroup)
    if scale is not None:
        scale = check_reals("scale", scale, len(groups))
        if (scale < 0).any():
            raise InvalidInputError(f"scale must be numbers >= 0 (weights), got {shown(scale)}")
    total: dict[int, float] = {}
    for g, k in zip(groups, [1.0] * len(groups) if scale is None else scale):
        for i, r in zip(g.indices.tolist(), g.rel_time.tolist()):
            total[i] = total.get(i, 0.0) + k * g.weight / r
    return np.array(sorted(total, key=lambda i: (-total[i], i)), dtype=np.int64)
