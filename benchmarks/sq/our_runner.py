"""Our strategies on a recorded space, through the public tuner loop.

A run is ``search.tuner.tune(ReplaySpace(cache), ReplayMeasurer(cache),
strategy=<name>, budget=<N>, seed=<seed>)``; its records, in measurement order,
give the trace (``TuneResult.trials``: unique configurations in the order first
measured, each as a cache key). The tuner counts unique
configurations itself; the trace is de-duplicated and truncated to the budget here
as well (:func:`.recorded.score_run`), the rule applied to Kernel Tuner's runs.
"""

from __future__ import annotations

import time

from search.kt_cache import KtCache

from .recorded import RecordedSpace, RunResult, score_run

__all__ = ["OUR_DEFAULT_STRATEGIES", "run_ours"]

#: Our strategies compared by default.
OUR_DEFAULT_STRATEGIES = ("explorer", "random", "ga", "sa")

_REPLAY: dict[int, tuple] = {}


def _replay(cache: KtCache) -> tuple:
    """The (ReplaySpace, ReplayMeasurer) of ``cache``, built once per process."""
    from search.measure.replay import ReplayMeasurer
    from search.replay_space import ReplaySpace

    key = id(cache)
    if key not in _REPLAY:
        _REPLAY[key] = (cache, ReplaySpace(cache), ReplayMeasurer(cache))
    return _REPLAY[key][1:]


def run_ours(space: RecordedSpace, cache: KtCache, strategy: str, budget: int,
             seed: int) -> RunResult:
    """One run of our ``strategy`` with ``budget`` unique evaluations on ``space``."""
    from search.tuner import tune

    replay_space, measurer = _replay(cache)
    start, cpu = time.perf_counter(), time.process_time()
    result = tune(replay_space, measurer, strategy=strategy, budget=int(budget), seed=int(seed))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    keys = [space.key(t.config) for t in result.trials]
    notes = {"stop_reason": result.stop_reason,
             "strategy_s": round(result.strategy_seconds, 4)}
    return score_run(space, strategy, budget, seed, keys, wall_s=wall, cpu_s=cpu, notes=notes)
