"""A recorded tuning space as a lookup table, and the score of one search run.

Counting rule (the same for every strategy, ours and Kernel Tuner's)
--------------------------------------------------------------------
The space is the set of configurations recorded in the cache file, failed ones
included (a compile or runtime failure is a real, recorded outcome that costs a
measurement). A *unique evaluation* is the first visit of a configuration of that
set; revisiting a configuration is free, and a configuration outside the set (one
that violates the kernel's restrictions) is never measured and costs nothing. This
is exactly how Kernel Tuner's own simulation runner counts ``max_fevals``: every
cache hit not seen before, failed entries included. A run's *trace* is its ordered
list of unique configurations, truncated to the budget.

Metrics of a run with budget ``N`` (``optimum`` = the best recorded time of the file):
``score = optimum / best`` where ``best`` is the best recorded time among the
trace's successful configurations (``0.0`` when none succeeded, so 1.0 is the
optimum and higher is better); ``within_5pct = best <= 1.05 * optimum``;
``evals_to_5pct`` = the 1-based position in the trace at which the running best
first comes within 5% of the optimum (``None`` if it never does); ``stall`` = the
evaluations made after the last improvement of the running best (all of them when
nothing succeeded): how long the run had stopped improving when it ended.

Examples
--------
>>> space = RecordedSpace(name="toy", path="", keys=("a",),
...                       times={"1": 4.0, "2": None, "3": 2.0, "4": 2.05})
>>> space.optimum, space.size, space.n_ok
(2.0, 4, 3)
>>> r = score_run(space, "x", budget=3, seed=0, trace=["1", "2", "4", "3"])
>>> r.n_evals, r.best_time, round(r.score, 4), r.within_5pct, r.evals_to_5pct, r.stall
(3, 2.05, 0.9756, True, 3, 0)
>>> score_run(space, "x", budget=4, seed=0, trace=["3", "1", "2", "4"]).stall
3
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from search.file_names import file_stem
from search.kt_cache import KtCache, cache_key, load_cache, recorded_time
from search.kt_cache_write import write_cache

from benchmarks.score import speed_score

__all__ = ["RecordedSpace", "RunResult", "load_recorded_space", "score_run", "unique_trace",
           "TOLERANCE"]

#: "within 5% of the optimum" means ``best <= TOLERANCE * optimum``.
TOLERANCE = 1.05


@dataclass(frozen=True)
class RecordedSpace:
    """A recorded space: configuration key -> recorded time (``None`` for a failure).

    ``keys`` are the parameter names in the cache's key order; a configuration's key
    is :func:`search.kt_keys.cache_key` of it.
    """

    name: str
    path: str
    keys: tuple[str, ...]
    times: Mapping[str, float | None]
    device: str = ""

    @property
    def size(self) -> int:
        """The number of recorded configurations (failed ones included)."""
        return len(self.times)

    @property
    def n_ok(self) -> int:
        """The number of recorded configurations that ran."""
        return sum(t is not None for t in self.times.values())

    @property
    def optimum(self) -> float:
        """The best (smallest) recorded time of the whole file."""
        ok = [t for t in self.times.values() if t is not None]
        if not ok:
            raise ValueError(f"space {self.name!r} records no successful configuration")
        return min(ok)

    def key(self, config: Mapping) -> str:
        """The cache key of ``config``."""
        return cache_key(config, self.keys)

    def describe(self) -> dict:
        """A JSON-able summary."""
        return {"name": self.name, "path": self.path, "device": self.device, "size": self.size,
                "n_ok": self.n_ok, "optimum_ms": self.optimum, "params": list(self.keys)}


def space_name(path: str | os.PathLike) -> str:
    """A short name for a cache file: its file name without ``.json``/``.json.gz``.

    Examples
    --------
    >>> space_name("/x/convolution_A100.json.gz")
    'convolution_A100'
    """
    return file_stem(path)


def load_recorded_space(path: str | os.PathLike, cache: KtCache | None = None) -> RecordedSpace:
    """Read a Kernel Tuner cache file (``.json`` or ``.json.gz``) into a :class:`RecordedSpace`.

    The recorded ``time`` of an entry is the objective (Kernel Tuner's default);
    a non-numeric ``time`` (``RuntimeFailedConfig``, ...) is a failure.
    """
    cache = cache if cache is not None else load_cache(path)
    keys = cache.keys
    times = {cache_key(e, keys): recorded_time(e) for e in cache.entries}
    space = RecordedSpace(name=space_name(path), path=str(path), keys=tuple(keys), times=times,
                          device=cache.device)
    space.optimum  # noqa: B018 -- raises early for a file without any successful entry
    return space


def plain_json_copy(cache: KtCache, directory: str | os.PathLike, name: str) -> Path:
    """Write ``cache`` uncompressed as ``directory/name.json`` (Kernel Tuner reads plain JSON)."""
    return write_cache(Path(directory) / f"{name}.json", cache)


def unique_trace(keys: Sequence[str], budget: int) -> list[str]:
    """The first ``budget`` distinct keys of ``keys``, in order.

    Examples
    --------
    >>> unique_trace(["a", "b", "a", "c", "d"], 3)
    ['a', 'b', 'c']
    """
    seen: dict[str, None] = {}
    for k in keys:
        if len(seen) >= budget:
            break
        seen.setdefault(k, None)
    return list(seen)


@dataclass(frozen=True)
class RunResult:
    """One search run on one space with one budget and seed (see the module doc)."""

    space: str
    strategy: str
    budget: int
    seed: int
    n_evals: int
    best_time: float | None
    score: float
    within_5pct: bool
    evals_to_5pct: int | None
    wall_s: float = 0.0
    cpu_s: float = 0.0
    trace: tuple[str, ...] = ()
    stall: int | None = None
    notes: dict = field(default_factory=dict)

    def to_dict(self, with_trace: bool = True) -> dict:
        """A JSON-able dict (the trace as a list of cache keys)."""
        d = {"space": self.space, "strategy": self.strategy, "budget": self.budget,
             "seed": self.seed, "n_evals": self.n_evals, "best_time_ms": self.best_time,
             "score": self.score, "within_5pct": self.within_5pct,
             "evals_to_5pct": self.evals_to_5pct, "wall_s": round(self.wall_s, 4),
             "cpu_s": round(self.cpu_s, 4), "stall": self.stall}
        if self.notes:
            d["notes"] = dict(self.notes)
        if with_trace:
            d["trace"] = list(self.trace)
        return d


def score_run(space: RecordedSpace, strategy: str, budget: int, seed: int,
              trace: Sequence[str], wall_s: float = 0.0, notes: Mapping | None = None,
              cpu_s: float = 0.0) -> RunResult:
    """Score the configurations a run visited (in order; repeats allowed) under ``budget``.

    Raises
    ------
    ValueError
        When the trace holds a key that the space does not record (the strategy
        measured something outside the space: a harness bug, never silently scored).
    """
    if budget < 1:
        raise ValueError(f"budget must be >= 1, got {budget}")
    unique = unique_trace(trace, budget)
    optimum = space.optimum
    best = math.inf
    evals_to = None
    last_gain = 0
    for pos, k in enumerate(unique, start=1):
        if k not in space.times:
            raise ValueError(f"{strategy} visited {k!r}, which {space.name} does not record")
        t = space.times[k]
        if t is not None and t < best:
            best, last_gain = t, pos
        if evals_to is None and best <= TOLERANCE * optimum:
            evals_to = pos
    found = math.isfinite(best)
    return RunResult(space=space.name, strategy=strategy, budget=budget, seed=seed,
                     n_evals=len(unique), best_time=best if found else None,
                     score=speed_score(optimum, best),
                     within_5pct=evals_to is not None, evals_to_5pct=evals_to,
                     wall_s=wall_s, cpu_s=cpu_s, trace=tuple(unique), notes=dict(notes or {}),
                     stall=len(unique) - last_gain)
