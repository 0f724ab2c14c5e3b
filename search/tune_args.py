"""The arguments of :func:`search.tuner.tune`, checked at its boundary.

Every bad argument is an ``InvalidInputError`` naming it, raised before anything is
measured or written: a budget, patience or seed that is no storable int, a log or resume
path that cannot be one, hooks that are not callables, a header that would overwrite the
run's own keys (:data:`RUN_KEYS`), reusable records that are not records of the space.

Examples
--------
>>> check_header({"note": "first run"})
{'note': 'first run'}
>>> check_header({"budget": 3})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: header key 'budget' is the run's own (...); name the field otherwise
"""

from __future__ import annotations

import numbers
from collections import abc
from typing import Any

from iobound import limits
from iobound.errors import InvalidInputError

from .measure.base import MeasureRecord, Measurer
from .option_checks import check_callable, check_path, check_type, shown
from .log_writer import header_line
from .records import LOG_HEAD, as_measured
from .space import Space
from .strategies.base import is_record_of

__all__ = ["DEFAULT_STRATEGY", "DEFAULT_BUDGET", "RUN_KEYS", "check_tune_arguments",
           "check_run_numbers", "check_header", "check_reusable"]

#: The strategy and budget of a run given none: :func:`~search.tuner.tune`'s,
#: :class:`~search.session.TuneSettings`' and ``iobound tune``'s.
DEFAULT_STRATEGY, DEFAULT_BUDGET = "explorer", 48


def check_tune_arguments(space, measurer, budget, patience, seed, log, resume, progress, header,
                         reusable, build_strategy) -> tuple:
    """(budget, patience, seed, header, reusable) of a :func:`~search.tuner.tune` call,
    checked and normalised (ints, a dict header, an index -> record dict or None).

    >>> from search.kt_cache import KtCache
    >>> from search.measure.replay import ReplayMeasurer
    >>> from search.replay_space import ReplaySpace
    >>> cache = KtCache({"x": [1, 2]}, [{"x": 1, "time": 2.0}, {"x": 2, "time": 1.0}])
    >>> space, m = ReplaySpace(cache), ReplayMeasurer(cache)
    >>> check_tune_arguments(space, m, 5, None, 0, None, None, None, None, None,
    ...                      lambda name, space, options, rng: None)
    (5, None, 0, {}, None)
    >>> check_tune_arguments(space, m, 5, None, 0, None, None, 5, None, None, None)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: progress must be callable, got 5
    """
    check_type("space", space, Space)
    check_type("measurer", measurer, Measurer)
    budget, patience, seed = check_run_numbers(budget, patience, seed)
    for name, value in (("log", log), ("resume", resume)):
        if value is not None:
            check_path(name, value)
    if progress is not None:
        check_callable("progress", progress, "done, budget, best_cost")
    header = check_header(header)
    reusable = check_reusable(reusable, space)
    check_callable("build_strategy", build_strategy, "name, space, options, rng")
    return budget, patience, seed, header, reusable


def check_run_numbers(budget: int, patience: int | None, seed: int | None) -> tuple:
    """(budget, patience, seed) as ints (patience and seed may be None), or an
    InvalidInputError naming the value: no int, below 1, or past
    :data:`iobound.limits.BUDGET`, :data:`~iobound.limits.PATIENCE` or
    :data:`~iobound.limits.SEED` (a run past them overflows, ends only when the space does,
    or numpy refuses the seed).

    >>> check_run_numbers(48, None, 0)
    (48, None, 0)
    >>> check_run_numbers(10**7, None, 0)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: budget=10000000 is above the limit 1048576 (budget: each measurement is a log line and a model update)
    """
    if budget is None:
        raise InvalidInputError("budget must be an integer, got None")
    for name, value in (("budget", budget), ("patience", patience)):
        if value is not None and (isinstance(value, bool)
                                  or not isinstance(value, numbers.Integral)):
            raise InvalidInputError(f"{name} must be an integer, got {value!r}")
        if value is not None and value < 1:
            raise InvalidInputError(f"{name} must be >= 1, got {value}")
    for name, value, limit in (("budget", budget, limits.BUDGET),
                               ("patience", patience, limits.PATIENCE),
                               ("seed", seed, limits.SEED)):
        if value is not None:
            limits.check_int(name, value, limit)
    return tuple(None if v is None else int(v) for v in (budget, patience, seed))


#: Header keys of the run itself, which ``header`` cannot replace (nor the log format's,
#: ``records.LOG_HEAD``): a log claiming another space or measurer would mislead a resume.
RUN_KEYS = ("strategy", "seed", "budget", "space", "measurer")


def check_header(header: Any) -> dict:
    """``header`` as a dict of text keys and JSON values that leaves the run's own keys
    alone (InvalidInputError naming the key).

    >>> check_header(None)
    {}
    >>> check_header({1: "one"})
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: header keys must be strings, got 1
    """
    if header is None:
        return {}
    check_type("header", header, abc.Mapping)
    for key in header:
        if not isinstance(key, str):
            raise InvalidInputError(f"header keys must be strings, got {shown(key)}")
        if key in RUN_KEYS or key in LOG_HEAD:
            own = ", ".join((*LOG_HEAD, *RUN_KEYS))
            raise InvalidInputError(f"header key {key!r} is the run's own ({own} are written by "
                                    f"tune()); name the field otherwise")
    header_line(header)  # what JSON cannot hold (NaN, an object), refused naming its key
    return dict(header)


def check_reusable(reusable: Any, space: Space) -> dict[int, MeasureRecord] | None:
    """``reusable`` as index -> record, each index in ``space`` and each value a
    :class:`MeasureRecord` of that index's configuration (InvalidInputError naming the
    first that is not); a time that cannot be a measurement makes it invalid, as a
    measured or resumed record's does (:func:`~search.records.as_measured`).

    >>> from search.grid_space import GridSpace
    >>> space = GridSpace({"x": [1, 2]})
    >>> check_reusable({1: MeasureRecord.ok({"x": 2}, time_ms=1.0)}, space)[1].time_ms
    1.0
    >>> check_reusable({0: MeasureRecord.ok({"x": 2}, time_ms=1.0)}, space)
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: reusable[0] is a record of {'x': 2}, not of configuration ...
    """
    if reusable is None:
        return None
    check_type("reusable", reusable, abc.Mapping)
    out: dict[int, MeasureRecord] = {}
    size = len(space)
    for i, rec in reusable.items():
        if isinstance(i, bool) or not isinstance(i, numbers.Integral) or not 0 <= i < size:
            raise InvalidInputError(f"reusable keys must be indices of the space (0 to "
                                    f"{size - 1}), got {shown(i)}")
        rec = check_type(f"reusable[{int(i)}]", rec, MeasureRecord)
        if not is_record_of(space, int(i), rec):
            raise InvalidInputError(f"reusable[{int(i)}] is a record of {shown(rec.config)}, "
                                    f"not of configuration {int(i)} {shown(space.get(int(i)))}")
        out[int(i)] = as_measured(rec)
    return out
