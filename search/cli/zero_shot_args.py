"""``iobound tune --zero-shot K [--zero-shot-order ORDER]``: the strategy, budget and order
they stand for, and what they refuse.

``--zero-shot K`` is strategy ``zero_shot`` with budget K. A ``--strategy`` or
``--budget`` it would override is refused, not silently replaced (both default to
``None`` so a given one is seen); zero-shot needs ``--history`` (it ranks the space
with the database's records; the session refuses a database without usable ones);
and a ``--resume`` log already holding more than K measurements cannot be a run of
the top K.

Examples
--------
>>> import argparse
>>> args = argparse.Namespace(zero_shot=5, strategy=None, budget=None, history="h.db")
>>> resolve_zero_shot(args); args.strategy, args.budget
('zero_shot', 5)
"""

from __future__ import annotations

from typing import Iterable

from iobound.errors import InvalidInputError
from iobound.wording import counted

from ..tune_args import DEFAULT_BUDGET, DEFAULT_STRATEGY

__all__ = ["add_zero_shot_arguments", "resolve_zero_shot", "zero_shot_options",
           "check_zero_shot_resume"]

# Without --strategy / --budget (``None`` when not given, so --zero-shot sees a given one):
# the tuner's defaults.


def add_zero_shot_arguments(parser) -> None:
    """``--zero-shot K`` and ``--zero-shot-order ORDER`` of ``iobound tune``.

    >>> import argparse
    >>> p = argparse.ArgumentParser()
    >>> add_zero_shot_arguments(p)
    >>> args = p.parse_args(["--zero-shot", "8", "--zero-shot-order", "model"])
    >>> args.zero_shot, args.zero_shot_order, p.parse_args([]).zero_shot_order
    (8, 'model', None)
    """
    from search.cli.common import ascii_int
    from search.zero_shot import ORDERS
    parser.add_argument("--zero-shot", type=ascii_int, metavar="K",
                        help="zero-shot tuning: rank the space with a model of the --history "
                             "records and measure only the top K (strategy zero_shot, budget K: "
                             "another --strategy or --budget is refused; a --history without "
                             "records of this parameter space too)")
    parser.add_argument("--zero-shot-order", choices=ORDERS,
                        help="which order --zero-shot measures: the history model's ('model'), "
                             "the model's, the consensus's and each device's best in turn "
                             "('sources'), or (default 'auto') the one that ranked the history's "
                             "own devices better, each left out in turn (one model fit each, 8 "
                             "at most)")


def resolve_zero_shot(args) -> None:
    """Set ``args.strategy`` and ``args.budget``: from ``--zero-shot K`` if given, else
    the defaults; ``InvalidInputError`` for a conflicting option or no ``--history``.

    >>> import argparse
    >>> resolve_zero_shot(argparse.Namespace(zero_shot=5, strategy="sa", budget=None,
    ...                                      history="h.db"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --zero-shot K runs ...; do not give --strategy sa
    """
    k = args.zero_shot
    if k is not None:
        if k < 1:
            raise InvalidInputError(f"--zero-shot must be >= 1, got {k}")
        from iobound import limits
        limits.check_int("--zero-shot", k, limits.BUDGET)  # K is the budget: its limit
        if args.strategy not in (None, "zero_shot"):
            raise InvalidInputError(f"--zero-shot K runs strategy zero_shot; "
                                    f"do not give --strategy {args.strategy}")
        if args.budget not in (None, k):
            raise InvalidInputError(f"--zero-shot K measures K configurations; "
                                    f"do not give --budget {args.budget}")
        args.strategy, args.budget = "zero_shot", k
    args.strategy = DEFAULT_STRATEGY if args.strategy is None else args.strategy
    args.budget = DEFAULT_BUDGET if args.budget is None else args.budget
    if args.strategy == "zero_shot" and not args.history:
        flag = "--zero-shot K" if k is not None else "--strategy zero_shot"
        raise InvalidInputError(f"{flag} ranks the space with the records of --history DB; "
                                "give --history")
    order = getattr(args, "zero_shot_order", None)
    if order is not None and args.strategy != "zero_shot":
        raise InvalidInputError(f"--zero-shot-order orders a zero-shot run; give --zero-shot K "
                                f"(the strategy is {args.strategy})")


def zero_shot_options(args, options: dict | None) -> dict | None:
    """``options`` with ``--zero-shot-order`` as the strategy's ``order`` where given.

    >>> import argparse
    >>> zero_shot_options(argparse.Namespace(zero_shot_order="model"), {"batch_size": 4})
    {'batch_size': 4, 'order': 'model'}
    """
    order = getattr(args, "zero_shot_order", None)
    return options if order is None else {**(options or {}), "order": order}


def check_zero_shot_resume(args, resumes: Iterable[str | None]) -> None:
    """Refuse, for a zero-shot run of K, a log in ``resumes`` that already holds more than
    K measurements, or any measurement of another strategy: they are not the top K (the
    run would report more than K, or count them toward K in place of the ranking's own).

    >>> import argparse
    >>> check_zero_shot_resume(argparse.Namespace(strategy="explorer"), ["any.jsonl"])
    """
    from search.records import read_log
    if args.strategy != "zero_shot":
        return
    flag = "--zero-shot" if args.zero_shot is not None else "--budget"
    for path in filter(None, resumes):
        got = read_log(path)
        n, strategy = len(got.entries), got.header.get("strategy")
        if n > args.budget:
            raise InvalidInputError(f"--resume {path} already holds {counted(n, 'measurement')}, "
                                    f"more than {flag} {args.budget}")
        if n and strategy != "zero_shot":
            raise InvalidInputError(f"--resume {path} holds {counted(n, 'measurement')} of "
                                    f"strategy {strategy!r}, not of a zero-shot run; {flag} "
                                    f"resumes only a zero-shot log")
