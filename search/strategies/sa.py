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
    """AutoTVM's defaults: batches of 8, plan 64, 5% random, annealing (128 chains, 500 steps).

    >>> o = SAOptions()
    >>> o.batch_size, o.init_random, o.plan_size, o.optimizer.n_chains, o.optimizer.n_iter
    (8, 64, 64, 128, 500)
    """

    batch_size: int = 8
    init_random: int = 64
    epsilon: float = 0.05
    plan_size: int | None = 64
    optimizer: AnnealOptions = field(default_factory=AnnealOptions)
    endgame: float = 0.0


class SAStrategy(ModelBasedStrategy):
    """AutoTVM-style XGBoost + simulated annealing (see module doc).

    >>> import numpy as np
    >>> from search.grid_space import GridSpace
    >>> from search.measure.base import MeasureRecord
    >>> from search.cost_model import XGBOptions
    >>> s = SAStrategy(GridSpace({"a": list(range(40))}), SAOptions(init_random=4, plan_size=4,
    ...     model=XGBOptions(n_estimators=10), optimizer=AnnealOptions(n_chains=4, n_iter=50)),
    ...     rng=np.random.default_rng(0))
    >>> first = s.ask(4)
    >>> s.tell(first, [MeasureRecord.ok({"a": a}, time_ms=1.0 + a) for a in first])
    >>> sorted(s.ask(4)), s.stats()["fits"]  # a plan of 4 the annealing proposed
    ([7, 8, 9, 11], 1)
    """

    name = "sa"
    Options = SAOptions
