"""Kernel Tuner's search strategies replayed on a recorded cache file (simulation mode).

How a run is made (the minimal faithful use of Kernel Tuner 1.x):
``kernel_tuner.tune_kernel(kernel_name, "", problem_size, [], tune_params,
restrictions=[member], cache=<plain .json copy>, simulation_mode=True,
strategy=<name>, strategy_options={"max_fevals": budget}, quiet=True)``.

- ``kernel_name``, ``problem_size`` and ``tune_params`` (in ``tune_params_keys``
  order) come from the cache file: Kernel Tuner checks them against the cache.
  The kernel source is never compiled in simulation mode, so it is empty (this is
  what Kernel Tuner's own ``tune_cache`` does).
- The restriction is membership of the recorded set, failed entries included, so
  Kernel Tuner's search space is exactly the set of recorded configurations, the
  same space our strategies search (``search.replay_space.ReplaySpace``).
  (``tune_cache`` would drop the failed entries, which would hide failures from
  Kernel Tuner only.) The space size is checked against the file.
- ``max_fevals`` in simulation mode counts unique cache hits, failed ones included
  (``SimulationRunner``): the same rule as ours (:mod:`.recorded`). The returned
  results list every evaluation in order, repeats included; the trace is its
  distinct configurations, truncated to the budget (never needed so far). A
  strategy that stops early keeps the evaluations it made (``n_evals`` < budget).
- Seeding: Kernel Tuner's strategies draw from the global ``random`` and
  ``numpy.random`` streams (``tune_kernel(seed=...)`` is only used by pymoo), so a
  run seeds both. Two call sites construct ``scipy.stats.qmc.LatinHypercube``
  without a seed (fresh OS entropy: diff_evo's constraint-aware population and
  bayes_opt's initial sample); during a run they get a generator drawn from the
  seeded numpy stream instead, so every run is reproducible -- except
  ``bayes_opt``, whose default method (``multi-ultrafast``) decides when to refit
  its model from measured wall-clock times, so its runs can differ with machine
  load (seen in 4 of 120 runs across two runs of the benchmark). Nothing else
  about the strategies is changed: default options, only ``max_fevals`` set.
- ``bayes_opt`` suffers from the recorded failures: it fits its Gaussian process
  to the successful observations only, so a failure teaches the model nothing and
  on these spaces it walks through a block of failing configurations; with the
  failures removed from the space (``--drop-failed``, for everyone) it does much
  better.
- Kernel Tuner reads only plain JSON, so the cache is written uncompressed into a
  temporary directory once per space (:func:`.recorded.plain_json_copy`); Kernel
  Tuner opens it read-only in simulation mode.
"""

from __future__ import annotations

import contextlib
import random
import time
import warnings
from pathlib import Path
from typing import Iterator

import numpy as np

from .recorded import RecordedSpace, RunResult, score_run

__all__ = ["KT_DEFAULT_STRATEGIES", "KT_EXTRA_STRATEGIES", "kt_available", "kt_version", "run_kt",
           "kt_space_size"]

#: The Kernel Tuner strategies compared by default: the issue's eight, plus the two
#: others that beat all eight in some cell on the shipped spaces (a higher bar for us).
KT_DEFAULT_STRATEGIES = ("random_sample", "genetic_algorithm", "simulated_annealing", "bayes_opt",
                         "diff_evo", "pso", "greedy_ils", "dual_annealing", "firefly_algorithm",
                         "basinhopping")
#: Further single-objective Kernel Tuner strategies that run in simulation mode
#: (``kt:all`` = defaults + these); none beat the defaults on the shipped spaces.
KT_EXTRA_STRATEGIES = ("mls", "greedy_mls", "ordered_greedy_mls")


def kt_available() -> bool:
    """Whether ``kernel_tuner`` can be imported (it is a benchmark-only dependency)."""
    try:
        import kernel_tuner  # noqa: F401
    except ImportError:
        return False
    return True


def kt_version() -> str:
    """The installed Kernel Tuner version (empty when absent)."""
    try:
        from importlib.metadata import version
        return version("kernel_tuner")
    except Exception:  # noqa: BLE001 -- any failure means "unknown"
        return ""


@contextlib.contextmanager
def _seeded_latin_hypercube() -> Iterator[None]:
    """Make unseeded ``LatinHypercube(...)`` draw its generator from the seeded numpy stream."""
    import scipy.stats.qmc as qmc

    original = qmc.LatinHypercube

    class SeededLatinHypercube(original):  # type: ignore[misc, valid-type]
        def __init__(self, *args, **kwargs):
            if kwargs.get("rng") is None and kwargs.get("seed") is None:
                kwargs.pop("seed", None)
                kwargs["rng"] = np.random.default_rng(np.random.randint(0, 2**31 - 1))
            super().__init__(*args, **kwargs)

    patched = [(qmc, "LatinHypercube")]
    try:
        import kernel_tuner.strategies.bayes_opt as kt_bo
        patched.append((kt_bo, "LatinHypercube"))
    except ImportError:  # bayes_opt's optional dependencies are missing
        pass
    saved = [(mod, name, getattr(mod, name)) for mod, name in patched]
    try:
        for mod, name in patched:
            setattr(mod, name, SeededLatinHypercube)
        yield
    finally:
        for mod, name, value in saved:
            setattr(mod, name, value)


def _tune_args(space: RecordedSpace, plain_json: Path) -> dict:
    import json

    from constraint import FunctionConstraint

    with open(plain_json, encoding="utf-8") as fh:
        raw = json.load(fh)
    members = {tuple(k.split(",")) for k in space.times}

    def member(*values) -> bool:
        return tuple(str(v) for v in values) in members

    problem_size = raw.get("problem_size") or [1]
    if isinstance(problem_size, int):
        problem_size = [problem_size]
    return dict(kernel_name=raw.get("kernel_name", ""), kernel_source="",
                problem_size=tuple(problem_size), arguments=[],
                tune_params={k: list(raw["tune_params"][k]) for k in space.keys},
                restrictions=[FunctionConstraint(member)], cache=str(plain_json),
                simulation_mode=True, quiet=True)


_ARGS_CACHE: dict[str, dict] = {}


def _args_for(space: RecordedSpace, plain_json: Path) -> dict:
    key = str(plain_json)
    if key not in _ARGS_CACHE:
        _ARGS_CACHE[key] = _tune_args(space, plain_json)
    return _ARGS_CACHE[key]


def kt_space_size(space: RecordedSpace, plain_json: str | Path) -> int:
    """The size of the space Kernel Tuner builds for ``space`` (must equal ``space.size``)."""
    from kernel_tuner.searchspace import Searchspace

    args = _args_for(space, Path(plain_json))
    return Searchspace(args["tune_params"], args["restrictions"], 1_000_000_000).size


def run_kt(space: RecordedSpace, plain_json: str | Path, strategy: str, budget: int,
           seed: int) -> RunResult:
    """One Kernel Tuner run of ``strategy`` with ``max_fevals=budget`` (see the module doc).

    ``strategy`` is Kernel Tuner's name (``"pso"``); the result's strategy is ``"kt:pso"``.
    """
    import kernel_tuner
    from kernel_tuner.interface import strategy_map

    if strategy not in strategy_map:
        raise ValueError(f"unknown Kernel Tuner strategy {strategy!r}; "
                         f"choose from {', '.join(sorted(strategy_map))}")
    strategy_map[strategy]._load()  # import first: an import must not consume seeded draws
    args = _args_for(space, Path(plain_json))
    random.seed(seed)
    np.random.seed(seed)
    start, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings(), _seeded_latin_hypercube(), \
            contextlib.redirect_stdout(None):
        warnings.simplefilter("ignore")
        results, _env = kernel_tuner.tune_kernel(
            **args, strategy=strategy, strategy_options={"max_fevals": int(budget)})
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    keys = [space.key(r) for r in results]
    distinct = len(dict.fromkeys(keys))
    notes = {"kt_evaluations": len(keys), "kt_distinct": distinct}
    if distinct > budget:
        notes["truncated_from"] = distinct
    return score_run(space, f"kt:{strategy}", budget, seed, keys, wall_s=wall, cpu_s=cpu,
                     notes=notes)
