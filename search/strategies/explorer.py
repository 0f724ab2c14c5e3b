"""The paper's tuner (section 6.3) as a strategy: train -> explore -> (measure -> update).

The model-based strategy (:mod:`.model_based`) with the random-walk optimizer
(:class:`~search.optimizers.walk.WalkOptimizer`): each round fits the XGBoost cost
model on every measurement so far and the walks propose the batch (past 256
measurements, a round refits once they have grown by a sixteenth since the last fit,
and the rounds between propose from the last model: a run measured to exhaustion is
not quadratic in its length). A share
``epsilon`` of each batch is random (exploration, so a wrong model cannot trap
the search); the first ``init_random`` configurations are random too, since there
is no model before there is data.

The run's last 15% of the budget (``endgame``; the tuner tells the strategy its
budget) is a local search instead: each batch is the unmeasured one-change
neighbours of 8 elite configurations, the best one's first. The elites are the best
measured configurations of distinct regions (``endgame_spread=2``: none a single
change from a better one), so the sweep also climbs the second-best basin instead
of re-sweeping the best one's neighbours. In the recorded spaces a stalled run's
optimum is most often a neighbour of one of them, or up the basin the walks left
(a run stuck in the shared-memory variants), while the model ranks it in the
hundreds. Measured on three sets of 30 seeds
(``benchmarks/results/explorer_experiments.md``): the endgame raises the mean at 200
evaluations and leaves smaller budgets within the noise.

Defaults: rounds of ``batch_size=4`` after ``init_random=4`` random configurations.
Small rounds retrain the model after every few measurements, which matters most
when data is scarce (each point moves a model fitted on a handful); a GPU still
gets a batch to compile in parallel. What these defaults scored on the recorded
spaces, and the alternatives tried and not kept, are in
``benchmarks/results/explorer_experiments.md``; among them the stall exploration
of :mod:`.stall` (``options={"stall": {"source": "sweep"}}``), off by default
because it did not win on 30 seeds, and the cost-model variants of
:class:`~search.cost_model.XGBOptions` (``topk`` or ``blend`` pairs, bootstrap
fits): they rank the optimum higher on traced runs but lost at 100 evaluations.

Examples
--------
>>> import numpy as np
>>> from search.grid_space import GridSpace
>>> s = ExplorerStrategy(GridSpace({"a": list(range(30))}), rng=np.random.default_rng(0))
>>> len(set(s.ask(8)))
8
"""

from __future__ import annotations

from .model_based import ModelBasedOptions, ModelBasedStrategy

__all__ = ["ExplorerStrategy", "ExplorerStrategyOptions"]

#: The explorer's options are the model-based defaults (random walks, retrain every round).
ExplorerStrategyOptions = ModelBasedOptions


class ExplorerStrategy(ModelBasedStrategy):
    """XGBoost cost model + parallel random-walk optimizer (see module doc).

    >>> import numpy as np
    >>> from search.grid_space import GridSpace
    >>> s = ExplorerStrategy(GridSpace({"a": list(range(30))}), rng=np.random.default_rng(0))
    >>> s.name, s.options.init_random, s.options.endgame, type(s.options.optimizer).__name__
    ('explorer', 4, 0.15, 'WalkOptions')
    """

    name = "explorer"
    Options = ExplorerStrategyOptions
