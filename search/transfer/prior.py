"""A prior over a space from tuning history: per-source best lists and a history ranking model.

History records (:class:`search.db.Measurement`) are grouped by source (workload,
device). Each group's times are divided by its own best (devices of different speed
share one scale) and the group is weighted by how well its problem matches the target's
(Mu et al.'s match score to the power ``omega``; groups below ``min_match`` are
dropped). Two things come out:

- ``consensus``: the configurations of the space some source measured, by their mean
  relative throughput over all sources (``weight * best / time``, 0 where a source did
  not measure it; Mu et al.'s filtering metric): what was fast everywhere first;
- ``ranking``: the space's configurations ordered by an XGBoost ranking model
  (``rank:pairwise``, one query group per source, the match weight as group weight)
  fitted on all sources: it ranks configurations no source measured. Its rows come from
  :mod:`.rows`: on our conv template, features that mean the same on every layer,
  computed on each record's own layer and device (I/O over the bound, occupancy, tile
  shape relative to the layer...), so another layer's records train it whether or not
  their tiles fit this layer: that is how layers learn from other layers; on other
  spaces, the space's own features.

Candidates come out in two ways. :meth:`HistoryPrior.picker` (one cursor per run) takes
in turn the next of the prior's order (the consensus, then the model's ranking) and of
each source's own: with many sources the consensus averages away what a target shares
with its nearest devices, whose own best lists hold its optimum (eight presets of our
conv template: the consensus's 10 first reached 0.903 of the optimum, every source's 10
best 0.991; ``benchmarks/results/transfer_experiments.md``). Where no source measured the
target's own problem (:func:`same_problem`: another layer of our conv template), the
model's ranking is one more list, heard right after the prior's order: the sources' best
lists are of other problems, and the model, which learns from all of them through rows that
mean the same on every layer, often guesses the target's best better (11 of ResNet-50's
new shapes from ResNet-18 and VGG-16 history: its first pick beat the consensus's on 9,
0.83 of the reference against 0.74 on average). Once the target measured
some, :meth:`HistoryPrior.matched_order` weighs each source by how its times order the
target's (:meth:`HistoryPrior.agreement`, Kendall's tau). Whether any of them is worth
measuring is decided on the target by :class:`search.transfer.guided.HistoryGuided`,
never here.

Examples
--------
>>> from search.db import Measurement, Workload
>>> from search.measure.base import MeasureRecord
>>> from search.space import GridSpace
>>> space = GridSpace({"x": list(range(8))})
>>> w = Workload("k", [8], ("x",))
>>> hist = [Measurement(w, d, "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + abs(x - b)))
...         for d, b in (("gpu0", 2), ("gpu1", 5)) for x in range(8)]
>>> prior = HistoryPrior.fit(space, hist, seed=0)
>>> prior.devices, prior.records
(('gpu0', 'gpu1'), 16)
>>> prior.picker().picks(3, asked=set())  # the consensus, gpu0 (its best is taken), gpu1
[2, 1, 5]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Sequence

import numpy as np

from iobound import limits

from ..cost_model import make_targets, training_rows
from ..option_checks import check_count, check_number
from ..strategies.gga_history import match_score, problem_dims
from .picker import Picker
from .rows import rows_for

__all__ = ["PriorOptions", "HistoryPrior", "Picker", "source_groups", "same_problem",
           "consensus"]


@dataclass(frozen=True)
class PriorOptions:
    """How history becomes a prior.

    Attributes
    ----------
    omega : float
        Exponent of the match score in a source's weight (Mu et al.: 2).
    min_match : float
        Sources whose problem matches the target's less are not used.
    max_candidates : int
        The ranking model scores the whole space up to this size, else a random
        sample of this many configurations (Lorien's sampling) plus every
        configuration a source measured.
    n_estimators, max_depth : int
        The ranking model's boosting rounds and tree depth.
    consensus_match : float
        Only sources matching the target's problem at least this well enter the
        consensus (0: every source); the ranking model learns from all of them.
    max_rows_per_source : int
        The ranking model learns from at most this many of a source's records: its
        fastest half of them and a seeded uniform sample of the rest
        (:func:`search.cost_model.training_rows`).
    """

    omega: float = 2.0
    min_match: float = 0.5
    max_candidates: int = 50_000
    n_estimators: int = 150
    max_depth: int = 6
    consensus_match: float = 0.0
    max_rows_per_source: int = 32_768

    def __post_init__(self) -> None:
        for name, high in (("omega", math.inf), ("min_match", 1), ("consensus_match", 1)):
            check_number(name, getattr(self, name), 0, high)
        for name in ("max_candidates", "n_estimators", "max_depth", "max_rows_per_source"):
            check_count(name, getattr(self, name), low=1)


@dataclass(frozen=True)
class SourceGroup:
    """One source's records: those in the space (indices, times relative to the source's
    best, best first: the consensus), the model rows of every record with one (``X``,
    ``rel``: its training data, :mod:`.rows`), the source's weight, and whether its
    problem is the target's (``same_problem``: :func:`same_problem`)."""

    device: str
    label: str
    indices: np.ndarray
    rel_time: np.ndarray
    weight: float
    X: np.ndarray | None = None
    rel: np.ndarray | None = None
    same_problem: bool = False

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
    aside), or no target problem given. Not a match score of 1: Mu et al.'s score is 1
    whenever every divisor of the source's dimensions divides the target's (a 64-channel
    layer's records match a 256-channel target fully).

    >>> same_problem({"name": "a.conv1", "c_in": 64}, {"name": "b.conv3", "c_in": 64})
    True
    >>> same_problem([64, 64], [64, 256]), same_problem([64], None)
    (False, True)
    """
    if target_problem is None:
        return True
    a, b = problem_dims(problem), problem_dims(target_problem)
    return a == b if a is not None or b is not None else problem == target_problem


def source_groups(space, history: Sequence, target_problem: Any = None,
                  options: PriorOptions | None = None, rows=None) -> list[SourceGroup]:
    """The history grouped by (workload, device), mapped into ``space`` (see module doc).

    ``rows`` (default :func:`~search.transfer.rows.rows_for` the space) makes the
    model rows. A configuration measured twice by one source keeps its best time;
    groups with neither a configuration of the space nor a model row, or matching
    too little, are left out.
    """
    o = options or PriorOptions()
    rows = rows or rows_for(space)
    by_source: dict[tuple, list] = {}
    for h in history:
        if h.time_ms is not None:
            by_source.setdefault((h.workload, h.device), []).append(h)
    out = []
    for (workload, device), ms in by_source.items():
        weight = match_score(workload.problem, target_problem) ** o.omega
        if weight < o.min_match ** o.omega:
            continue
        g = _group(space, rows, device, workload.label(), weight, ms)
        if g is not None:
            out.append(replace(g, same_problem=same_problem(workload.problem, target_problem)))
    return sorted(out, key=lambda g: (-g.weight, g.label, g.device))


def _group(space, rows, device: str, label: str, weight: float, ms: list) -> SourceGroup | None:
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
    return SourceGroup(device, label, idx[order], t[order] / best, weight, tx, trel)


def consensus(groups: list[SourceGroup], scale: Sequence[float] | None = None) -> np.ndarray:
    """Measured indices by mean relative throughput over the sources, best first (module doc);
    ``scale`` multiplies each group's weight.

    Examples
    --------
    >>> g = [SourceGroup("a", "k", np.array([3, 1]), np.array([1.0, 1.1]), 1.0),
    ...      SourceGroup("b", "k", np.array([1, 3]), np.array([1.0, 1.5]), 1.0)]
    >>> consensus(g).tolist()
    [1, 3]
    """
    total: dict[int, float] = {}
    for g, k in zip(groups, [1.0] * len(groups) if scale is None else scale):
        for i, r in zip(g.indices.tolist(), g.rel_time.tolist()):
            total[i] = total.get(i, 0.0) + k * g.weight / r
    return np.array(sorted(total, key=lambda i: (-total[i], i)), dtype=np.int64)


def _each_once(*orders: np.ndarray) -> np.ndarray:
    """The orders one after the other, each index at its first place only."""
    both = np.concatenate(orders).astype(np.int64)
    _, first = np.unique(both, return_index=True)
    return both[np.sort(first)]


def _fit_ranker(groups: list[SourceGroup], o: PriorOptions, seed: int):
    import xgboost as xgb

    groups = [g for g in groups if g.X is not None]
    rng = np.random.default_rng(seed)
    keep = [training_rows(g.rel, o.max_rows_per_source, rng) for g in groups]
    data = [(g.X[k], g.rel[k]) for g, k in zip(groups, keep)]
    X = np.vstack([x for x, _ in data])
    y = np.concatenate([-make_targets(t) for _, t in data])
    d = xgb.DMatrix(X, label=y, nthread=1)
    d.set_group([len(t) for _, t in data])
    d.set_weight(np.array([g.weight for g in groups]))  # ranking: one weight per group
    params = {"objective": "rank:pairwise", "lambdarank_pair_method": "mean",
              "lambdarank_num_pair_per_sample": 8, "max_depth": o.max_depth, "eta": 0.1,
              "nthread": 1, "seed": seed, "tree_method": "hist", "verbosity": 0}
    return xgb.train(params, d, num_boost_round=o.n_estimators)


class HistoryPrior:
    """Per-source best lists and a history ranking of a space (see module doc)."""

    def __init__(self, groups: list[SourceGroup], ranking: np.ndarray, records: int,
                 options: PriorOptions | None = None):
        o = options or PriorOptions()
        self.groups = groups
        self.ranking = ranking
        self.records = records
        self.consensus = consensus([g for g in groups if g.weight >= o.consensus_match ** o.omega])

    @classmethod
    def fit(cls, space, history: Sequence, target_problem: Any = None,
            options: PriorOptions | None = None, seed: int = 0) -> "HistoryPrior | None":
        """The prior of ``history`` over ``space``; ``None`` when no record is usable."""
        limits.check_int("seed", seed, limits.SEED)
        o = options or PriorOptions()
        rows = rows_for(space)
        groups = source_groups(space, history, target_problem, o, rows)
        if not groups:
            return None
        if not any(g.X is not None for g in groups):
            return cls(groups, np.zeros(0, dtype=np.int64), sum(g.size for g in groups), o)
        booster = _fit_ranker(groups, o, seed)
        if len(space) <= o.max_candidates:
            cand = np.arange(len(space))
        else:
            sampled = space.sample(o.max_candidates, np.random.default_rng(seed))
            cand = np.unique(np.concatenate([np.array(sampled, dtype=np.int64)]
                                            + [g.indices for g in groups]))
        score = booster.inplace_predict(rows.space_rows(cand))
        ranking = cand[np.lexsort((cand, -score))]
        return cls(groups, ranking, sum(g.size for g in groups), o)

    @property
    def has_target_problem(self) -> bool:
        """Whether some source measured the target's own problem (:func:`same_problem`)."""
        return any(g.same_problem for g in self.groups)

    @property
    def devices(self) -> tuple[str, ...]:
        return tuple(sorted({g.device for g in self.groups}))

    def order(self) -> np.ndarray:
        """The prior's order of the space: the consensus, then the model's ranking of what
        the consensus lacks, each configuration once (what history rounds pick, and the
        target model's ``history_rank`` feature, :mod:`.prior_feature`)."""
        return _each_once(self.consensus, self.ranking)

    def source_orders(self, limit: int | None = None,
                      min_size: int = 1) -> list[tuple[str, np.ndarray]]:
        """``(label@device, its configurations of the space fastest first)`` for each source
        that measured at least ``min_size`` of them, the best matching first, ``limit`` at
        most: what history rounds pick from beside the prior's order (:meth:`picker`) and
        the target model's per-source rank features (:mod:`.prior_feature`)."""
        return [(g.name, g.indices) for g in self.groups if len(g.indices) >= min_size][:limit]

    def agreement(self, known: dict[int, float]) -> list[tuple[float, float]]:
        """Per source (``self.groups``' order), how its times order the configurations of
        ``known`` (index -> the target's cost) that it measured: Kendall's tau with the
        target's costs and its one-sided p-value (``(0.0, 1.0)`` below 3 such
        configurations or when either side is constant).

        Examples
        --------
        >>> from search.db import Measurement, Workload
        >>> from search.measure.base import MeasureRecord
        >>> from search.space import GridSpace
        >>> space, w = GridSpace({"x": list(range(8))}), Workload("k", [8], ("x",))
        >>> hist = [Measurement(w, d, "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + s * x))
        ...         for d, s in (("up", 1), ("down", -0.1)) for x in range(8)]
        >>> prior = HistoryPrior.fit(space, hist, seed=0)
        >>> [(g.device, round(tau, 2)) for g, (tau, p) in zip(prior.groups, prior.agreement(
        ...     {0: 1.0, 2: 2.0, 5: 3.0, 7: 4.0}))]
        [('down', -1.0), ('up', 1.0)]
        """
        from scipy.stats import kendalltau

        out = []
        for pos in self._rel_times:
            both = [(pos[i], c) for i, c in known.items() if i in pos]
            if len(both) < 3:
                out.append((0.0, 1.0))
                continue
            tau, p = kendalltau(*zip(*both), alternative="greater")
            out.append((0.0, 1.0) if math.isnan(tau) else (float(tau), float(p)))
        return out

    @cached_property
    def _rel_times(self) -> list[dict[int, float]]:  # per group: index -> relative time
        return [dict(zip(g.indices.tolist(), g.rel_time.tolist())) for g in self.groups]

    def matched_order(self, known: dict[int, float], sharpness: float) -> np.ndarray:
        """The consensus of every source, its weight scaled by how its times order the
        target's ``known`` costs (by ``exp(sharpness * (tau - the best tau))``,
        :meth:`agreement`), then the rest of :meth:`order`: what the sources most like the
        target found fast."""
        tau = np.array([t for t, _ in self.agreement(known)])
        return _each_once(consensus(self.groups, np.exp(sharpness * (tau - tau.max()))),
                          self.order())

    def picker(self, model: bool = False) -> "Picker":
        """A fresh cursor (one per tuning run: the prior is shared) over the prior's order and
        each source's own, in turn: the consensus's best, every source's best not yet
        picked, the consensus's next... (see module doc). With ``model`` the ranking
        model's order is heard second, right after the prior's order: where no source
        measured the target's own problem, the model (which learns from every source through
        rows that mean the same on every problem) guesses its best better than any of them
        (:class:`~.guided_options.GuidedOptions`, ``model_picks``)."""
        model_list = [self.ranking] if model and len(self.ranking) else []
        return Picker([self.order()] + model_list + [order for _, order in self.source_orders()])
