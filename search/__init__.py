"""Search: spaces, cost model, model optimizers, strategies, measurers and the tuning loop.

The public API (imported lazily, so ``import search`` stays light)::

    from search import tune, ReplaySpace, ReplayMeasurer
    space = ReplaySpace("convolution_A100.json.gz")          # a recorded Kernel Tuner space
    result = tune(space, ReplayMeasurer(space.cache), strategy="explorer", budget=50, seed=0)
    result.best.config, result.best.record.time_ms, result.evaluations

- :func:`search.tuner.tune` ``(space, measurer, strategy="explorer", budget=50, seed=0,
  log=None, resume=None, options=None, patience=None, progress=None) -> TuneResult``;
- spaces: :class:`~search.space.Space` (abc), :class:`~search.space.GridSpace`,
  :class:`~search.replay_space.ReplaySpace`, ``search.conv_space.ConvSpace``;
- measurers: :func:`~search.measure.make_measurer` (``cuda``, ``emulate``, ``model``, ``replay``);
- strategies: :func:`~search.strategies.strategy_names`, :func:`~search.strategies.make_options`.

Examples
--------
>>> import search
>>> sorted(search.strategy_names())
['explorer', 'ga', 'gga', 'grid', 'random', 'sa']
"""

from __future__ import annotations

import importlib

__all__ = ["tune", "TuneResult", "Trial", "Space", "GridSpace", "ReplaySpace", "ReplayMeasurer",
           "MeasureRecord", "Measurer", "make_measurer", "strategy_names", "make_options",
           "make_strategy", "load_cache", "write_cache", "XGBCostModel", "ModelOptimizer",
           "WalkOptimizer", "AnnealOptimizer"]

_WHERE = {
    "tune": "search.tuner", "TuneResult": "search.tuner", "Trial": "search.tuner",
    "Space": "search.space", "GridSpace": "search.space",
    "ReplaySpace": "search.replay_space", "ReplayMeasurer": "search.measure.replay",
    "MeasureRecord": "search.measure.base", "Measurer": "search.measure.base",
    "make_measurer": "search.measure",
    "strategy_names": "search.strategies", "make_options": "search.strategies",
    "make_strategy": "search.strategies",
    "load_cache": "search.kt_cache", "write_cache": "search.kt_cache",
    "XGBCostModel": "search.cost_model", "ModelOptimizer": "search.optimizers",
    "WalkOptimizer": "search.optimizers", "AnnealOptimizer": "search.optimizers",
}


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'search' has no attribute {name!r}")
