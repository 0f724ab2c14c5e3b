"""Checks of option fields and arguments: whole counts, finite numbers in a range, flags.

The option dataclasses of the search (and the functions that take such numbers) check
their fields with these, so that NaN, an infinity, ``2.5`` for a count, ``True`` for a
count or ``"no"`` for a flag is an :class:`~iobound.errors.InvalidInputError` naming
the field and the value where it is given, never a comparison that NaN passes, a
``TypeError`` or a silent change of behaviour later. Whole numbers go through
:func:`iobound.limits.check_int` (the one integer check of the project), real numbers
through :func:`iobound.limits.check_number` (re-exported here; it lives in iobound so
that the theory and dataflow packages check their numbers with it too), and the classes,
choices and paths of arguments through :mod:`iobound.arg_checks` (re-exported here, for
the kernels package too).

Examples
--------
>>> check_count("doubt", 1), check_number("decay", 0.25, 0, 1, high_open=True)
(1, 0.25)
>>> check_count("doubt", 2.5)
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: doubt must be an integer, got 2.5
>>> check_number("decay", float("nan"), 0, 1, high_open=True)
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: decay must be a finite number in [0, 1), got nan
>>> check_flag("lottery", "no")
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: lottery must be True or False, got 'no'
"""

from __future__ import annotations

from typing import Any, Mapping

from iobound import limits
from iobound.errors import InvalidInputError
from iobound.arg_checks import check_choice, class_names, check_path, check_type, shown
from iobound.limits import check_flag, check_number

__all__ = ["check_count", "check_number", "check_choice", "check_flag", "check_type", "check_records",
           "check_callable", "check_path", "shown"]

#: A count of an option (rounds, candidates, tree depth): a signed 64-bit integer at most.
COUNT_HIGH = (1 << 63) - 1
#: ``low`` of :func:`check_count` for an integer option with no minimum of its own.
INT64_LOW = -(1 << 63)


def check_count(name: str, value: Any, low: int = 0) -> int:
    """``value`` when it is an ``int`` (not a bool) of at least ``low``; else
    InvalidInputError naming ``name``.

    >>> check_count("k", 0, low=1)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: k=0 is below the minimum 1
    """
    return limits.check_int(name, value, limits.Limit(low, COUNT_HIGH, "a 64-bit count"))


def check_records(name: str, value: Any, cls: type) -> tuple:
    """``value``'s items as a tuple when it is an iterable (not a string or a mapping) of
    ``cls`` instances; else InvalidInputError naming ``name`` (and the first bad item).

    >>> check_records("sizes", [1, 2], int)
    (1, 2)
    >>> check_records("sizes", [1, "2"], int)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: sizes[1] must be a builtins.int, got '2'
    """
    kind = class_names(cls)
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise InvalidInputError(f"{name} must be a sequence of {kind} records, "
                                f"got {shown(value)}")
    items = tuple(value)
    for i, item in enumerate(items):
        check_type(f"{name}[{i}]", item, cls)
    return items


def check_callable(name: str, value: Any, params: str) -> Any:
    """``value`` when it is callable, and with the positional arguments ``params``
    (comma-separated names) where Python can read its signature; else InvalidInputError
    naming ``name``: here, not a TypeError at its first call, mid-run.

    >>> check_callable("progress", print, "done, budget, best_cost") is print
    True
    >>> check_callable("progress", lambda done: None, "done, budget, best_cost")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: progress must be callable as progress(done, budget, best_cost): too many positional arguments
    """
    import inspect
    if not callable(value):
        raise InvalidInputError(f"{name} must be callable, got {shown(value)}")
    try:
        sig = inspect.signature(value)
    except (TypeError, ValueError):  # a builtin without a signature: taken on trust
        return value
    try:
        sig.bind(*params.split(", "))
    except TypeError as exc:
        raise InvalidInputError(f"{name} must be callable as {name}({params}): {exc}") from None
    return value


def check_history_inputs(space: Any, history: Any, options: Any, options_type: type,
                         seed: Any) -> tuple:
    """(history as a tuple of Measurements, seed as an int) for a model fitted on
    ``history`` over ``space``, or InvalidInputError naming the argument: a space that is no
    :class:`~search.space.Space`, a history that is no iterable of Measurements, options
    (None for the defaults) not of ``options_type``, a seed past :data:`iobound.limits.SEED`.

    >>> from search.grid_space import GridSpace
    >>> from search.strategies.base import StrategyOptions
    >>> space = GridSpace({"x": [1, 2, 3]})
    >>> check_history_inputs(space, [], None, StrategyOptions, 7)
    ((), 7)
    >>> check_history_inputs(space, [1], None, StrategyOptions, 7)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: history[0] must be a search.db.model.Measurement, got 1
    """
    from .db.model import Measurement
    from .space import Space
    check_type("space", space, Space)
    history = check_records("history", history, Measurement)
    if options is not None:
        check_type("options", options, options_type)
    return history, limits.check_int("seed", seed, limits.SEED)
