"""Which order zero-shot measures: the history model's, or every source heard in turn.

Lorien ranks the space with one model of all the history
(:func:`search.zero_shot.history_ranking`). A pooled model is right when the sources
differ from the target in independent ways (it averages their quirks out) and wrong
when one of them is the target's near twin (a GPU of the same family): it blurs what
that source knows. The other order (``"sources"``) walks in turn the model's order, the
consensus of the sources (:func:`search.transfer.sources.consensus`) and each source's
own list, fastest first, each configuration once (:class:`search.transfer.picker.Picker`),
so every device is heard among the first picks. Only sources that measured the target's
own problem have lists; with none, both orders are the model's.

``"auto"`` chooses on the history itself, as cross-validation chooses a model: each of
up to ``loso_sources`` devices with such a source is the target in turn and the other
devices its history (the model fitted again without it); each order scores the best of
the first ``k`` configurations that device measured (its best time over theirs), and the
order with the higher mean over the devices wins, the model's on a tie. The real
target's records are never read: only the history's. The choice's models are fitted with
one seed (:data:`CHOICE_SEED`): a history gives every run the same choice.

Examples
--------
>>> from search.db import Measurement, Workload
>>> from search.measure.base import MeasureRecord
>>> from search.grid_space import GridSpace
>>> space, w = GridSpace({"x": list(range(12))}), Workload("k", [8], ("x",))
>>> hist = [Measurement(w, d, "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + abs(x - b)))
...         for d, b in (("a", 2), ("b", 9)) for x in range(12)]
>>> sources_order(space, hist, np.array([5, 6, 4]), [8])[:5].tolist()
[5, 2, 1, 9, 6]

(the model's best 5, the consensus's 2, then a's best not taken, 1, b's 9, the model's 6).
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from iobound.errors import InvalidInputError

from .space import Space
from .zero_shot import ORDERS, ZeroShotOptions, history_ranking

__all__ = ["ORDERS", "CHOICE_SEED", "ZeroShotRanking", "sources_order", "choose_order",
           "choose_orders", "zero_shot_ranking", "zero_shot_rankings"]

#: The seed of the models fitted to choose the order (the same choice for every run).
CHOICE_SEED = 0


class ZeroShotRanking(NamedTuple):
    """The configurations in the order zero-shot measures them, a cost per position
    (lower first: NDCG is computed on it), the history records the model learned from,
    and which order it is (``"model"`` or ``"sources"``).

    >>> r = ZeroShotRanking(np.array([2, 0, 1]), np.arange(3.0), used=0, order="sources")
    >>> r.order, int(r.ranked[0]), len(r)
    ('sources', 2, 4)
    """

    ranked: np.ndarray
    scores: np.ndarray
    used: int
    order: str


def _same_problem_groups(space: Space, history: Sequence, target_problem: Any) -> list:
    from .transfer.sources import source_groups
    return [g for g in source_groups(space, history, target_problem) if g.same_problem]


def sources_order(space: Space, history: Sequence, model_order: np.ndarray,
                  target_problem: Any = None) -> np.ndarray:
    """``model_order``, the consensus and each source's own list walked in turn, each
    configuration once; ``model_order`` itself where no source measured
    ``target_problem`` (module doc).

    >>> from search import GridSpace, MeasureRecord
    >>> from search.db import Measurement, Workload
    >>> space, w = GridSpace({"x": list(range(12))}), Workload("k", [8], ("x",))
    >>> hist = [Measurement(w, d, "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + abs(x - b)))
    ...         for d, b in (("a", 2), ("b", 9)) for x in range(12)]
    >>> sources_order(space, hist, np.array([5, 6, 4]), [16]).tolist()  # no source measured it
    [5, 6, 4]
    """
    return _walk(model_order, _same_problem_groups(space, history, target_problem))


def _walk(model_order: np.ndarray, groups: list) -> np.ndarray:
    """:func:`sources_order` of the sources ``groups`` (each one's list and their consensus)."""
    from .transfer.picker import Picker
    from .transfer.sources import consensus
    if not groups:
        return np.asarray(model_order, dtype=np.int64)
    lists = [np.asarray(model_order, dtype=np.int64), consensus(groups),
             *(g.indices for g in groups)]
    total = len(np.unique(np.concatenate(lists)))
    return np.array(Picker(lists).picks(total, set()), dtype=np.int64)


def _walk_run(model_order: np.ndarray, groups: list) -> np.ndarray:
    """The walk zero-shot runs: :func:`_walk` cut to as many configurations as the model
    ranked (``candidates`` when set)."""
    return _walk(model_order, groups)[:len(model_order)]


def _first_k_score(order: np.ndarray, rel_time: dict[int, float], k: int) -> float:
    """best / time of the best of ``order``'s first ``k`` configurations in ``rel_time``."""
    seen = [rel_time[i] for i in order.tolist() if i in rel_time][:k]
    return 1.0 / min(seen) if seen else 0.0


def _loso_means(space: Space, history: Sequence, target_problem: Any, o: ZeroShotOptions,
                seed: int, ks: Sequence[int]) -> dict[int, tuple[float, float]] | None:
    """``{k: (the model's mean score, the sources' order's)}`` over the history's devices,
    each left out in turn (module doc); ``None`` with fewer than two devices to leave out."""
    groups = _same_problem_groups(space, history, target_problem)
    devices = list(dict.fromkeys(g.device for g in groups))[:o.loso_sources]
    scores: dict[int, tuple[list, list]] = {k: ([], []) for k in ks}
    from .transfer.sources import source_devices
    source_of = source_devices(history)  # the groups' device names
    for device in devices if len(devices) >= 2 else ():
        rest = [m for m in history if source_of[m.device] != device]
        rel: dict[int, float] = {}  # the device's time over its best, per configuration
        for g in groups:
            if g.device == device:
                for i, r in zip(g.indices.tolist(), g.rel_time.tolist()):
                    rel[i] = min(rel.get(i, r), r)
        try:
            model = history_ranking(space, rest, o, seed)[0]
        except InvalidInputError:  # the others' records cannot train a model
            continue
        walked = _walk_run(model, [g for g in groups if g.device != device])  # the rest's
        for k in ks:
            scores[k][0].append(_first_k_score(model, rel, k))
            scores[k][1].append(_first_k_score(walked, rel, k))
    if not any(m for m, _ in scores.values()):
        return None
    return {k: (float(np.mean(m)), float(np.mean(w))) for k, (m, w) in scores.items()}


def _chosen(means: tuple[float, float] | None) -> str:
    return "sources" if means is not None and means[1] > means[0] else "model"


def choose_orders(space: Space, history: Sequence, ks: Sequence[int],
                  target_problem: Any = None, options: ZeroShotOptions | None = None
                  ) -> dict[int, str]:
    """For each K of ``ks``, ``"model"`` or ``"sources"``: the order that ranked the
    history's own devices better at K, each left out in turn (module doc); ``"model"`` on
    a tie and with fewer than two devices that measured ``target_problem``. The models are
    fitted with seed :data:`CHOICE_SEED`, so one history gives every run one choice (and a
    benchmark can make it once for all its seeds).

    >>> from search import GridSpace, MeasureRecord
    >>> from search.db import Measurement, Workload
    >>> space, w = GridSpace({"x": list(range(12))}), Workload("k", [8], ("x",))
    >>> hist = [Measurement(w, d, "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + abs(x - b)))
    ...         for d, b in (("a", 1), ("b", 10), ("c", 1), ("d", 10)) for x in range(12)]
    >>> choose_orders(space, hist, [1, 2, 3], [8])
    {1: 'model', 2: 'sources', 3: 'sources'}
    """
    o = options or ZeroShotOptions()
    means = _loso_means(space, history, target_problem, o, CHOICE_SEED, ks)
    return {k: _chosen(means and means[k]) for k in ks}


def choose_order(space: Space, history: Sequence, target_problem: Any = None,
                 options: ZeroShotOptions | None = None) -> str:
    """:func:`choose_orders` at ``options.k``.

    >>> from search import GridSpace, MeasureRecord
    >>> from search.db import Measurement, Workload
    >>> space, w = GridSpace({"x": list(range(12))}), Workload("k", [8], ("x",))
    >>> hist = [Measurement(w, d, "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + abs(x - b)))
    ...         for d, b in (("a", 1), ("b", 10), ("c", 1), ("d", 10)) for x in range(12)]
    >>> o = ZeroShotOptions(k=3)
    >>> choose_order(space, hist, [8], o), choose_order(space, hist, [16], o)  # none measured 16
    ('sources', 'model')
    """
    o = options or ZeroShotOptions()
    return choose_orders(space, history, [o.k], target_problem, o)[o.k]


def zero_shot_rankings(space: Space, history: Sequence, ks: Sequence[int],
                       options: ZeroShotOptions | None = None, seed: int = 0,
                       target_problem: Any = None,
                       orders: Mapping[int, str] | None = None) -> dict[int, ZeroShotRanking]:
    """:func:`zero_shot_ranking` for each K of ``ks`` (``options.k`` aside), the model
    fitted once for all of them (as the benchmark measures every budget); ``orders``, a
    :func:`choose_orders` made before, saves making it again for ``order="auto"``. Where no
    source measured ``target_problem`` the sources' order is the model's, and is named so
    (``"model"``), whatever was asked. The sources' order ranks as many configurations as
    the model did (``options.candidates`` when set): the sources' lists take their turns
    among them, and what the walk reaches past that count is left out.

    >>> from search import GridSpace, MeasureRecord
    >>> from search.db import Measurement, Workload
    >>> space, w = GridSpace({"x": list(range(12))}), Workload("k", [8], ("x",))
    >>> hist = [Measurement(w, d, "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + abs(x - b)))
    ...         for d, b in (("a", 2), ("b", 9)) for x in range(12)]
    >>> got = zero_shot_rankings(space, hist, [1, 3], ZeroShotOptions(order="sources"), 0, [16])
    >>> [r.order for r in got.values()]
    ['model', 'model']
    """
    o = options or ZeroShotOptions()
    ranked, scores, used = history_ranking(space, history, o, seed)
    if o.order != "auto":
        orders = {k: o.order for k in ks}
    elif orders is None:
        orders = choose_orders(space, history, ks, target_problem, o)
    groups = (_same_problem_groups(space, history, target_problem)
              if "sources" in orders.values() else [])
    # no source measured the target's problem: the walk is the model's order, and says so
    walked = _walk_run(ranked, groups) if groups else None
    return {k: ZeroShotRanking(ranked, scores, used, "model") if walked is None
            or orders[k] == "model" else
            ZeroShotRanking(walked, np.arange(len(walked), dtype=float), used, "sources")
            for k in ks}


def zero_shot_ranking(space: Space, history: Sequence, options: ZeroShotOptions | None = None,
                      seed: int = 0, target_problem: Any = None) -> ZeroShotRanking:
    """The order zero-shot measures ``space`` in (``options.order``, chosen at
    ``options.k`` for ``"auto"``; module doc).

    Raises
    ------
    InvalidInputError
        When no history record can train the model (:func:`search.zero_shot.rankable`).

    >>> from search import GridSpace, MeasureRecord
    >>> from search.db import Measurement, Workload
    >>> space, w = GridSpace({"x": list(range(12))}), Workload("k", [8], ("x",))
    >>> hist = [Measurement(w, d, "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + abs(x - b)))
    ...         for d, b in (("a", 2), ("b", 9)) for x in range(12)]
    >>> r = zero_shot_ranking(space, hist, ZeroShotOptions(order="sources"), target_problem=[8])
    >>> r.order, r.ranked[:4].tolist(), r.scores[:4].tolist(), r.used
    ('sources', [2, 9, 1, 8], [0.0, 1.0, 2.0, 3.0], 24)
    """
    o = options or ZeroShotOptions()
    return zero_shot_rankings(space, history, [o.k], o, seed, target_problem)[o.k]
