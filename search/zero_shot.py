"""Zero-shot tuning (Lorien): rank the space with a model of the history, measure only the top K.

A cost model (XGBoost, :class:`search.cost_model.XGBCostModel`) is trained on the
history's timed records, each time divided by the best time of its own workload and
device (so devices of different speed share one scale). Its rows
are the history prior's (:mod:`search.transfer.rows`): on our conv template,
features that mean the same on every layer, computed on each record's own layer, so
there every record of every layer trains it, in the space or not, and a layer no
record measured is ranked from the others'. It ranks every configuration of the
space (or ``candidates`` random ones, Lorien's sampling, for a very large space);
the top ``k`` are measured and the best is the answer. Where a device of the history
is the target's near twin, the model's order blurs what it knows:
:mod:`search.zero_shot_order` then measures the model's, the consensus's and each
source's best in turn instead, chosen on the history itself (``order``).

The ranking's quality is NDCG@K (Lorien's metric) where the truth is known (a
recorded space): over the ranked candidates, with relevance = optimum / time in
[0, 1] (0 for a failure), gain ``2**rel - 1`` and discount ``log2(1 + position)``;
the DCG of the model's top K over that of the ideal top K.

Examples
--------
>>> ndcg_at_k(np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.5, 0.1]), 2)  # perfect order
1.0
>>> round(ndcg_at_k(np.array([3.0, 2.0, 1.0]), np.array([1.0, 0.5, 0.1]), 1), 3)
0.072
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from iobound.errors import InvalidInputError

from .cost_model import XGBCostModel, XGBOptions
from .history_rows import source_caps, training_rows
from .measure.base import MeasureRecord, Measurer
from .records import as_measured
from .option_checks import check_choice, check_count, check_history_inputs, check_type
from .space import Space

__all__ = ["ORDERS", "ZeroShotOptions", "ZeroShotResult", "history_ranking", "ndcg_at_k", "zero_shot",
           "measure_top", "recorded_relevance", "rankable"]


#: What zero-shot measures first (:mod:`search.zero_shot_order`): the model's order,
#: every source heard in turn, or whichever ranked the history's own devices better.
ORDERS = ("auto", "model", "sources")


@dataclass(frozen=True)
class ZeroShotOptions:
    """How many to measure (``k``), how many to rank (``candidates``, None: all), the model,
    and the records of one source it learns from at most (``max_rows_per_source``: the
    fastest half and a seeded sample, :func:`search.cost_model.training_rows`) and of all
    sources (``max_rows``, shared as :func:`search.cost_model.source_caps` says); the
    ``order`` the top K are taken from (:data:`ORDERS`) and, for ``"auto"``, how many of
    the history's devices are left out in turn to choose it (``loso_sources``).

    >>> ZeroShotOptions().k, ZeroShotOptions().order, ZeroShotOptions(k=3, candidates=50).k
    (10, 'auto', 3)
    >>> ZeroShotOptions(k=5, candidates=3)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: candidates=3 is below the minimum 5
    """

    k: int = 10
    candidates: int | None = None
    model: XGBOptions = field(default_factory=lambda: XGBOptions(objective="reg"))
    max_rows_per_source: int = 32_768
    max_rows: int = 262_144
    order: str = "auto"
    loso_sources: int = 8

    def __post_init__(self) -> None:
        check_choice("order", self.order, ORDERS)
        check_type("model", self.model, XGBOptions)
        check_count("loso_sources", self.loso_sources, low=2)
        check_count("k", self.k, low=1)
        check_count("max_rows_per_source", self.max_rows_per_source, low=1)
        check_count("max_rows", self.max_rows, low=1)
        if self.candidates is not None:
            check_count("candidates", self.candidates, low=self.k)


@dataclass(frozen=True)
class ZeroShotResult:
    """The ranking, the measured top K, the best of them, the NDCG@K (None without truth),
    the history records the model learned from and the order measured (:data:`ORDERS`).

    >>> from search.kt_cache import KtCache
    >>> from search.replay_space import ReplaySpace
    >>> cache = KtCache({"x": [1, 2, 3]}, [{"x": 1, "time": 2.0}, {"x": 2, "time": 1.0},
    ...                                    {"x": 3, "time": "InvalidConfig"}])
    >>> from search.measure.replay import ReplayMeasurer
    >>> from search.zero_shot_order import ZeroShotRanking
    >>> ranking = ZeroShotRanking(np.array([1, 0, 2]), np.arange(3.0), used=5, order="sources")
    >>> r = measure_top(ReplaySpace(cache), ReplayMeasurer(cache), ranking, 1)
    >>> r.ranked, r.best[1].config, r.ndcg, r.history_used, r.order
    ((1, 0, 2), {'x': 2}, 1.0, 5, 'sources')
    """

    ranked: tuple[int, ...]
    measured: tuple[tuple[int, MeasureRecord], ...]
    best: tuple[int, MeasureRecord] | None
    ndcg: float | None
    history_used: int
    order: str = "model"


def _training_set(space: Space, history: Sequence, cap: int, rng: np.random.Generator,
                  total: int | None = None) -> tuple[np.ndarray | None, np.ndarray, object]:
    """The model rows of the history's timed records (:func:`search.transfer.rows.rows_for`:
    on our conv template every record of any layer, on its own layer's cross-layer features;
    elsewhere the records in ``space``, on its features), their times relative to their
    source's best, at most ``cap`` per source and ``total`` in all
    (:func:`~search.cost_model.source_caps`, :func:`~search.cost_model.training_rows`),
    and the rows object (to make the candidates' rows with)."""
    from .transfer.rows import LayerRows, rows_for
    from .transfer.sources import timed_by_source

    rows = rows_for(space)
    across = isinstance(rows, LayerRows)  # elsewhere a record outside the space is not used
    sources = []
    for ms in timed_by_source(history).values():
        best = min(m.time_ms for m in ms)
        where = [space.index(m.record.config) for m in ms]
        got = [(x, m.time_ms / best) for x, m, i in zip(rows.record_rows(ms, where), ms, where)
               if x is not None and (across or i is not None)]
        if got:
            sources.append(got)
    caps = source_caps([len(got) for got in sources], cap, total or sum(map(len, sources)))
    X, cost = [], []
    for got, n in zip(sources, caps):
        rel = np.array([c for _, c in got])
        for k in training_rows(rel, n, rng):
            X.append(got[k][0])
            cost.append(rel[k])
    return (np.vstack(X) if X else None), np.array(cost), rows


def rankable(space: Space, history: Sequence) -> bool:
    """Whether some timed record of ``history`` can train the ranking of ``space``: a
    configuration of it, or (on our conv template) any record with its layer's rows.

    >>> from search.db import Measurement, Workload
    >>> from search.grid_space import GridSpace
    >>> space, w = GridSpace({"x": list(range(12))}), Workload("k", [8], ("x",))
    >>> hist = [Measurement(w, "a", "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + abs(x - 2)))
    ...         for x in range(12)]
    >>> rankable(space, hist), rankable(GridSpace({"y": [1, 2]}), hist)  # y: no record
    (True, False)
    """
    from .transfer.rows import LayerRows, rows_for
    timed = [h for h in history if h.time_ms is not None]
    # On our conv template a configuration of the space is not enough: its record needs
    # rows (a device preset, a layer problem), so only the training set itself can tell.
    if (not isinstance(rows_for(space), LayerRows)
            and any(space.index(h.record.config) is not None for h in timed)):
        return True
    return _training_set(space, timed, 1, np.random.default_rng(0))[0] is not None


def history_ranking(space: Space, history: Sequence, options: ZeroShotOptions | None = None,
                    seed: int = 0) -> tuple[np.ndarray, np.ndarray, int]:
    """(candidate indices best first, their predicted scores, records used to train).

    Raises
    ------
    InvalidInputError
        When no history record can train the model (:func:`rankable`).

    >>> from search.db import Measurement, Workload
    >>> from search.grid_space import GridSpace
    >>> space, w = GridSpace({"x": list(range(12))}), Workload("k", [8], ("x",))
    >>> hist = [Measurement(w, "a", "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + abs(x - 2)))
    ...         for x in range(12)]
    >>> ranked, scores, used = history_ranking(space, hist, ZeroShotOptions(k=2, candidates=4))
    >>> len(ranked), bool((np.diff(scores) >= 0).all()), used  # 4 random ones, best first
    (4, True, 12)
    """
    history, seed = check_history_inputs(space, history, options, ZeroShotOptions, seed)
    o = options or ZeroShotOptions()
    X, cost, rows = _training_set(space, history, o.max_rows_per_source,
                                  np.random.default_rng(seed), o.max_rows)
    if X is None:
        raise InvalidInputError("zero-shot needs history: no record is a configuration of "
                                "this space or has its features")
    model = XGBCostModel(o.model, seed=seed).fit(X, cost)
    if o.candidates is None or o.candidates >= len(space):
        cand = np.arange(len(space))
    else:
        cand = np.array(sorted(space.sample(o.candidates, np.random.default_rng(seed))))
    pred = model.predict(rows.space_rows(cand))
    order = np.argsort(pred, kind="stable")
    return cand[order], pred[order], len(cost)


def _check_ndcg_input(predicted: np.ndarray, relevance: np.ndarray, k: int) -> None:
    """InvalidInputError unless ``k`` is an int >= 1, ``predicted`` and ``relevance`` are
    flat and of one length, the costs have no NaN and every relevance is in [0, 1]."""
    check_count("k", k, low=1)
    if predicted.ndim != 1 or relevance.ndim != 1 or len(predicted) != len(relevance):
        raise InvalidInputError(f"predicted and relevance must be flat and of one length; got "
                                f"shapes {predicted.shape} and {relevance.shape}")
    if np.isnan(predicted).any():
        raise InvalidInputError("predicted costs must not be NaN")
    bad = ~((relevance >= 0) & (relevance <= 1))  # NaN and the infinities too
    if bad.any():
        raise InvalidInputError(f"relevance must be finite and in [0, 1] (optimum / time); got "
                                f"{relevance[bad][0]} at position {int(np.argmax(bad))}")


def _numbers(name: str, value) -> np.ndarray:
    """``value`` as a float array when it holds real numbers; else InvalidInputError naming
    ``name`` (a string or a complex number is no cost, never a raw ValueError or TypeError).

    >>> _numbers("predicted", ["a"])
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: predicted must be an array of real numbers, got ['a']
    """
    from .option_checks import shown
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):  # a ragged list
        arr = None
    if arr is None or arr.dtype.kind not in "biuf":
        raise InvalidInputError(f"{name} must be an array of real numbers, got {shown(value)}")
    return arr.astype(float)


def ndcg_at_k(predicted: np.ndarray, relevance: np.ndarray, k: int) -> float:
    """NDCG@K of ranking items by ``predicted`` cost (lower first) against true ``relevance``.

    ``relevance`` is optimum / time (module doc), each in [0, 1]: a negative one would make
    the score negative, and gains ``2**rel - 1`` overflow far above 1; ``k`` is an int >= 1
    (larger than the items: all of them).

    >>> ndcg_at_k([2.0, 1.0], [1.0, 0.5], 0)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: k=0 is below the minimum 1
    """
    predicted, relevance = _numbers("predicted", predicted), _numbers("relevance", relevance)
    _check_ndcg_input(predicted, relevance, k)
    k = min(k, len(relevance))
    disc = 1.0 / np.log2(np.arange(2, k + 2))
    gain = np.expm1(relevance * math.log(2.0))  # 2**rel - 1, exact for tiny rel
    dcg = float(gain[np.argsort(predicted, kind="stable")[:k]] @ disc)
    ideal = float(np.sort(gain)[::-1][:k] @ disc)
    return dcg / ideal if ideal > 0 else 0.0


def recorded_relevance(space) -> np.ndarray | None:
    """optimum / time for every configuration of a recorded space (0 for failures), else None;
    by the space's index, which need not be the file's order of entries (a replayed space
    numbers its configurations in Kernel Tuner's enumeration order).

    >>> from search.kt_cache import KtCache
    >>> from search.replay_space import ReplaySpace
    >>> cache = KtCache({"x": [1, 2, 3]}, [{"x": 1, "time": 2.0}, {"x": 2, "time": 1.0},
    ...                                    {"x": 3, "time": "InvalidConfig"}])
    >>> from search.grid_space import GridSpace
    >>> recorded_relevance(ReplaySpace(cache)).tolist(), recorded_relevance(GridSpace({"x": [1]}))
    ([0.5, 1.0, 0.0], None)
    """
    from .kt_cache import recorded_time
    cache = getattr(space, "cache", None)
    if cache is None:
        return None
    t = np.full(len(space), np.inf)
    for e in cache.entries:
        i = space.index({p: e[p] for p in space.params})
        time = recorded_time(e)
        if i is not None and time is not None:
            t[i] = time
    return np.where(np.isfinite(t), t.min() / t, 0.0) if np.isfinite(t).any() else None


def zero_shot(space: Space, measurer: Measurer, history: Sequence,
              options: ZeroShotOptions | None = None, seed: int = 0,
              target_problem=None) -> ZeroShotResult:
    """Rank ``space`` by the history, measure the top K (see module doc; the order,
    ``options.order``, and ``target_problem``: :mod:`search.zero_shot_order`).

    Here another device's records rank a recorded space (its optimum x = 3; the other
    device's x = 4) and only the top 3 are measured:

    >>> from search.db import Measurement, Workload
    >>> from search.measure.base import MeasureRecord
    >>> from search.measure.replay import ReplayMeasurer
    >>> from search.kt_cache import KtCache
    >>> from search.replay_space import ReplaySpace
    >>> cache = KtCache({"x": list(range(12))},
    ...                 [{"x": x, "time": 1.0 + abs(x - 3)} for x in range(12)])
    >>> space, w = ReplaySpace(cache), Workload("k", [1], ("x",))
    >>> hist = [Measurement(w, "other", "t", MeasureRecord.ok({"x": x}, time_ms=2.0 + abs(x - 4)))
    ...         for x in range(12)]
    >>> r = zero_shot(space, ReplayMeasurer(cache), hist, ZeroShotOptions(k=3))
    >>> r.ranked[:3], [i for i, _ in r.measured], r.best[1].config, round(r.ndcg, 3)
    ((4, 3, 5), [4, 3, 5], {'x': 3}, 0.8)

    One ranking serves every K (:func:`measure_top`; here the model's order alone):

    >>> ranking = history_ranking(space, hist)
    >>> [measure_top(space, ReplayMeasurer(cache), ranking, k).best[0] for k in (1, 3)]
    [4, 3]
    """
    from .zero_shot_order import zero_shot_ranking
    history, seed = check_history_inputs(space, history, options, ZeroShotOptions, seed)
    check_type("measurer", measurer, Measurer)
    o = options or ZeroShotOptions()
    return measure_top(space, measurer, zero_shot_ranking(space, history, o, seed,
                                                          target_problem), o.k)


def _repeated(ranked: np.ndarray) -> np.ndarray:
    """Whether each index of ``ranked`` appeared before it."""
    first = np.zeros(len(ranked), bool)
    first[np.unique(ranked, return_index=True)[1]] = True
    return ~first


def measure_top(space: Space, measurer: Measurer, ranking: tuple, k: int) -> ZeroShotResult:
    """Measure the top ``k`` of ``ranking``, a :func:`history_ranking` of ``space`` (or a
    :func:`search.zero_shot_order.zero_shot_ranking`, which names its order). The ranking
    does not depend on K, so one serves every K (as the benchmark does), but for
    ``order="auto"``, which chooses with the K of its options. (Example: :func:`zero_shot`'s,
    which measures one ranking's top 1 and top 3.)

    A ranking made by hand, on a recorded space whose x = 3 failed:

    >>> from search.kt_cache import KtCache
    >>> from search.replay_space import ReplaySpace
    >>> cache = KtCache({"x": [1, 2, 3]}, [{"x": 1, "time": 2.0}, {"x": 2, "time": 1.0},
    ...                                    {"x": 3, "time": "InvalidConfig"}])
    >>> from search.measure.replay import ReplayMeasurer
    >>> ranking = (np.array([2, 0, 1]), np.array([0.1, 0.2, 0.3]), 0)
    >>> r = measure_top(ReplaySpace(cache), ReplayMeasurer(cache), ranking, 2)
    >>> [(i, rec.status.value) for i, rec in r.measured], r.best[0], round(r.ndcg, 3)
    ([(2, 'invalid'), (0, 'ok')], 0, 0.207)
    """
    check_count("k", k, low=1)
    check_type("space", space, Space)
    if not callable(getattr(measurer, "measure", None)):  # a stand-in with measure() is one
        from .option_checks import shown
        raise InvalidInputError(f"measurer must be a search.measure.base.Measurer (with a "
                                f"measure method), got {shown(measurer)}")
    if not isinstance(ranking, tuple) or len(ranking) < 3:
        raise InvalidInputError(f"ranking must be history_ranking's (indices, scores, records), "
                                f"got {ranking!r:.60}")
    ranked, scores, used = ranking[:3]
    ranked = np.asarray(ranked)
    if ranked.ndim != 1 or not len(ranked):
        raise InvalidInputError(f"ranking's indices must be a non-empty list of indices of the "
                                f"space, got shape {ranked.shape}")
    if ranked.dtype.kind not in "iu" or ranked.min() < 0 or ranked.max() >= len(space):
        raise InvalidInputError(f"ranking's indices must be indices of the space (0 to "
                                f"{len(space) - 1}): it was made for another space")
    if len(np.unique(ranked)) != len(ranked):  # one configuration measured k times, NDCG 1
        raise InvalidInputError("ranking's indices must each appear once, got "
                                f"{int(ranked[np.argmax(_repeated(ranked))])} again")
    scores = _numbers("ranking's scores", scores)  # before a measurement, not after
    if scores.shape != ranked.shape:
        raise InvalidInputError(f"ranking's scores must be one per index, got {len(scores)} "
                                f"for {len(ranked)}")
    order = getattr(ranking, "order", "model")  # a ZeroShotRanking names its order
    top = [int(i) for i in ranked[:k]]
    records = [as_measured(r) for r in measurer.measure([space.get(i) for i in top])]
    measured = tuple(zip(top, records))
    ok = [(i, r) for i, r in measured if r.is_ok and math.isfinite(r.cost)]
    best = min(ok, key=lambda t: t[1].cost) if ok else None
    rel = recorded_relevance(space)
    ndcg = ndcg_at_k(scores, rel[ranked], k) if rel is not None else None
    return ZeroShotResult(tuple(int(i) for i in ranked), measured, best, ndcg, used, order)
