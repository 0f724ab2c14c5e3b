"""The options that choose where measurements run, shared by the subcommands that measure.

:func:`add_executor_arguments` adds ``--executor local|ray``, ``--workers N``,
``--ray-address ADDR``, ``--timeout S``, ``--retries N`` and ``--parallel-layers N``; :func:`resolve_executor_options`
turns them into a validated :class:`~search.executors.options.ExecutorOptions`
(``InvalidInputError``, one line and exit 2 from ``main``, for a bad value).

Examples
--------
>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> add_executor_arguments(parser)
>>> resolve_executor_options(parser.parse_args([]))
ExecutorOptions(executor='local', workers=None, ray_address=None, timeout_s=300.0, retries=1, parallel_layers=None)
>>> args = parser.parse_args(["--executor", "ray", "--ray-address", "10.0.0.5:6379",
...                           "--workers", "8", "--timeout", "60", "--retries", "2"])
>>> o = resolve_executor_options(args); (o.executor, o.workers, o.ray_address, o.timeout_s, o.retries)
('ray', 8, '10.0.0.5:6379', 60.0, 2)
>>> resolve_executor_options(parser.parse_args(["--workers", "0"]))
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: --workers must be an integer >= 1, got 0
"""

from __future__ import annotations

import argparse

from iobound.errors import InvalidInputError
from search.cli.common import ascii_int, nonempty
from search.executors.local import WORKERS_PER_CORE
from search.executors.options import (DEFAULT_RETRIES, DEFAULT_TIMEOUT_S, EXECUTOR_NAMES,
                                      MAX_RETRIES, ExecutorOptions)

__all__ = ["add_executor_arguments", "resolve_executor_options"]

#: What a private local Ray refused for too many workers suggests instead.
PRIVATE_RAY_MORE = "give --ray-address of a Ray cluster for more"

#: ExecutorOptions field -> the option that sets it (so errors name what the user typed).
_FLAGS = {"executor": "--executor", "workers": "--workers", "ray_address": "--ray-address",
          "timeout": "--timeout", "retries": "--retries", "parallel_layers": "--parallel-layers"}


def add_executor_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the executor options (read with :func:`resolve_executor_options`).

    >>> p = argparse.ArgumentParser(exit_on_error=False)
    >>> add_executor_arguments(p)
    >>> p.parse_args(["--workers", "1_0"])
    Traceback (most recent call last):
    ...
    argparse.ArgumentError: argument --workers: invalid int value: '1_0'
    """
    group = parser.add_argument_group("where measurements run")
    group.add_argument("--executor", metavar="NAME", type=nonempty("executor name"),
                       help=f"{' | '.join(EXECUTOR_NAMES)}: worker processes on this machine, or "
                            "a Ray cluster (pip install 'iobound[distributed]'); default: local "
                            "for the compile-heavy measurers (emulate, cuda), in process for "
                            "model and replay (a pool would only add overhead)")
    group.add_argument("--workers", type=ascii_int, metavar="N",
                       help="with --executor: CPU workers that compile (and run the "
                            "emulate/model measurers); default: the cores here (at most "
                            f"{WORKERS_PER_CORE} per core), or the Ray cluster's CPUs")
    group.add_argument("--ray-address", metavar="ADDR",
                       help="an existing Ray cluster: HOST:PORT of `ray start --head`, "
                            "ray://HOST:PORT (Ray Client) or 'auto' ($RAY_ADDRESS or the "
                            "cluster started last here); default: a private Ray on this "
                            "machine, bound to 127.0.0.1")
    group.add_argument("--timeout", type=float, default=None, metavar="S",
                       help="seconds a build or a run of one configuration may take before "
                            f"its worker is killed (default {DEFAULT_TIMEOUT_S:g})")
    group.add_argument("--retries", type=ascii_int, default=None, metavar="N",
                       help="retries of a configuration whose worker died or timed out, on a "
                            f"fresh worker, before it is recorded as failed (0-{MAX_RETRIES}, "
                            f"default {DEFAULT_RETRIES})")
    group.add_argument("--parallel-layers", type=ascii_int, metavar="N",
                       help="with --network: layers tuned at once, all measuring through one "
                            "pool of workers (default: 2 per worker on ray, 1 on local: one "
                            "after another)")


def resolve_executor_options(args: argparse.Namespace, default: str | None = "local") -> ExecutorOptions | None:
    """The validated options (``None`` without ``--executor`` and no ``default``); the error
    names the command-line option. Without an executor the values are checked all the
    same (a bad one is bad input whether or not it is used), and ``--workers``,
    ``--timeout``, ``--retries`` and ``--ray-address``, which name workers and a cluster
    nothing would use, are refused.

    >>> parser = argparse.ArgumentParser(); add_executor_arguments(parser)
    >>> resolve_executor_options(parser.parse_args(["--workers", "-5"]), default=None)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --workers must be an integer >= 1, got -5
    """
    executor = args.executor or default
    if executor is None:
        if getattr(args, "parallel_layers", None) is not None:
            raise InvalidInputError("--parallel-layers needs --executor local|ray (this measurer "
                                    "runs in process, one layer after another)")
        if args.ray_address is not None:
            raise InvalidInputError("--ray-address needs --executor ray (this measurer runs in "
                                    "process)")
        _options(args, "local")  # checked, not used
        for flag, value in (("--workers", args.workers), ("--timeout", args.timeout),
                            ("--retries", args.retries)):
            if value is not None:  # they name workers: none runs (README, "Options that
                # would be ignored")
                raise InvalidInputError(f"{flag} needs --executor local|ray (this measurer "
                                        "runs in process)")
        return None
    return _options(args, executor)


def _options(args: argparse.Namespace, executor: str) -> ExecutorOptions:
    from search.executors.local import check_local_workers
    if executor == "local":  # before the run prints anything
        check_local_workers(args.workers)
    elif executor == "ray" and args.ray_address is None:  # a private Ray: processes here too
        check_local_workers(args.workers, more=PRIVATE_RAY_MORE)
    try:
        return ExecutorOptions(executor=executor, workers=args.workers,
                               ray_address=args.ray_address,
                               timeout_s=DEFAULT_TIMEOUT_S if args.timeout is None else args.timeout,
                               retries=DEFAULT_RETRIES if args.retries is None else args.retries,
                               parallel_layers=getattr(args, "parallel_layers", None))
    except InvalidInputError as exc:
        text = str(exc)
        for field, flag in _FLAGS.items():
            if text.startswith(field + " "):
                text = flag + text[len(field):]
                break
        raise InvalidInputError(text) from None
