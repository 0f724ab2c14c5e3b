"""What the model-guided strategies share: when and how to (re)train the cost model.

Examples
--------
>>> import numpy as np
>>> from search.space import GridSpace
>>> from search.strategies.base import Observations
>>> from search.measure.base import MeasureRecord
>>> space = GridSpace({"a": list(range(6))})
>>> seen = Observations()
>>> seen.add([0, 3, 5], [MeasureRecord.ok(space.get(i), time_ms=1.0 + i) for i in (0, 3, 5)])
>>> m = train_model(space, seen, XGBOptions(n_estimators=10), seed=0, min_ok=2)
>>> m is not None and m.fitted
True
"""

from __future__ import annotations

from ..cost_model import CostModel, XGBCostModel, XGBOptions
from ..space import Space
from .base import Observations

__all__ = ["train_model", "XGBOptions"]


def train_model(space: Space, seen: Observations, options: XGBOptions, seed: int,
                min_ok: int = 2) -> CostModel | None:
    """An XGBoost model fitted on everything told so far; ``None`` when fewer than
    ``min_ok`` successful measurements exist (nothing to learn from yet)."""
    if len(seen.best()) < min_ok:
        return None
    idx, cost = seen.arrays()
    return XGBCostModel(options, seed=seed).fit(space.features(idx), cost)
