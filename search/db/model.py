"""What the tuning database stores: workloads and measurements, as frozen records.

A :class:`Workload` is what was tuned: a kernel ``template`` (ours, such as
``iobound.conv``, or a recorded kernel's name), the ``problem`` (the layer, or the
recorded problem size; any JSON value) and the parameter names. A
:class:`Measurement` is one measured configuration of a workload on a device with a
toolchain: the :class:`~search.measure.base.MeasureRecord` plus where it came from
and the cost-model features where known. Its :meth:`~Measurement.digest` names the
measurement itself, so storing it twice stores it once.

Examples
--------
>>> from search.measure.base import MeasureRecord
>>> w = Workload("convolution_kernel", [4096, 4096], ("bx", "by"))
>>> m = Measurement(w, "A100", "kernel_tuner", MeasureRecord.ok({"bx": 16, "by": 2}, time_ms=1.5))
>>> m.time_ms, m.counts, len(m.digest())
(1.5, True, 64)
>>> recorded_workload("convolution_kernel", [4096, 4096], ("bx", "by")) == w
True
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from iobound.devices import check_device_name
from iobound.errors import InvalidInputError

from ..kt_cache import is_param_value
from ..measure.base import MeasureRecord
from ..option_checks import check_type, shown
from ..times import as_time
from .features import checked_features, record_features
from .keys import canon, canon_key, same_number_form
from .conv_template import (CONV_TEMPLATE, conv_algorithm, current_layer_problem,
                            exported_kernel_name, stored_layer)

__all__ = ["Workload", "Measurement", "canon", "canon_key", "same_number_form", "digest_of",
           "check_device_name", "check_toolchain", "config_fault", "checked_features",
           "finite", "problem_fault", "record_features", "recorded_workload", "stored_json",
           "workload_from_row", "COUNTED_SQL"]

#: :attr:`Measurement.counts` as an SQL condition on ``measurements m``: a stored time is
#: positive and finite or NULL (the rows are checked on the way in), so NOT NULL suffices.
COUNTED_SQL = "m.status='ok' AND m.time_ms IS NOT NULL"

def config_fault(config: Mapping[str, Any], params) -> str:
    """Why ``config`` is not a configuration of the parameters ``params`` ("" when it is):
    it must hold exactly them, each a finite number, a string or a flat list (what a
    Kernel Tuner cache entry holds).

    >>> config_fault({"x": 1}, ("x",)), config_fault({"x": 1, "z": 2}, ("x", "y"))
    ('', 'it lacks y and has z')
    >>> config_fault({"x": {"a": 1}}, ("x",))
    "parameter 'x' is not a finite number, string or flat list"
    """
    if type(config) is not dict:  # a stored config is a dict: no ABC check per row
        check_type("config", config, Mapping)
    if type(params) is not tuple or not all(type(n) is str for n in params):
        params = _names("params", params)  # a workload's: a tuple of names already
    bad_keys = [k for k in config if type(k) is not str]
    if bad_keys:
        return f"its key {shown(bad_keys[0])} is no parameter name (a string)"
    missing, other = sorted(set(params) - set(config)), sorted(set(config) - set(params))
    if missing or other:
        what = [f"lacks {', '.join(missing)}"] if missing else []
        what += [f"has {', '.join(other)[:80]}"] if other else []
        return "it " + " and ".join(what)
    bad = [k for k, v in config.items() if not is_param_value(v)]
    return f"parameter {bad[0]!r} is not a finite number, string or flat list" if bad else ""


def _names(arg: str, params: Any) -> tuple[str, ...]:
    """``params``, a collection of parameter names, as a tuple; else InvalidInputError
    naming ``arg`` (a string would be taken letter by letter)."""
    if isinstance(params, (str, bytes, Mapping)) or not isinstance(params, Iterable):
        raise InvalidInputError(f"{arg} must be a list of parameter names, got {shown(params)}")
    names = tuple(params)
    for name in names:
        check_type(f"a parameter name of {arg}", name, str)
    return names


def check_toolchain(toolchain: Any) -> str:
    """``toolchain`` when it is a string: what made the numbers, ``""`` when unknown (as a
    tuning log that names none is imported). Anything else is refused: ``None`` is not
    stored as some other value (``""`` says unknown), and ``5`` would be stored as ``"5"``.

    >>> check_toolchain(""), check_toolchain("nvcc 12.4")
    ('', 'nvcc 12.4')
    >>> check_toolchain(None)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: a toolchain must be a string ("" when unknown), got None
    """
    if not isinstance(toolchain, str):
        raise InvalidInputError(f'a toolchain must be a string ("" when unknown), '
                                f"got {shown(toolchain)}")
    return toolchain


def finite(value: Any) -> Any:
    """``value`` with every NaN and Infinity (which JSON cannot hold) replaced by None.

    >>> finite({"a": [1.0, float("nan")], "b": float("inf")})
    {'a': [1.0, None], 'b': None}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


def problem_fault(problem: Any) -> str:
    """Why ``problem`` cannot be a workload's stored problem ("" when it can): a NaN or
    Infinity in it (the workload's identity would not be JSON).

    >>> problem_fault([8, 8]), problem_fault({"n": float("nan")})
    ('', 'holds NaN or Infinity; a problem must be finite')
    """
    return "" if finite(problem) == problem else "holds NaN or Infinity; a problem must be finite"


@dataclass(frozen=True, eq=False)
class Workload:
    """A tuned kernel and problem: template, problem (JSON value), parameter names.

    Two workloads are equal when template, problem and the *set* of parameter names
    agree (the order is kept for display and export, but is not part of the identity).

    >>> a, b = Workload("k", [8], ("x", "y")), Workload("k", [8.0], ("y", "x"))
    >>> a == b, b.params, b.key()
    (True, ('y', 'x'), ('k', '[8]', '["x","y"]'))
    >>> Workload("k", [8], "xy")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: workload 'k': params must be a sequence of parameter names, \
got 'xy'
    """

    template: str
    problem: Any
    params: tuple[str, ...]

    def __post_init__(self) -> None:
        # checked where it is made: a template of None fails here, not as an SQLite
        # NOT NULL error when stored; a string of names is not taken letter by letter
        check_type("a workload's template", self.template, str)
        if isinstance(self.params, (str, bytes, Mapping)) or not hasattr(self.params, "__iter__"):
            raise InvalidInputError(f"workload {self.template!r}: params must be a sequence of "
                                    f"parameter names, got {shown(self.params)}")
        object.__setattr__(self, "params", tuple(self.params))
        if not self.params:
            raise InvalidInputError(f"workload {self.template!r} names no parameters")
        for name in self.params:
            check_type(f"a parameter name of workload {self.template!r}", name, str)
            if not name.strip() or not name.isprintable():
                raise InvalidInputError(f"workload {self.template!r}: a parameter name must be "
                                        f"printable and not blank, got {name!r:.60}")
        if len(set(self.params)) < len(self.params):
            raise InvalidInputError(f"workload {self.template!r} names a parameter twice: "
                                    f"{shown(self.params)}")
        try:
            problem = canon(self.problem)
        except (TypeError, ValueError, RecursionError) as exc:  # a set, an object, a cycle
            raise InvalidInputError(f"workload {self.template!r}: its problem must be a JSON "
                                    f"value (numbers, strings, lists, dicts), got "
                                    f"{shown(self.problem)}: {exc}") from None
        try:
            json.dumps(self.problem)
        except TypeError:   # numpy's numbers (canon took them): kept as the JSON they write
            object.__setattr__(self, "problem", json.loads(problem))
        if problem_fault(self.problem):
            raise InvalidInputError(f"workload {self.template!r}: its problem "
                                    f"{problem_fault(self.problem)}")
        # The identity, once: history of a million records groups and compares by it.
        object.__setattr__(self, "_key", (self.template, canon_key(self.problem),
                                          canon(sorted(self.params))))

    def key(self) -> tuple[str, str, str]:
        """The identity as stored: (template, the problem's :func:`canon_key`, sorted
        parameter names),
        as it was made (a workload is a value: its problem is not to be changed in place)."""
        return self._key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Workload) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def label(self, params: bool = False) -> str:
        """A short human-readable name, e.g. ``convolution_kernel [4096,4096]``; a
        problem with a ``name`` (a preset layer) shows the name, an unnamed layer of our
        conv template its shape (:meth:`iobound.layer.ConvLayer.short`). With ``params``
        the parameter names follow, ``k [8] (x,y)``, which tells apart workloads that
        differ only in them (see :func:`search.db.queries.workload_labels`).

        >>> layer = {"n": 1, "c_in": 8, "h_in": 8, "w_in": 8, "c_out": 8, "k_h": 3, "k_w": 3}
        >>> Workload(CONV_TEMPLATE, layer, ("x",)).label()
        'iobound.conv n1 8x8x8 -> 8x6x6 k3x3 s1x1 p0x0'
        >>> print(Workload("two" + chr(10) + "lines", None, ("x",)).label())
        two\\nlines
        """
        template = self.template or "(unnamed kernel)"  # a file that names none (T4 results)
        if isinstance(self.problem, dict) and self.problem.get("name"):
            short = f"{template} {self.problem['name']}"
        elif template == CONV_TEMPLATE and stored_layer(self.problem) is not None:
            short = f"{template} {stored_layer(self.problem).short()}"
        elif self.problem is None:
            short = template
        else:
            short = f"{template} {canon(self.problem)}"
        text = f"{short} ({','.join(self.params)})" if params else short
        # a name from a file may hold a line break: one row a workload in every listing
        return text if text.isprintable() else "".join(
            c if c.isprintable() else repr(c)[1:-1] for c in text)


def stored_json(text: str, what: str):
    """The JSON value a column holds; a damaged one (not JSON: a file changed by another
    program) is :class:`~iobound.errors.InvalidInputError` naming ``what``.

    >>> stored_json('{"x": 1}', "a config"), stored_json(None, "features")
    ({'x': 1}, None)
    >>> stored_json("{bad", "a workload's problem")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: damaged: a workload's problem is not JSON ('{bad')
    """
    if text is None:
        return None
    try:
        return json.loads(text)
    except (TypeError, ValueError, RecursionError):
        raise InvalidInputError(f"damaged: {what} is not JSON ({str(text)[:40]!r})") from None


def workload_from_row(template: str, problem: str, tune_params: str) -> Workload:
    """The workload of a ``workloads`` row (its template and its JSON columns).

    >>> workload_from_row("k", "[8]", '{"x": [1, 2]}') == Workload("k", [8], ("x",))
    True
    >>> workload_from_row("k", "[8]", "5")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: damaged: the tune_params of workload 'k' name no parameters \
('5')
    """
    names = stored_json(tune_params, f"the tune_params of workload {str(template)[:40]!r}")
    if not isinstance(names, (dict, list)) or not all(isinstance(n, str) for n in names):
        raise InvalidInputError(f"damaged: the tune_params of workload {str(template)[:40]!r} "
                                f"name no parameters ({str(tune_params)[:40]!r})")
    return Workload(template, stored_json(problem, f"the problem of workload "
                                                   f"{str(template)[:40]!r}"), tuple(names))


def recorded_workload(kernel: str, problem: Any, params) -> Workload:
    """The workload of a recorded kernel (a cache file's or a replay key's kernel name and
    problem): one of our own exported caches (:func:`exported_kernel_name`, a layer for
    problem, the family's parameter names) is the conv template's, as the run that wrote
    it stored it, so importing or replaying that file adds no second workload.

    >>> layer = {"n": 1, "c_in": 8, "h_in": 8, "w_in": 8, "c_out": 8, "k_h": 3, "k_w": 3}
    >>> recorded_workload("iobound_direct", layer, ("x", "y")).template
    'iobound.conv'
    >>> recorded_workload("iobound_winograd", layer, ("x", "y")).template  # no e: not ours
    'iobound_winograd'
    """
    check_type("kernel", kernel, str)
    params = _names("params", params)
    if kernel == exported_kernel_name(conv_algorithm(params)) and stored_layer(problem) is not None:
        return Workload(CONV_TEMPLATE, current_layer_problem(problem), params)
    return Workload(kernel, problem, params)


@dataclass(frozen=True)
class Measurement:
    """One measurement as stored: workload, device, toolchain, record, provenance.

    >>> w = Workload("k", [8], ("x",))
    >>> r = MeasureRecord.ok({"x": 1}, time_ms=1.0, extra={"flops": 2.0})
    >>> m = Measurement(w, "v100", "t", r)
    >>> m.features  # the cost-model features, taken from the record
    {'flops': 2.0}
    >>> m0 = Measurement(w, "v100", "t", MeasureRecord.ok({"x": 1}, time_ms=0.0))
    >>> m0.time_ms, m0.counts  # no usable time
    (None, False)
    """

    workload: Workload
    device: str
    toolchain: str
    record: MeasureRecord
    run: str = ""
    source: str = ""
    features: dict | None = field(default=None)

    def __post_init__(self) -> None:
        check_type("a measurement's workload", self.workload, Workload)
        check_device_name(self.device)
        check_toolchain(self.toolchain)
        check_type("a measurement's record", self.record, MeasureRecord)
        check_type("a measurement's run", self.run, str)
        check_type("a measurement's source", self.source, str)
        if self.features is not None:
            check_type("a measurement's features", self.features, Mapping)
        if self.features is None:
            object.__setattr__(self, "features", record_features(self.record))

    @property
    def time_ms(self) -> float | None:
        """The measured (or estimated) time, only when it is positive and finite."""
        return as_time(self.record.time_ms)

    @property
    def counts(self) -> bool:
        """Whether this is a usable timing: ``ok`` with a positive, finite time
        (:data:`COUNTED_SQL` in a query)."""
        return self.record.is_ok and self.time_ms is not None

    def digest(self) -> str:
        """SHA-256 over what makes this measurement itself (:func:`digest_of`)."""
        return digest_of(self.workload.key(), self.device, self.toolchain, self.record)


def digest_of(workload_key: tuple[str, str, str], device: str, toolchain: str,
              record: MeasureRecord) -> str:
    """SHA-256 over what makes a measurement itself: its workload's key, device, toolchain,
    and the record's config, status, time, estimate flag and timestamp, each number in
    :func:`same_number_form` (a time of 2 and of 2.0 is one measurement).

    >>> r = MeasureRecord({"x": 1}, "ok", time_ms=2.0, timestamp=5.0)
    >>> digest_of(("k", "[8]", '["x"]'), "d", "t", r)[:12]
    '90cee145d6a9'
    """
    check_type("record", record, MeasureRecord)
    ident = [*workload_key, device, toolchain, canon_key(record.config), record.status.value,
             record.time_ms, bool(record.estimate), record.timestamp]
    return hashlib.sha256(canon_key(ident).encode()).hexdigest()
