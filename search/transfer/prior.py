"""A prior over a space from tuning history: per-source best lists and a history ranking model.

History records (:class:`search.db.Measurement`) are grouped by source, each weighted
by how well its problem matches the target's (:mod:`.sources`). Two things come out:

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
history rounds can walk the models' orders instead (``picker(model=True, alone=True)``,
the default of :class:`~.guided.HistoryGuided`) or as two more lists right after the
prior's order: the sources' best lists are of other problems, and a model, which learns
from all of them through rows that mean the same on every layer, often guesses the
target's best better (11 of ResNet-50's new shapes from ResNet-18 and VGG-16 history: the
ranking's first pick beat the consensus's on 9, 0.83 of the reference against 0.74 on
average). The two models are the ranking above and ``regression``, zero-shot's model
(:func:`search.zero_shot.history_ranking`: one regression of every source's relative
times, no match weights): neither guesses better on every network and device, and hearing
both put the best of the first 4 and 8 picks at or above either alone on the four networks
measured (``benchmarks/results/transfer_experiments.md``, "Both models heard", and "The
models alone" for dropping the sources' lists there). Once the target measured
some, :meth:`HistoryPrior.matched_order` weighs each source by how its times order the
target's (:meth:`HistoryPrior.agreement`, Kendall's tau). Whether any of them is worth
measuring is decided on the target by :class:`search.transfer.guided.HistoryGuided`,
never here.

Examples
--------
>>> from search.db import Measurement, Workload
>>> from search.measure.base import MeasureRecord
>>> from search.grid_space import GridSpace
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
from functools import cached_property
from typing import Any, Sequence

import numpy as np


from ..cost_model import make_targets, model_rows, xgb_seed
from ..history_rows import source_caps, training_rows
from ..option_checks import check_count, check_flag, check_number
from .checks import check_costs, check_reals
from .picker import Picker
from .prior_options import PriorOptions
from .rank_test import kendall_greater
from .rows import rows_for
from .sources import SourceGroup, consensus, same_problem, source_groups

__all__ = ["PriorOptions", "HistoryPrior", "Picker", "SourceGroup", "source_groups",
           "same_problem", "consensus", "MODEL_NAMES"]

#: The names of the model orders :meth:`HistoryPrior.picker` walks when they are heard:
#: the ranking model's, then the regression's.
MODEL_NAMES = ("ranking", "regression")


def _each_once(*orders: np.ndarray) -> np.ndarray:
    """The orders one after the other, each index at its first place only."""
    both = np.concatenate(orders).astype(np.int64)
    _, first = np.unique(both, return_index=True)
    return both[np.sort(first)]


def _fit_ranker(groups: list[SourceGroup], o: PriorOptions, seed: int):
    import xgboost as xgb

    groups = [g for g in groups if g.X is not None]
    rng = np.random.default_rng(seed)
    caps = source_caps([len(g.rel) for g in groups], o.max_rows_per_source, o.max_rows)
    keep = [training_rows(g.rel, cap, rng) for g, cap in zip(groups, caps)]
    data = [(g.X[k], g.rel[k]) for g, k in zip(groups, keep)]
    X = np.vstack([x for x, _ in data])
    y = np.concatenate([-make_targets(t) for _, t in data])
    d = xgb.DMatrix(model_rows(X), label=y, nthread=1)
    d.set_group([len(t) for _, t in data])
    d.set_weight(np.array([g.weight for g in groups]))  # ranking: one weight per group
    params = {"objective": "rank:pairwise", "lambdarank_pair_method": "mean",
              "lambdarank_num_pair_per_sample": 8, "max_depth": o.max_depth, "eta": 0.1,
              "nthread": 1, "seed": xgb_seed(seed), "tree_method": "hist", "verbosity": 0}
    return xgb.train(params, d, num_boost_round=o.n_estimators)


class HistoryPrior:
    """Per-source best lists and a history ranking of a space (see module doc).

    >>> from search import GridSpace, MeasureRecord
    >>> from search.db import Measurement, Workload
    >>> w = Workload("k", [8], ("x",))
    >>> hist = [Measurement(w, d, "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + abs(x - b)))
    ...         for d, b in (("gpu0", 2), ("gpu1", 5)) for x in range(8)]
    >>> prior = HistoryPrior.fit(GridSpace({"x": list(range(8))}), hist, target_problem=[16])
    >>> prior.order()[:2].tolist(), prior.has_target_problem  # no source measured [16]
    ([2, 5], False)
    >>> HistoryPrior.fit(GridSpace({"y": [1, 2]}), hist) is None  # no record of y
    True
    """

    def __init__(self, groups: list[SourceGroup], ranking: np.ndarray, records: int,
                 options: PriorOptions | None = None, fitted_on: tuple | None = None,
                 space_key: tuple | None = None):
        o = options or PriorOptions()
        #: (parameter names, size) of the space the indices number: a strategy over another
        #: space would read them as other configurations
        self.space_key = space_key
        self.groups = groups
        self.ranking = ranking
        self.records = records
        self.consensus = consensus([g for g in groups if g.match >= o.consensus_match])
        self._options = o
        #: the number of configurations of the space, when known: what indices must be below
        self._size = None if space_key is None else space_key[1]
        self._fitted_on = fitted_on  # (space, history, seed): what :attr:`regression` fits on

    @classmethod
    def fit(cls, space, history: Sequence, target_problem: Any = None,
            options: PriorOptions | None = None, seed: int = 0) -> "HistoryPrior | None":
        """The prior of ``history`` over ``space``; ``None`` when no record is usable."""
        from ..option_checks import check_history_inputs
        history, seed = check_history_inputs(space, history, options, PriorOptions, seed)
        o = options or PriorOptions()
        rows = rows_for(space)
        groups = source_groups(space, history, target_problem, o, rows)
        if not groups:
            return None
        key = (tuple(space.params), len(space))
        if not any(g.X is not None for g in groups):
            return cls(groups, np.zeros(0, dtype=np.int64), sum(g.size for g in groups), o,
                       space_key=key)
        booster = _fit_ranker(groups, o, seed)
        if len(space) <= o.max_candidates:
            cand = np.arange(len(space))
        else:
            sampled = space.sample(o.max_candidates, np.random.default_rng(seed))
            cand = np.unique(np.concatenate([np.array(sampled, dtype=np.int64)]
                                            + [g.indices for g in groups]))
        score = booster.inplace_predict(model_rows(rows.space_rows(cand)))
        ranking = cand[np.lexsort((cand, -score))]
        return cls(groups, ranking, sum(g.size for g in groups), o, (space, history, seed), key)

    @cached_property
    def regression(self) -> np.ndarray:
        """The space ordered by zero-shot's model of the history (a regression of every
        source's times relative to its best, :func:`search.zero_shot.history_ranking`),
        fitted when first asked for: a second model list beside :attr:`ranking` (see
        :meth:`picker`); empty when the prior has no model."""
        if self._fitted_on is None or not len(self.ranking):
            return np.zeros(0, dtype=np.int64)
        from ..zero_shot import ZeroShotOptions, history_ranking
        space, history, seed = self._fitted_on
        o = self._options
        large = len(space) > o.max_candidates
        zo = ZeroShotOptions(max_rows_per_source=o.max_rows_per_source, max_rows=o.max_rows,
                             candidates=o.max_candidates if large else None)
        return history_ranking(space, history, zo, seed)[0]

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
        the target model's per-source rank features (:mod:`.prior_feature`). ``limit`` is
        ``None`` (every source) or a count (0: none), ``min_size`` a count.

        >>> HistoryPrior([], np.zeros(0, dtype=np.int64), 0).source_orders(-1)
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: limit=-1 is below the minimum 0
        """
        if limit is not None:
            check_count("limit", limit)
        check_count("min_size", min_size)
        return [(g.name, g.indices) for g in self.groups if len(g.indices) >= min_size][:limit]

    def agreement(self, known: dict[int, float]) -> list[tuple[float, float]]:
        """Per source (``self.groups``' order), how its times order the configurations of
        ``known`` (index -> the target's cost) that it measured: Kendall's tau with the
        target's costs and its one-sided p-value, exact on a few tied configurations
        (:func:`.rank_test.kendall_greater`; ``(0.0, 1.0)`` below 3 such configurations
        or when either side is constant).

        Examples
        --------
        >>> from search.db import Measurement, Workload
        >>> from search.measure.base import MeasureRecord
        >>> from search.grid_space import GridSpace
        >>> space, w = GridSpace({"x": list(range(8))}), Workload("k", [8], ("x",))
        >>> hist = [Measurement(w, d, "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + s * x))
        ...         for d, s in (("up", 1), ("down", -0.1)) for x in range(8)]
        >>> prior = HistoryPrior.fit(space, hist, seed=0)
        >>> [(g.device, round(tau, 2)) for g, (tau, p) in zip(prior.groups, prior.agreement(
        ...     {0: 1.0, 2: 2.0, 5: 3.0, 7: 4.0}))]
        [('down', -1.0), ('up', 1.0)]

        ``known`` maps configurations of the space (integer indices) to finite costs;
        anything else is an InvalidInputError naming it, never a source silently left out.
        """
        check_costs("known", known, self._size)
        out = []
        for pos in self.rel_times:
            both = [(pos[i], c) for i, c in known.items() if i in pos]
            if len(both) < 3:
                out.append((0.0, 1.0))
                continue
            tau, p = kendall_greater(*zip(*both))
            out.append((0.0, 1.0) if math.isnan(tau) else (float(tau), float(p)))
        return out

    @cached_property
    def rel_times(self) -> list[dict[int, float]]:
        """Per source (``self.groups``' order): configuration index -> its relative time."""
        return [dict(zip(g.indices.tolist(), g.rel_time.tolist())) for g in self.groups]

    def matched_order(self, known: dict[int, float], sharpness: float) -> np.ndarray:
        """The consensus of every source, its weight scaled by how its times order the
        target's ``known`` costs (by ``exp(sharpness * (tau - the best tau))``,
        :meth:`agreement`), then the rest of :meth:`order`: what the sources most like the
        target found fast. ``sharpness`` is a finite number >= 0 (0: every source alike)."""
        check_number("sharpness", sharpness, 0)
        return self.weighted_order(np.array([t for t, _ in self.agreement(known)]), sharpness)

    def weighted_order(self, likeness: np.ndarray, sharpness: float) -> np.ndarray:
        """The consensus with each source's weight scaled by ``exp(sharpness * (its likeness
        - the best likeness))`` (``likeness`` in ``self.groups``' order), then the rest of
        :meth:`order`: :meth:`matched_order` with Kendall's tau as the likeness, or any
        other (``benchmarks/source_similarity.py`` compares some). ``likeness`` holds one
        finite number per source, ``sharpness`` is a finite number >= 0 (0: every source
        alike; a negative one would favour the sources least like the target).

        >>> prior = HistoryPrior([], np.zeros(0, dtype=np.int64), 0)
        >>> prior.weighted_order([0.5], 1.0)
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: likeness must hold 0 numbers (one per source), got 1
        """
        likeness = check_reals("likeness", likeness, len(self.groups))
        check_number("sharpness", sharpness, 0)
        if not len(likeness) or not sharpness:  # exp(0 * anything) is 1, an inf spread too
            scale = np.ones(len(likeness))
        else:
            with np.errstate(over="ignore"):  # a spread past float range: weight 0, its limit
                scale = np.exp(sharpness * (likeness - likeness.max()))
        return _each_once(consensus(self.groups, scale), self.order())

    def picker(self, model: bool = False, alone: bool = False) -> "Picker":
        """A fresh cursor (one per tuning run: the prior is shared) over the prior's order and
        each source's own, in turn: the consensus's best, every source's best not yet
        picked, the consensus's next... (see module doc). With ``model`` the two models'
        orders (named :data:`MODEL_NAMES`) are heard right after the prior's order, the
        ranking model's and the regression's (:attr:`regression`): where no source measured
        the target's own problem, the models (which learn from every source through rows
        that mean the same on every problem) guess its best better than any source, and
        neither model is the better one everywhere; with ``alone`` too, only the models'
        orders are walked (:class:`~.guided_options.GuidedOptions`, ``model_picks``).
        Each list is named: ``"order"``, the models', then each source's ``label@device``.
        ``model`` and ``alone`` are flags (True or False)."""
        model, alone = check_flag("model", model), check_flag("alone", alone)
        models = [self.ranking, self.regression] if model and len(self.ranking) else []
        if alone and models:
            return Picker(models, list(MODEL_NAMES))
        sources = self.source_orders()
        return Picker([self.order()] + models + [order for _, order in sources],
                      ["order"] + list(MODEL_NAMES)[:len(models)] + [n for n, _ in sources])
