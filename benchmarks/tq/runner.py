"""Leave-one-device-out runs on recorded spaces: one target, its history, every method.

A *target* is one recorded space (a Kernel Tuner cache file); its *history* is
every record of the other files with the same parameter names whose device is
not the target's (:func:`target_history` asserts it: the target's own records
never reach the history). Methods:

- ``explorer``: the explorer without history;
- ``explorer+history`` (optionally ``explorer+history:key=value,...`` with
  :class:`search.transfer.GuidedOptions` fields): the explorer guided by the
  history prior (:func:`search.transfer.with_history`);
- ``gga``: the history-guided GA;
- ``zero-shot``: the history's top K, measured (K = the budget), in the order
  :mod:`search.zero_shot_order` chooses for that K.

A run scores ``optimum / best time`` after each budget (1.0 is the optimum).

Examples
--------
>>> parse_method("explorer+history:decay=0.5,share=all,lottery=true,escape=none")
('explorer+history', {'decay': 0.5, 'share': 'all', 'lottery': True, 'escape': None})
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from search.db import TuningDB
from search.db.importer import import_files
from search.db.queries import history_for_space
from search.kt_cache import load_cache, recorded_time
from search.measure.replay import ReplayMeasurer
from search.replay_space import ReplaySpace
from search.strategies import make_strategy
from search.strategies.gga import GuidedGAOptions
from search.transfer import GuidedOptions, HistoryPrior, with_history
from search.tuner import tune
from search.zero_shot import ZeroShotOptions, measure_top
from search.zero_shot_order import choose_orders, zero_shot_rankings

from benchmarks.score import speed_score

__all__ = ["METHODS", "Target", "TargetRun", "parse_method", "load_targets", "target_histories",
           "history_summary", "history_fingerprint",
           "check_target_files",
           "target_history", "run_method"]

METHODS = ("explorer", "explorer+history", "gga", "zero-shot")


def parse_method(spec: str) -> tuple[str, dict]:
    """(method name, options) of ``name`` or ``name:key=value,...`` (numbers, booleans
    and ``none`` parsed)."""
    name, _, rest = spec.partition(":")
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r}; choose one of {', '.join(METHODS)}")
    opts: dict = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"method option {item!r} is not key=value")
        if value.lower() in ("true", "false"):
            opts[key] = value.lower() == "true"
            continue
        if value.lower() == "none":
            opts[key] = None
            continue
        try:
            opts[key] = float(value) if "." in value else int(value)
        except ValueError:
            opts[key] = value
    _check_options(spec, name, opts)
    return name, opts


def _check_options(spec: str, name: str, opts: dict) -> None:
    """Refuse options a method does not take (only ``explorer+history`` takes any: the
    fields of :class:`~search.transfer.GuidedOptions`, with values it accepts); a row
    would otherwise carry a label its numbers do not have.

    >>> parse_method("gga:decay=0.5")
    Traceback (most recent call last):
    ...
    ValueError: method 'gga' takes no options (got 'gga:decay=0.5')
    """
    import dataclasses
    if opts and name != "explorer+history":
        raise ValueError(f"method {name!r} takes no options (got {spec!r})")
    fields = {f.name for f in dataclasses.fields(GuidedOptions)}
    unknown = sorted(set(opts) - fields)
    if unknown:
        raise ValueError(f"{spec!r}: {', '.join(unknown)} is not an option of explorer+history "
                         f"(GuidedOptions: {', '.join(sorted(fields))})")
    GuidedOptions(**opts)  # its own checks of the values (InvalidInputError is a ValueError)


@dataclass
class Target:
    """A target space, its history (other devices only) and the fitted prior."""

    name: str
    device: str
    space: ReplaySpace
    history: list
    optimum: float
    prior: HistoryPrior | None = None
    #: zero-shot's order for each K, by budgets: chosen once per target and history (its
    #: models use one seed), for every seed run on it
    zero_shot_orders: dict = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class TargetRun:
    """One method on one target with one seed: the score after each budget."""

    target: str
    method: str
    seed: int
    scores: dict


def target_history(db: TuningDB, space: ReplaySpace, own: Sequence[str]) -> list:
    """The history for ``space``: the records of its parameter names of every device but
    ``own`` (the name the target's records are stored under, the importer's
    :attr:`search.kt_cache.KtCache.device`, and any that hold its very measurements under
    another name, :func:`same_measurements`)."""
    hist = history_for_space(db, space, exclude_devices=sorted(own))
    leaked = [m for m in hist if m.device in own]
    assert not leaked, f"{len(leaked)} records of the target device {sorted(own)} in its history"
    return hist


def _timed(space: ReplaySpace) -> dict:
    """Configuration (its values by parameter name) -> recorded time, for timed entries."""
    names = sorted(space.cache.keys)
    return {tuple(str(e[p]) for p in names): recorded_time(e) for e in space.cache.entries
            if recorded_time(e) is not None}


def same_measurements(a: dict, b: dict) -> bool:
    """Whether two files' timed configurations (:func:`_timed`) are the same measurements:
    at least half of the configurations both timed have exactly the same time. Two runs
    on one GPU never agree to the last bit; one run written twice (a cache and its T4
    results file) always does.

    >>> same_measurements({("1",): 2.5, ("2",): 3.0}, {("1",): 2.5, ("2",): 3.1})
    True
    >>> same_measurements({("1",): 2.5, ("2",): 3.0}, {("1",): 2.4, ("2",): 3.1})
    False
    """
    common = a.keys() & b.keys()
    return bool(common) and 2 * sum(a[k] == b[k] for k in common) >= len(common)


def check_target_files(paths: Sequence) -> None:
    """Raise ``InvalidInputError`` naming the first file that cannot be a target: not a
    cache or T4 results file, or one with no timed configuration (no optimum to score
    against)."""
    from iobound.errors import InvalidInputError
    for p in paths:
        if load_cache(p).recorded_optimum() is None:
            raise InvalidInputError(f"{p} records no successful configuration: a target needs "
                                    "its optimum to be scored")


def _names_its_device(path, space: ReplaySpace) -> bool:
    """Whether a file names its device itself: a cache's ``device_name``. A T4 results file
    names none (its name comes from the metadata file beside it, nvidia-smi's or rocm-smi's
    spelling, which need not be the cache's: the same GPU under two names)."""
    from search.kt_json import read_tuning_json
    from search.t4_results import is_t4_results
    return bool(space.cache.device_name) and not is_t4_results(read_tuning_json(path))


def _twins(stored: list, spaces: list[ReplaySpace], own_name: list[bool]) -> list[list[str]]:
    """Per file, the devices of the other files that hold its very measurements
    (:func:`same_measurements`) unless both name their device themselves
    (:func:`_names_its_device`), and those of the other files whose device is the same
    preset under another spelling (``NVIDIA A100-PCIE-40GB``, ``A100-PCIE-40GB``)."""
    from iobound.devices import canonical_device_name
    timed = [_timed(s) for s in spaces]
    preset = [canonical_device_name(f.device) for f in stored]
    return [list(dict.fromkeys(
        stored[j].device for j in range(len(spaces)) if j != k
        and stored[j].device != stored[k].device
        and set(spaces[k].params) == set(spaces[j].params)
        and (preset[j] == preset[k] or (not (own_name[k] and own_name[j])
                                        and same_measurements(timed[k], timed[j])))))
        for k in range(len(spaces))]


def _notes(names: Sequence[str], twins_of: list[list[str]]) -> list[str]:
    return [f"note: {name}: {', '.join(twins)} hold(s) the same measurements or name the "
            "same device another way; left out of its history" for name, twins in
            zip(names, twins_of) if twins]


def target_histories(paths: Sequence, names: Sequence[str], notify: bool = True) -> list:
    """``(name, device, space, history)`` of every file as a target: its history is every
    other device's records of its parameter names (an in-memory database).

    A file that does not name its device itself (stored under its file name, or under the
    GPU its T4 metadata file names) but holds the target's own measurements
    (:func:`same_measurements`: a T4 results file beside its cache) is left out of the
    target's history too, and the target out of its, with a notice on stderr (``notify``);
    so is a file whose device is the target's preset spelled another way. Caches that both
    name their device are otherwise taken at their word: synthetic or modelled devices may
    agree to the last bit."""
    db = TuningDB(":memory:")
    stored = import_files(db, list(paths))
    spaces = [ReplaySpace(p) for p in paths]
    twins_of = _twins(stored, spaces, [_names_its_device(p, s) for p, s in zip(paths, spaces)])
    if notify:
        for line in _notes(names, twins_of):
            print(line, file=sys.stderr)
    # the device a file's records were stored under: a cache that names no device is
    # stored under its file name, which must then leave the history too
    out = [(name, imported.device, space, target_history(db, space, {imported.device, *twins}))
           for name, imported, space, twins in zip(names, stored, spaces, twins_of)]
    db.close()
    return out


def history_summary(paths: Sequence, names: Sequence[str]) -> dict:
    """Per target: its device, the devices and number of records of its history (what a
    benchmark's JSON records, so a reader can check no target saw its own records), and
    fingerprints of its file and its history (``--reuse`` takes a run only where both are
    the same)."""
    import hashlib
    return {name: {"device": device, "history_devices": sorted({m.device for m in hist}),
                   "history_records": len(hist),
                   "file_sha256": hashlib.sha256(Path(path).read_bytes()).hexdigest(),
                   "history_sha256": history_fingerprint(hist)}
            for path, (name, device, _, hist) in zip(paths, target_histories(paths, names))}


def history_fingerprint(history: Sequence) -> str:
    """A digest of a history's records (device, workload, config, status, time), in no
    particular order: two histories with one digest hold the same records."""
    import hashlib
    from search.db.model import canon
    rows = sorted(canon([m.device, list(m.workload.key()), m.record.config,
                         m.record.status.value, m.time_ms]) for m in history)
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


def load_targets(paths: Sequence, names: Sequence[str], notify: bool = True) -> list[Target]:
    """Every file as a target with its history (:func:`target_histories`) and the prior
    fitted on it."""
    return [Target(name, device, space, hist, space.cache.recorded_optimum(),
                   HistoryPrior.fit(space, hist, space.cache.problem_size, seed=0))
            for name, device, space, hist in target_histories(paths, names, notify)]


def _strategy(target: Target, name: str, opts: dict, seed: int):
    """A fresh ``gga``, ``explorer`` or ``explorer+history`` strategy for ``target``."""
    space, rng = target.space, np.random.default_rng(seed)
    if name == "gga":
        return make_strategy("gga", space, GuidedGAOptions(
            history=tuple(target.history), target_problem=space.cache.problem_size), rng)
    strat = make_strategy("explorer", space, None, rng)
    if name == "explorer+history":
        strat = with_history(strat, target.prior, GuidedOptions(**opts), seed)
    return strat


def run_method(target: Target, spec: str, seed: int, budgets: Sequence[int]) -> TargetRun:
    """``spec`` on ``target``, a run per budget and its score (zero-shot: K = budget)."""
    name, opts = parse_method(spec)
    space, measurer = target.space, ReplayMeasurer(target.space.cache)
    if name == "zero-shot":
        if not target.history:
            return TargetRun(target.name, spec, seed, {k: None for k in budgets})
        key, orders = tuple(budgets), target.zero_shot_orders
        if key not in orders:  # one choice for every seed (its models use one seed)
            orders[key] = choose_orders(space, target.history, budgets,
                                        space.cache.problem_size)
        rankings = zero_shot_rankings(space, target.history, budgets, ZeroShotOptions(), seed,
                                      space.cache.problem_size, orders[key])
        scores = {}
        for k in budgets:
            r = measure_top(space, measurer, rankings[k], k)
            scores[k] = speed_score(target.optimum, r.best[1].time_ms if r.best else None)
        return TargetRun(target.name, spec, seed, scores)
    scores = {}
    for b in budgets:  # a run per budget: the explorer plans for its budget
        strat = _strategy(target, name, opts, seed)
        bsf = tune(space, measurer, strategy=strat, budget=b).best_so_far()
        scores[b] = speed_score(target.optimum, bsf[-1] if bsf else None)
    return TargetRun(target.name, spec, seed, scores)
