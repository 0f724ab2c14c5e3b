"""How a batch of measurements is spread over workers: :class:`ExecutorOptions`.

One frozen record for the options ``--executor``, ``--workers``, ``--ray-address``,
``--timeout`` and ``--retries`` (see :mod:`search.cli.executor_args`); every bad value
raises :class:`~iobound.errors.InvalidInputError` naming the option and the value.

Examples
--------
>>> ExecutorOptions().executor, ExecutorOptions().retries
('local', 1)
>>> ExecutorOptions(executor="ray", workers=2, ray_address="10.0.0.5:6379").ray_address
'10.0.0.5:6379'
>>> ExecutorOptions(retries=-1)
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: retries must be an integer from 0 to 10, got -1
"""

from __future__ import annotations

import os
import numbers
from dataclasses import dataclass

from iobound.errors import InvalidInputError
from kernels.limits import MAX_TIMEOUT_S

__all__ = ["EXECUTOR_NAMES", "ExecutorOptions", "ray_address_target", "MAX_RETRIES",
           "MAX_PARALLEL_LAYERS", "DEFAULT_TIMEOUT_S", "DEFAULT_RETRIES"]

#: The executors that exist (``search.executors.EXECUTORS`` maps them to classes).
EXECUTOR_NAMES = ("local", "ray")
#: Retries are bounded: a configuration that kills every worker must not stall a run.
MAX_RETRIES = 10
#: Layers tuned at once: each is a driver thread holding its space and strategy.
MAX_PARALLEL_LAYERS = 256
#: Seconds one stage (a build or a run) of one configuration may take before it is killed.
DEFAULT_TIMEOUT_S = 300.0
#: Times a configuration whose worker died is measured again before it is a failure.
DEFAULT_RETRIES = 1


def _is_int(value) -> bool:
    """An integral number but a bool (``numpy.int64`` too, as ``iobound.limits.check_int``)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def ray_address_target(address) -> tuple[str, int] | None:
    """``(host, port)`` of a Ray cluster address as Ray documents it for ``ray.init``:
    ``HOST:PORT`` or ``ray://HOST:PORT`` (``[v6]:PORT`` too), port 1 to 65535; ``None``
    for ``auto`` (Ray finds the cluster: ``$RAY_ADDRESS`` or the latest started here).
    Anything else is an InvalidInputError: a port out of range was passed to Ray, whose
    connection attempts then went on for minutes. ``local`` (a new Ray here, bound to every
    interface) is refused too: without an address the executor starts a private one.

    >>> ray_address_target("ray://10.0.0.5:10001"), ray_address_target("auto")
    (('10.0.0.5', 10001), None)
    >>> ray_address_target("127.0.0.1:99999")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: ray_address '127.0.0.1:99999': the port must be from 1 to 65535
    """
    form = "give HOST:PORT, ray://HOST:PORT or 'auto'"
    if not isinstance(address, str) or not address.strip() or any(c.isspace() for c in address):
        raise InvalidInputError(f"ray_address must be HOST:PORT, ray://HOST:PORT or 'auto', "
                                f"got {address!r}")
    if address == "auto":
        return None
    shown = repr(address[:80])
    if address == "local":
        raise InvalidInputError("ray_address 'local' would start a new Ray here; leave it out "
                                "for a private Ray on this machine, or " + form)
    rest = address[len("ray://"):] if address.startswith("ray://") else address
    host, sep, port = rest.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or "/" in rest or not (port.isascii() and port.isdigit()):
        raise InvalidInputError(f"ray_address {shown}: {form}")
    digits = port.lstrip("0")
    if len(digits) > 5 or not 1 <= int(digits or "0") <= 65535:
        raise InvalidInputError(f"ray_address {shown}: the port must be from 1 to 65535")
    return host, int(port)


@dataclass(frozen=True)
class ExecutorOptions:
    """Options of an executor.

    Parameters
    ----------
    executor : {"local", "ray"}
        ``local``: worker processes on this machine; ``ray``: a Ray cluster.
    workers : int, optional
        CPU workers (builds, and runs of CPU measurers). Default: the cores of this
        machine (``local``) or the CPUs of the Ray cluster (``ray``).
    ray_address : str, optional
        An existing Ray cluster (``HOST:PORT``, ``ray://HOST:PORT`` or ``auto``); without
        it ``ray`` starts a private local Ray bound to 127.0.0.1. Only with ``ray``.
    timeout_s : float
        Seconds a build or a run of one configuration may take; past it the worker is
        killed and the configuration retried (then recorded as ``timeout``).
    retries : int
        How often a configuration whose worker died or timed out is tried again on a
        fresh worker before it is recorded as ``runtime_error`` or ``timeout``.
    parallel_layers : int, optional
        For several layers (a network): how many are tuned at once, all measuring
        through one pool of workers (:mod:`search.session.parallel`). Default
        (:func:`~search.session.parallel.layers_at_once`): two per CPU worker on ``ray``
        (while one layer's strategy picks its next batch, another's batch keeps the
        workers busy), one on ``local``; 1 tunes the layers one after another.

    >>> ExecutorOptions(workers=3, timeout_s=20).worker_count
    3
    >>> ExecutorOptions(ray_address="auto")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: ray_address needs executor 'ray', got executor 'local'
    """

    executor: str = "local"
    workers: int | None = None
    ray_address: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    retries: int = DEFAULT_RETRIES
    parallel_layers: int | None = None

    @property
    def worker_count(self) -> int:
        """The workers to start: ``workers``, or one per CPU core of this machine."""
        return self.workers or os.cpu_count() or 1

    def __post_init__(self) -> None:
        if self.executor not in EXECUTOR_NAMES:
            raise InvalidInputError(f"executor must be one of {', '.join(EXECUTOR_NAMES)}; "
                                    f"got {self.executor!r}")
        if self.workers is not None and (not _is_int(self.workers) or self.workers < 1):
            raise InvalidInputError(f"workers must be an integer >= 1, got {self.workers!r}")
        if self.ray_address is not None:
            if self.executor != "ray":
                raise InvalidInputError("ray_address needs executor 'ray', "
                                        f"got executor {self.executor!r}")
            ray_address_target(self.ray_address)  # its form: HOST:PORT, ray://HOST:PORT, auto
        if isinstance(self.timeout_s, bool) or not isinstance(self.timeout_s, numbers.Real) \
                or not 0 < float(self.timeout_s) <= MAX_TIMEOUT_S:  # NaN, inf fail too
            raise InvalidInputError(f"timeout must be a finite number of seconds > 0 (at most "
                                    f"{MAX_TIMEOUT_S:g}), got {self.timeout_s!r}")
        if self.parallel_layers is not None and (not _is_int(self.parallel_layers)
                                                 or not 1 <= self.parallel_layers <= MAX_PARALLEL_LAYERS):
            raise InvalidInputError(f"parallel_layers must be an integer from 1 to "
                                    f"{MAX_PARALLEL_LAYERS}, got {self.parallel_layers!r}")
        if not _is_int(self.retries) or not 0 <= self.retries <= MAX_RETRIES:
            raise InvalidInputError(f"retries must be an integer from 0 to {MAX_RETRIES}, "
                                    f"got {self.retries!r}")
        for name in ("workers", "parallel_layers", "retries"):  # numpy's as Python's int
            if getattr(self, name) is not None:
                object.__setattr__(self, name, int(getattr(self, name)))
