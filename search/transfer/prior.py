"""A prior over a space from tuning history: per-source best lists and a history ranking model.

History records (:class:`search.db.Measurement`) are grouped by source (workload,
device). Each group's times are divided by its own best (devices of different
speed share one scale) and the group is weighted by how well its problem matches
the target's (Mu et al.'s match score to the power ``omega``; groups below
``min_match`` are dropped). Two things come out:

- ``consensus``: the configurations of the space some source measured, by their
  mean relative throughput over all sources (``weight * best / time``, 0 where a
  source did not measure it; Mu et al.'s filtering metric): what was fast
  everywhere first;
- ``ranking``: the space's configurations ordered by an XGBoost ranking model
  (``rank:pairwise``, one query group per source, the match weight as group
  weight) fitted on all sources: it ranks configurations no source measured.
  A record whose configuration is not in the space (another layer of our conv
  template, whose tiles need not fit this one) still trains it when its feature
  row can be rebuilt in the space's feature order (:func:`feature_row`: knob
  values from its config, the rest from the features stored with it, e.g. I/O
  over the bound, occupancy): that is how layers learn from other layers.

:meth:`HistoryPrior.picker` gives a cursor (one per run: the prior is shared)
whose ``picks`` take the consensus in order, then the model's ranking (for what
no source measured), skipping what was asked: the history's candidates, best
first. Why this order: measured on the recorded convolution spaces, the 4 first
of the consensus held the optimum of both devices that agree with the others,
where each source's own best and the ranking model's top were up to 3% and 23%
slower (``benchmarks/results/transfer_experiments.md``). Whether they are worth measuring is decided on the
target by :class:`search.transfer.guided.HistoryGuided`, never here.

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
>>> prior.picker().picks(2, asked=set())
[2, 5]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..cost_model import make_targets
from ..strategies.gga_history import match_score

__all__ = ["PriorOptions", "HistoryPrior", "Picker", "source_groups", "feature_row", "consensus"]


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
    """

    omega: float = 2.0
    min_match: float = 0.5
    max_candidates: int = 50_000
    n_estimators: int = 150
    max_depth: int = 6

    def __post_init__(self) -> None:
        if self.omega < 0 or not 0 <= self.min_match <= 1:
            raise ValueError(f"omega must be >= 0 and min_match in [0, 1]; got {self.omega}, "
                             f"{self.min_match}")
        if self.max_candidates < 1 or self.n_estimators < 1 or self.max_depth < 1:
            raise ValueError("max_candidates, n_estimators and max_depth must be >= 1")


@dataclass(frozen=True)
class SourceGroup:
    """One source's records: those in the space (indices, times relative to the
    source's best, best first), those outside it with a feature row (``outside_X``,
    ``outside_rel``), and the source's weight."""

    device: str
    label: str
    indices: np.ndarray
    rel_time: np.ndarray
    weight: float
    outside_X: np.ndarray | None = None
    outside_rel: np.ndarray | None = None

    def training(self, space) -> tuple[np.ndarray, np.ndarray]:
        """(feature rows, relative times) of every record of the source."""
        X = space.features(self.indices)
        if self.outside_X is None:
            return X, self.rel_time
        return np.vstack([X, self.outside_X]), np.concatenate([self.rel_time, self.outside_rel])


def feature_row(space, config: dict, features: dict | None) -> np.ndarray | None:
    """A configuration's row in ``space.feature_names()`` order, or None when a value is
    unknown: knobs from ``config`` (numbers, or positions in the space's value list),
    other columns from ``features``.

    Examples
    --------
    >>> from search.space import GridSpace
    >>> feature_row(GridSpace({"x": [1, 2]}), {"x": 7}, None).tolist()
    [7.0]
    """
    row = []
    params = set(space.params)
    for name in space.feature_names():
        if name in params:
            v = config.get(name)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                row.append(float(v))
            elif v in space.values(name):
                row.append(float(space.values(name).index(v)))
            else:
                return None
        elif features and isinstance(features.get(name), (int, float)):
            row.append(float(features[name]))
        else:
            return None
    return np.array(row)


def source_groups(space, history: Sequence, target_problem: Any = None,
                  options: PriorOptions | None = None) -> list[SourceGroup]:
    """The history grouped by (workload, device), mapped into ``space`` (see module doc).

    A configuration measured twice by one source keeps its best time; groups
    with no configuration of the space, or matching too little, are left out.
    """
    o = options or PriorOptions()
    groups: dict[tuple, dict[int, float]] = {}
    outside: dict[tuple, list[tuple[np.ndarray, float]]] = {}
    meta: dict[tuple, tuple[str, str, float]] = {}
    for h in history:
        t = h.time_ms
        if t is None:
            continue
        key = (h.workload, h.device)
        if key not in meta:
            meta[key] = (h.device, h.workload.label(),
                         match_score(h.workload.problem, target_problem) ** o.omega)
        if meta[key][2] < o.min_match ** o.omega:
            continue
        i = space.index(h.record.config)
        g = groups.setdefault(key, {})
        if i is not None:
            g[int(i)] = min(g.get(int(i), math.inf), t)
            continue
        row = feature_row(space, h.record.config, h.features)
        if row is not None:
            outside.setdefault(key, []).append((row, t))
    out = []
    for key in sorted(groups, key=lambda k: (-meta[k][2], meta[k][1], meta[k][0])):
        idx = np.fromiter(groups[key], dtype=np.int64, count=len(groups[key]))
        t = np.fromiter(groups[key].values(), dtype=float, count=len(groups[key]))
        rows = outside.get(key, [])
        if not len(idx) and not rows:
            continue
        best = min([*t, *(b for _, b in rows)])
        order = np.lexsort((idx, t))
        device, label, weight = meta[key]
        ox = np.vstack([r for r, _ in rows]) if rows else None
        orel = np.array([b for _, b in rows]) / best if rows else None
        out.append(SourceGroup(device, label, idx[order], t[order] / best, weight, ox, orel))
    return out


def consensus(groups: list[SourceGroup]) -> np.ndarray:
    """Measured indices by mean relative throughput over the sources, best first (module doc).

    Examples
    --------
    >>> g = [SourceGroup("a", "k", np.array([3, 1]), np.array([1.0, 1.1]), 1.0),
    ...      SourceGroup("b", "k", np.array([1, 3]), np.array([1.0, 1.5]), 1.0)]
    >>> consensus(g).tolist()
    [1, 3]
    """
    total: dict[int, float] = {}
    for g in groups:
        for i, r in zip(g.indices.tolist(), g.rel_time.tolist()):
            total[i] = total.get(i, 0.0) + g.weight / r
    return np.array(sorted(total, key=lambda i: (-total[i], i)), dtype=np.int64)


def _fit_ranker(space, groups: list[SourceGroup], o: PriorOptions, seed: int):
    import xgboost as xgb

    data = [g.training(space) for g in groups]
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

    def __init__(self, groups: list[SourceGroup], ranking: np.ndarray, records: int):
        self.groups = groups
        self.ranking = ranking
        self.records = records
        self.consensus = consensus(groups)

    @classmethod
    def fit(cls, space, history: Sequence, target_problem: Any = None,
            options: PriorOptions | None = None, seed: int = 0) -> "HistoryPrior | None":
        """The prior of ``history`` over ``space``; ``None`` when no record is usable."""
        o = options or PriorOptions()
        groups = source_groups(space, history, target_problem, o)
        if not groups:
            return None
        booster = _fit_ranker(space, groups, o, seed)
        if len(space) <= o.max_candidates:
            cand = np.arange(len(space))
        else:
            sampled = space.sample(o.max_candidates, np.random.default_rng(seed))
            cand = np.unique(np.concatenate([np.array(sampled, dtype=np.int64)]
                                            + [g.indices for g in groups]))
        score = booster.inplace_predict(space.features(cand))
        ranking = cand[np.lexsort((cand, -score))]
        records = sum(len(g.indices) + (0 if g.outside_rel is None else len(g.outside_rel))
                      for g in groups)
        return cls(groups, ranking, records)

    @property
    def devices(self) -> tuple[str, ...]:
        return tuple(sorted({g.device for g in self.groups}))

    def picker(self) -> "Picker":
        """A fresh cursor over the prior's lists (one per tuning run: the prior is shared)."""
        return Picker([np.concatenate([self.consensus, self.ranking])])


class Picker:
    """Walks the prior's ranked lists round robin, skipping what was asked (see module doc)."""

    def __init__(self, lists: list[np.ndarray]):
        self._lists = lists
        self._pos = [0] * len(lists)

    def picks(self, n: int, asked: set[int]) -> list[int]:
        """Up to ``n`` unasked candidates: each list's next best in turn."""
        out: list[int] = []
        taken = set(asked)
        while len(out) < n:
            progressed = False
            for k, lst in enumerate(self._lists):
                while self._pos[k] < len(lst) and int(lst[self._pos[k]]) in taken:
                    self._pos[k] += 1
                if self._pos[k] < len(lst) and len(out) < n:
                    i = int(lst[self._pos[k]])
                    self._pos[k] += 1
                    progressed = True
                    out.append(i)
                    taken.add(i)
            if not progressed:
                break
        return out
