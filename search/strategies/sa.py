"""AutoTVM's XGBoost tuner as a baseline: simulated annealing over the cost model.

The recipe of TVM's ``XGBTuner`` + ``SimulatedAnnealingOptimizer``, as the
model-based strategy (:mod:`.model_based`) with the annealing optimizer
(:class:`~search.optimizers.anneal.AnnealOptimizer`) on AutoTVM's plan cadence:
configurations are random until ``plan_size`` (64) have been measured; every
time another ``plan_size`` measurements have arrived the model is retrained and
128 annealing chains (persisting between plans) collect the ``plan_size`` best
unmeasured predictions as the new plan. Batches are epsilon-greedy: the last
``epsilon`` share of each plan is replaced by random configurations.

Examples
--------
>>> import numpy as np
>>> from search.grid_space import GridSpace
>>> s = SAStrategy(GridSpace({"a": list(range(40))}), rng=np.random.default_rng(0))
>>> len(set(s.ask(8)))
8
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..optimizers import AnnealOptions
from .model_based import ModelBasedOptions, ModelBasedStrategy

__all__ = ["SAStrategy", "SAOptions"]


@dataclass(frozen=True)
class SAOptions(ModelBasedOptions):
    """AutoTVM's defaults: batches of 8, plan 64, 5% random, annealing (128 chains, 500 steps)."""

    batch_size: int = 8
    init_random: int = 64
    epsilon: float = 0.05
    plan_size: int | None = 64
    optimizer: AnnealOptions = field(default_factory=AnnealOptions)
    endgame: float = 0.0


class SAStrategy(ModelBasedStrategy):
    """AutoTVM-style XGBoost + simulated annealing (see module doc)."""

    name = "sa"
    Options = SAOptions
