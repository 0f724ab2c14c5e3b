"""Search: spaces, cost model, model optimizers, strategies, measurers and the tuning loop.

The entry point is the tuning session (what ``iobound tune`` runs):
:func:`~search.session.tune_layers` ``(layers, device, TuneSettings(...), measure=,
algorithm=, out_dir=, verify=) -> [LayerReport]`` tunes each layer's kernel, stores
and exports the measurements and reports the winner (bound, kernel file, emulator
check; ``algorithm="all"``: each layer once per algorithm that computes it, and
:func:`~search.session.choose_algorithms` keeps the fastest);
:func:`~search.session.tune_replay` does the same for a recorded Kernel
Tuner space and reports its recorded optimum.

The parts (imported lazily, so ``import search`` stays light)::

    from search import tune, ReplaySpace, ReplayMeasurer
    space = ReplaySpace("convolution_A100.json.gz")          # a recorded Kernel Tuner space
    result = tune(space, ReplayMeasurer(space.cache), strategy="explorer", budget=50, seed=0)
    result.best.config, result.best.record.time_ms, result.evaluations

- :func:`search.tuner.tune` ``(space, measurer, strategy="explorer", budget=48, seed=0,
  log=None, resume=None, options=None, patience=None, progress=None) -> TuneResult``;
- spaces: :class:`~search.space.Space` (abc), :class:`~search.grid_space.GridSpace`,
  :class:`~search.replay_space.ReplaySpace`, ``search.conv_space.ConvSpace``;
- measurers: :func:`~search.measure.make_measurer` (``cuda``, ``emulate``, ``model``, ``replay``);
- strategies: :func:`~search.strategies.strategy_names`, :func:`~search.strategies.make_options`.

Examples
--------
>>> import search, tempfile
>>> sorted(search.strategy_names())
['explorer', 'ga', 'gga', 'grid', 'random', 'sa', 'zero_shot']
>>> from iobound.networks import get_layer
>>> [rep] = search.tune_layers([get_layer("alexnet.conv3")], "v100",
...                            search.TuneSettings(strategy="random", budget=4),
...                            out_dir=tempfile.mkdtemp(), verify=False)
>>> rep.layer.name, rep.result.evaluations, rep.winner.bound.method
('alexnet.conv3', 4, 'x_partition_chain')
>>> rep.winner.kernel_path.endswith("alexnet.conv3_direct_best.cu")
True
"""

from __future__ import annotations

import importlib

__all__ = ["tune_layers", "tune_replay", "choose_algorithms", "TuneSettings", "LayerReport",
           "ReplayReport",
           "Builders", "Observer", "tune", "TuneResult", "Trial", "StopReason", "Space", "GridSpace", "ReplaySpace", "ReplayMeasurer",
           "MeasureRecord", "Measurer", "make_measurer", "strategy_names", "make_options",
           "make_strategy", "load_cache", "write_cache", "XGBCostModel", "ModelOptimizer",
           "WalkOptimizer", "AnnealOptimizer"]

_WHERE = {
    "tune_layers": "search.session", "tune_replay": "search.session",
    "choose_algorithms": "search.session",
    "TuneSettings": "search.session", "LayerReport": "search.session",
    "ReplayReport": "search.session", "Builders": "search.session", "Observer": "search.session",
    "tune": "search.tuner", "TuneResult": "search.tuner", "Trial": "search.tuner",
    "StopReason": "search.tuner",
    "Space": "search.space", "GridSpace": "search.grid_space",
    "ReplaySpace": "search.replay_space", "ReplayMeasurer": "search.measure.replay",
    "MeasureRecord": "search.measure.base", "Measurer": "search.measure.base",
    "make_measurer": "search.measure",
    "strategy_names": "search.strategies", "make_options": "search.strategies",
    "make_strategy": "search.strategies",
    "load_cache": "search.kt_cache", "write_cache": "search.kt_cache_write",
    "XGBCostModel": "search.cost_model", "ModelOptimizer": "search.optimizers",
    "WalkOptimizer": "search.optimizers", "AnnealOptimizer": "search.optimizers",
}


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'search' has no attribute {name!r}")
