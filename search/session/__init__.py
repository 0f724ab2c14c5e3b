"""A tuning session: tune the kernels of layers (or a recorded space) end to end.

The job the ``iobound tune`` command does, as a Python API: per layer, build the
space and the measurer, run the tuning loop (log, resume), store the measurements
(history database, Kernel Tuner cache export), and report the winner with its I/O
against the lower bound, its CUDA file and an emulator check. Everything comes
back as frozen dataclasses (:class:`LayerReport`, :class:`ReplayReport`).

- :mod:`~search.session.settings`: :class:`TuneSettings` (strategy, budget, seed,
  files), :class:`Builders` (the functions that build space, measurer and strategy:
  the seams to swap) and :class:`Observer` (hooks for progress and printing);
- :mod:`~search.session.plan` and :mod:`~search.session.run`: :func:`tune_layers` =
  :func:`plan_layers` (check, one :class:`LayerJob` per layer) + :func:`run_layers` (:func:`run_layer` each;
  :mod:`~search.session.repeats`: a layer of an earlier one's shape takes its report);
- :mod:`~search.session.replay`: :func:`tune_replay`, a recorded Kernel Tuner space;
- :mod:`~search.session.loop`: the tuning loop of one space and its stored outcomes, shared
  by both;
- :mod:`~search.session.files`: per-layer file names, resume, the paths checked first;
- :mod:`~search.session.storage`: what a run stores at its end (history, export);
- :mod:`~search.session.reports`: the report dataclasses;
- :mod:`~search.session.choice`: a layer tuned with every algorithm (``algorithm="all"``):
  the fastest of its reports.

Examples
--------
>>> import tempfile
>>> from iobound.layer_spec import parse_layer_spec
>>> layer = parse_layer_spec("cin=8,hin=8,cout=16,kh=3,pad=1")
>>> [rep] = tune_layers([layer], "v100", TuneSettings(strategy="random", budget=6),
...                     out_dir=tempfile.mkdtemp(), verify=False)
>>> rep.result.evaluations, rep.result.best.record.estimate, rep.winner.bound.ratio_to_bound >= 1
(6, True, True)
"""

from .choice import AlgorithmChoice, choose_algorithms
from .files import per_layer_path
from .storage import cache_meta, history_key
from .history_use import HISTORY_STRATEGIES, HistoryUse, history_options
from .reports import ExportOutcome, HistoryOutcome, LayerReport, ReplayReport
from .replay import tune_replay
from .plan import ALL_ALGORITHMS, LayerJob, layer_algorithms, plan_layers
from .run import run_layer, run_layers, tune_layers
from .settings import LAYER_MEASURES, Builders, Observer, TuneSettings

__all__ = ["tune_layers", "tune_replay", "plan_layers", "run_layer", "run_layers", "LayerJob",
           "TuneSettings", "Builders", "Observer", "LayerReport", "ReplayReport",
           "HistoryOutcome", "ExportOutcome", "history_key", "cache_meta", "per_layer_path",
           "LAYER_MEASURES", "HistoryUse", "history_options", "HISTORY_STRATEGIES",
           "ALL_ALGORITHMS", "layer_algorithms", "AlgorithmChoice", "choose_algorithms"]
