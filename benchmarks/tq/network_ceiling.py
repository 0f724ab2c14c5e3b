"""How far the history's candidates can take a layer of our conv template: the ceiling of
leave-network-out (:mod:`.network`), as ``benchmarks/history_ceiling.py`` is for recorded spaces.

For a target layer and the history of other networks' layers, the best score
(``reference / time``, the ``model`` measurer) among the first K configurations of each list
the history can offer before anything of the target is measured:

- ``ranking``: the prior's pairwise ranking model's order
  (:attr:`search.transfer.HistoryPrior.ranking`);
- ``regression``: zero-shot's regression of the history
  (:attr:`search.transfer.HistoryPrior.regression`; zero-shot with K measures exactly these);
- ``picks``: the history rounds' first K picks as :class:`search.transfer.HistoryGuided` makes
  them by default (:func:`search.transfer.guided.history_picker`; for a layer no source
  measured, the two models in turn; otherwise the consensus and each source's best in
  turn), before any outcome steers them (``follow_model``, matched orders).

A method that measures only the first K of one of these lists scores at most its ceiling;
the explorer with history also measures its own picks, so it can pass them. The reference
is the one the leave-network-out run scored against (its summary's ``reference_ms``), so a
ceiling above 1 means the list holds a configuration no run of that benchmark found.

Examples
--------
>>> best_within([0.5, 0.9, 0.7], ks=[1, 2, 5])
{1: 0.5, 2: 0.9, 5: 0.9}
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from search.conv_space import ConvSpace
from search.measure.model import ModelMeasurer
from search.transfer import HistoryPrior
from search.transfer.guided import history_picker

from benchmarks.score import speed_score

__all__ = ["LISTS", "best_within", "history_lists", "layer_ceiling", "mean_ceiling"]

LISTS = ("ranking", "regression", "picks")


def best_within(scores: Sequence[float], ks: Sequence[int]) -> dict[int, float]:
    """``{K: the best of the first K scores}`` (0.0 for an empty list)."""
    return {k: float(max(scores[:k], default=0.0)) for k in ks}


def history_lists(prior: HistoryPrior, n: int) -> dict[str, list[int]]:
    """The first ``n`` configurations of each of :data:`LISTS` (module doc)."""
    return {"ranking": [int(i) for i in prior.ranking[:n]],
            "regression": [int(i) for i in prior.regression[:n]],
            "picks": history_picker(prior).picks(n, set())}


def layer_ceiling(layer, device: str, history: list, reference_ms: float,
                  ks: Sequence[int]) -> dict:
    """``{"target", "same_problem", LIST: {K: score}...}`` for one target layer (module doc);
    every list scores 0.0 when the history gives the layer no prior."""
    space, meas = ConvSpace(layer, device), ModelMeasurer(layer, device)
    prior = HistoryPrior.fit(space, history, layer.to_dict(), seed=0)
    if prior is None:
        return {"target": layer.name, "same_problem": False,
                **{name: best_within([], ks) for name in LISTS}}
    lists = history_lists(prior, max(ks))
    wanted = sorted({i for lst in lists.values() for i in lst})
    cost = dict(zip(wanted, (r.cost for r in meas.measure([space.get(i) for i in wanted]))))
    score = {i: speed_score(reference_ms, c) for i, c in cost.items()}
    return {"target": layer.name, "same_problem": prior.has_target_problem,
            **{name: best_within([score[i] for i in lst], ks) for name, lst in lists.items()}}


def mean_ceiling(rows: list[dict], ks: Sequence[int]) -> dict[str, dict[int, float]]:
    """Per list, the mean over ``rows`` of the ceiling at each K."""
    return {name: {k: float(np.mean([r[name][k] for r in rows])) for k in ks} for name in LISTS}
