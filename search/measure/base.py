"""The measurer interface and the measurement record every measurer returns.

A :class:`Measurer` turns configurations (dicts) into :class:`MeasureRecord`
values, one per config, in order. A failure is a record with a
:class:`~kernels.status.Status`, never an exception (``INVALID``: the config is not a
member of the space or cannot run). ``time_ms`` is the median of ``costs`` for a timed ``ok`` record and ``None``
otherwise (and for measurers that do not time anything, e.g. ``emulate``, which give
a ``surrogate_cost`` instead). ``estimate`` is true when the time comes from a model
rather than a measurement. A record is built with any finite time, but only a positive
one is a measurement: the tuner takes a record whose time, costs or surrogate cost are
not positive finite numbers as ``invalid``, by the rule a log is read back with
(:func:`search.records.read_log`), so that a run and its resume agree.

Records serialise to plain JSON (:meth:`MeasureRecord.to_dict` /
:meth:`MeasureRecord.from_dict`), the status as its string value; no pickle.

Examples
--------
>>> r = MeasureRecord.ok({"x": 4}, costs=(1.0, 3.0, 2.0))
>>> r.status, r.time_ms
(<Status.OK: 'ok'>, 2.0)
>>> r.to_dict()["status"], MeasureRecord.from_dict(r.to_dict()) == r
('ok', True)
>>> MeasureRecord.failed({"x": 5}, Status.INVALID, "x must divide 8").time_ms is None
True
"""

from __future__ import annotations

import abc
import math
import numbers
import time
from dataclasses import dataclass, field
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from iobound.errors import InvalidInputError, IoboundError
from kernels.status import Status
from search.option_checks import check_flag, check_number, check_type, shown

__all__ = ["Status", "MeasureRecord", "Measurer", "MeasurerError", "check_configs",
           "invalid_config"]


def _real(name: str, value: Any) -> float:
    """``value`` as a float when it is a real number (not a bool, not a string: ``"1"`` or
    ``True`` is no time); else InvalidInputError naming ``name``.

    >>> _real("a cost", 2), _real("a cost", float("inf"))
    (2.0, inf)
    >>> _real("a cost", "1")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: a cost must be a real number, got '1'
    >>> _real("a cost", 10 ** 400)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: a cost must be a real number within float range, got 1000...
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidInputError(f"{name} must be a real number, got {shown(value)}")
    try:
        return float(value)
    except OverflowError:  # an integer past float range (10**400)
        raise InvalidInputError(f"{name} must be a real number within float range, "
                                f"got {shown(value)}") from None


def _costs(value: Any) -> tuple[float, ...]:
    """``value``, a sequence of real numbers (:func:`_real`), as a tuple of floats."""
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise InvalidInputError(f"costs must be a sequence of numbers, got {shown(value)}")
    return tuple(_real("a cost", c) for c in value)


def _status(value: Any) -> Status:
    """``value`` as a :class:`Status` (its string value parsed); else InvalidInputError.

    >>> _status("ok"), _status("fine")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: status must be one of ok, ...; got 'fine'
    """
    try:
        return Status.parse(value)
    except (ValueError, TypeError):
        raise InvalidInputError(f"status must be one of {', '.join(s.value for s in Status)}; "
                                f"got {shown(value)}") from None


def _median(values: list[float]) -> float:
    """The median, the middle two's mean taken as halves (``statistics.median`` adds them
    first: 1e308 and 1.7e308 gave inf).

    >>> _median([1e308, 1.7e308]), _median([3.0, 1.0, 2.0])
    (1.35e+308, 2.0)
    """
    xs = sorted(values)
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else xs[mid - 1] / 2 + xs[mid] / 2


class MeasurerError(IoboundError):
    """A measurer broke its contract (e.g. fewer records than configurations).

    >>> from search.grid_space import GridSpace
    >>> from search.tuner import tune
    >>> class Silent(Measurer):  # measures nothing
    ...     name = "silent"
    ...     def measure(self, configs): return []
    >>> tune(GridSpace({"a": [1, 2]}), Silent(), strategy="grid", budget=2, seed=0)
    Traceback (most recent call last):
    ...
    search.measure.base.MeasurerError: measurer 'silent' returned 0 records for 2 configurations
    """


@dataclass(frozen=True)
class MeasureRecord:
    """One measurement of one configuration.

    Parameters
    ----------
    config : dict
        The configuration measured (parameter name -> value).
    status : Status
        How it went (a string value is parsed: ``"ok"`` -> ``Status.OK``).
    costs : tuple of float
        Repeated timings in milliseconds (empty when nothing was timed).
    time_ms : float or None
        The median of ``costs`` (or a model's estimate); ``None`` unless ``ok``. Finite
        (checked here); a time of 0 or less is accepted here but is not a measurement
        (module doc).
    error : str
        A message for failures (empty for ``ok``).
    estimate : bool
        True when ``time_ms`` is a model estimate, not a measurement.
    timestamp : float
        Unix time at which the record was made.
    extra : dict
        Measurer-specific JSON-able data (traffic counts, registers, compile time...).
    surrogate_cost : float or None
        The objective of an ``ok`` record that has no time (``emulate``: the emulated
        global traffic in words); see :attr:`cost`.

    Examples
    --------
    >>> r = MeasureRecord.ok({"x": 4}, costs=[2.0, 1.0, 3.0])
    >>> r.is_ok, r.time_ms, r.cost
    (True, 2.0, 2.0)
    >>> bad = MeasureRecord.failed({"x": 5}, Status.COMPILE_ERROR, "nvcc failed")
    >>> bad.is_ok, bad.time_ms, bad.cost, MeasureRecord.ok({"x": 4}, surrogate_cost=512.0).cost
    (False, None, inf, 512.0)
    """

    config: dict
    status: Status
    costs: tuple[float, ...] = ()
    time_ms: float | None = None
    error: str = ""
    estimate: bool = False
    timestamp: float = field(default_factory=time.time)
    extra: dict = field(default_factory=dict)
    surrogate_cost: float | None = None

    def __post_init__(self) -> None:
        # each field checked here, where the record is made: a bad one is one line naming
        # it, never an AttributeError when the record is logged or stored
        check_type("a record's config", self.config, Mapping)
        object.__setattr__(self, "status", _status(self.status))
        object.__setattr__(self, "costs", _costs(self.costs))
        if self.surrogate_cost is not None:
            object.__setattr__(self, "surrogate_cost", _real("surrogate_cost", self.surrogate_cost))
        if self.time_ms is not None:  # finite: a NaN or infinite time is no time
            object.__setattr__(self, "time_ms", float(check_number("time_ms", self.time_ms)))
        if not self.status.is_ok and self.time_ms is not None:
            raise InvalidInputError(f"time_ms must be None for status {self.status.value!r}")
        check_type("error", self.error, str)
        check_flag("estimate", self.estimate)
        check_number("timestamp", self.timestamp)  # stored NOT NULL: a NaN would be NULL
        check_type("extra", self.extra, Mapping)

    @property
    def is_ok(self) -> bool:
        """Whether the configuration ran correctly."""
        return self.status.is_ok

    @property
    def cost(self) -> float:
        """The objective to minimise.

        ``time_ms`` for a timed ``ok`` record; for an ``ok`` record of a measurer
        that does not time (``emulate``), its documented :attr:`surrogate_cost`
        (the emulated global traffic in words); ``inf`` for failures.
        """
        if not self.status.is_ok:
            return math.inf
        if self.time_ms is not None:
            return self.time_ms
        return self.surrogate_cost if self.surrogate_cost is not None else math.inf

    @classmethod
    def ok(cls, config: Mapping[str, Any], costs: Sequence[float] = (), *,
           time_ms: float | None = None, estimate: bool = False,
           extra: Mapping[str, Any] | None = None,
           surrogate_cost: float | None = None) -> "MeasureRecord":
        """An ``ok`` record; ``time_ms`` defaults to the median of ``costs`` (of those that
        are numbers: a NaN has no place in an order; the record is still no measurement,
        :func:`search.records.as_measured`, as :func:`search.records.read_log` reads it).

        >>> MeasureRecord.ok({}, costs=[float("nan"), 1.0, 2.0]).time_ms
        1.5
        """
        check_type("a record's config", config, Mapping)
        costs = _costs(costs)
        numbers_ = [c for c in costs if not math.isnan(c)]
        if time_ms is None and numbers_:
            time_ms = _median(numbers_)
            if not math.isfinite(time_ms):  # named here: time_ms was not given
                raise InvalidInputError(f"costs {shown(list(costs))}: their median {time_ms} "
                                        "is no finite time")
        return cls(config=dict(config), status=Status.OK, costs=tuple(costs), time_ms=time_ms,
                   estimate=estimate, extra=_extra(extra), surrogate_cost=surrogate_cost)

    @classmethod
    def failed(cls, config: Mapping[str, Any], status: Status, error: str = "", *,
               extra: Mapping[str, Any] | None = None) -> "MeasureRecord":
        """A failed record (any status but ``OK``)."""
        check_type("a record's config", config, Mapping)
        if _status(status).is_ok:
            raise InvalidInputError("failed() needs a failure status, not 'ok'")
        return cls(config=dict(config), status=status, error=error, extra=_extra(extra))

    def to_dict(self) -> dict:
        """A JSON-able dict (see :meth:`from_dict`)."""
        return {
            "config": dict(self.config), "status": self.status.value, "costs": list(self.costs),
            "time_ms": self.time_ms, "error": self.error, "estimate": self.estimate,
            "timestamp": self.timestamp, "extra": dict(self.extra),
            "surrogate_cost": self.surrogate_cost,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "MeasureRecord":
        """The record written by :meth:`to_dict`.

        Logs written before ``surrogate_cost`` was a field kept it in ``extra``; it is
        read from there too (and stays in ``extra``, as it was written). Every field is
        checked as the constructor checks it (``"estimate": "false"`` is no flag, ``"5"``
        no timestamp); ``config`` and ``status`` must be there.

        >>> MeasureRecord.from_dict({"status": "ok"})
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: a record's dict lacks 'config'
        """
        check_type("a record's dict", d, Mapping)
        for key in ("config", "status"):
            if key not in d:
                raise InvalidInputError(f"a record's dict lacks {key!r}")
        check_type("a record's config", d["config"], Mapping)
        extra = d.get("extra", {})
        check_type("extra", extra, Mapping)
        surrogate = d.get("surrogate_cost", extra.get("surrogate_cost"))
        stamp = d.get("timestamp", 0.0)
        stamp = check_number("timestamp", stamp)  # "5" and true are no timestamps
        return cls(config=dict(d["config"]), status=_status(d["status"]),
                   costs=_costs(d.get("costs", ())), time_ms=d.get("time_ms"),
                   error=d.get("error", ""), estimate=check_flag("estimate", d.get("estimate",
                                                                                   False)),
                   timestamp=float(stamp), extra=dict(extra), surrogate_cost=surrogate)


def _extra(extra: Any) -> dict:
    """A record's ``extra`` as a new dict (None: empty); InvalidInputError when it is no
    mapping (``dict("abc")`` was a ValueError)."""
    return {} if extra is None else dict(check_type("extra", extra, Mapping))


def check_configs(configs: Any) -> list:
    """``configs`` as a list when it is a list (or another iterable, not a string or a
    mapping) of configurations; else InvalidInputError. Its items are not checked here:
    a bad one is an ``invalid`` record (:func:`invalid_config`).

    >>> check_configs({"x": 4})
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: configs must be a list of configurations (dicts), got {'x': 4}
    """
    if isinstance(configs, (str, bytes, Mapping)) or not hasattr(configs, "__iter__"):
        raise InvalidInputError("configs must be a list of configurations (dicts), "
                                f"got {shown(configs)}")
    return list(configs)


def invalid_config(config: Any) -> MeasureRecord | None:
    """The ``invalid`` record of a configuration that is not a mapping (its ``config``
    is then ``{}``, the error names the value); ``None`` for a mapping.

    >>> invalid_config(None).error
    'a configuration must be a mapping of parameter names to values, got None'
    """
    if isinstance(config, Mapping):
        return None
    return MeasureRecord.failed({}, Status.INVALID, "a configuration must be a mapping of "
                                f"parameter names to values, got {shown(config)}")


class Measurer(abc.ABC):
    """Measures configurations; one record per config, in order, never raising for a bad config.

    A bad config (not a member, cannot run, not even a mapping: :func:`invalid_config`)
    is an ``invalid`` record; ``configs`` that is not a list of configurations is an
    InvalidInputError (:func:`check_configs`).

    Subclasses set ``name`` (the registry name) and implement :meth:`measure`.
    ``estimate`` says whether its times are model estimates, ``cost_unit`` what its
    records' cost is in (``"ms"``; ``"words"`` for a measurer that only counts traffic
    and ranks by :attr:`MeasureRecord.surrogate_cost`). ``describe()`` is a
    JSON-able summary used in logs and the history database (``toolchain`` names
    what produced the numbers, e.g. the GPU and compiler, or the model version).

    Examples
    --------
    >>> class Constant(Measurer):  # every configuration takes 1 ms
    ...     name = "constant"
    ...     def measure(self, configs):
    ...         return [MeasureRecord.ok(c, time_ms=1.0) for c in check_configs(configs)]
    >>> with Constant() as m:
    ...     [r.time_ms for r in m.measure([{"a": 1}, {"a": 2}])], m.describe()["toolchain"]
    ([1.0, 1.0], 'constant')
    """

    name: str = ""
    estimate: bool = False
    cost_unit: str = "ms"

    @abc.abstractmethod
    def measure(self, configs: Sequence[Mapping[str, Any]]) -> list[MeasureRecord]:
        """Measure each config; returns one record per config, in order."""

    def measure_iter(self, configs: Sequence[Mapping[str, Any]]) -> Iterator[MeasureRecord]:
        """Records one by one as each finishes (the tuner logs each at once).

        The default measures the whole batch, then yields; measurers that take
        long per config (``cuda``, ``emulate``) override it to yield as they go.
        """
        records = self.measure(configs)
        if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
            raise MeasurerError(f"the measure of measurer {self.name!r} returned "
                                f"{type(records).__name__} {records!r:.60}, not a list of records")
        yield from records

    def measure_unordered(self, configs: Sequence[Mapping[str, Any]]) -> Iterator[tuple[int, MeasureRecord]]:
        """(position in ``configs``, record) as each measurement completes.

        The default yields :meth:`measure_iter` in order; a measurer that runs
        configurations in parallel (:class:`search.executors.ExecutorMeasurer`)
        yields them as they finish, so the tuner logs each at once.
        """
        yield from enumerate(self.measure_iter(configs))

    def describe(self) -> dict:
        """A JSON-able summary (name, estimate flag, toolchain)."""
        return {"name": self.name, "estimate": self.estimate, "toolchain": self.toolchain()}

    def toolchain(self) -> str:
        """What produced the numbers (compiler, GPU, model version); a free-form string."""
        return self.name

    def close(self) -> None:
        """Release resources (GPU contexts, temporary files). Idempotent."""

    def __enter__(self) -> "Measurer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
