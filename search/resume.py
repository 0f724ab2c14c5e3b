"""Resuming a tuning run from its log: check the log is this run's, then read its records.

A log written for another space (another layer, device, algorithm, or recorded
kernel or problem size) or another measurer is refused, so its numbers are never
taken for this run's. Seed, strategy and budget may differ: their records still count.
A field the log's header does not record (an older log's) is not compared.

Examples
--------
>>> import os, tempfile
>>> from search.measure.base import MeasureRecord, Measurer
>>> from search.log_writer import LogWriter
>>> from search.grid_space import GridSpace
>>> class Bowl(Measurer):
...     name = "bowl"
...     def measure(self, configs):
...         return [MeasureRecord.ok(c, time_ms=1.0) for c in configs]
>>> space, path = GridSpace({"a": [1, 2, 3]}), os.path.join(tempfile.mkdtemp(), "run.jsonl")
>>> with LogWriter(path, {"space": space.describe(), "measurer": Bowl().describe()}) as w:
...     w.append(1, MeasureRecord.ok({"a": 2}, time_ms=1.0))
>>> sorted(load_resume(path, space, Bowl()))
[1]
"""

from __future__ import annotations

import json
import logging
from typing import Any, Mapping

from iobound.errors import InvalidInputError

from .measure.base import MeasureRecord, Measurer
from .option_checks import check_type, shown
from .records import as_logged, read_log
from .space import Space

__all__ = ["load_resume", "check_resume_header", "check_resume_identity"]

log = logging.getLogger(__name__)

#: What must agree between a resumed log's header and this run: the space's identity
#: (kind, parameters, size, and the layer/device/algorithm or the recorded kernel and
#: problem size) and the measurer. Seed, strategy and budget may differ (their records
#: still count).
_SPACE_IDENTITY = ("kind", "layer", "device", "algorithm", "kernel", "problem_size", "pruned",
                   "params", "size")


def _shown(key: str, value: Any) -> str:
    """A space's identity field for a message: a layer by its shape (its JSON would be cut
    off in the middle), anything else as JSON, shortened.

    >>> _shown("layer", {"n": 1, "c_in": 8, "h_in": 8, "w_in": 8, "c_out": 8, "k_h": 3, "k_w": 3})
    'n1 8x8x8 -> 8x6x6 k3x3 s1x1 p0x0'
    """
    from .db.conv_template import stored_layer
    layer = stored_layer(value) if key == "layer" else None
    text = layer.short() if layer is not None else json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_resume_header(path, header: Mapping[str, Any], space: Space, measurer: Measurer) -> None:
    """``InvalidInputError`` when the log at ``path`` was written for another space or measurer.

    Without this check a log of another layer whose space happens to have the same
    configurations (another problem size of one recorded kernel, or of the ``model``
    measurer when now measuring on a GPU) would be taken as measurements of this run.
    A field the header's space lacks is not compared; a replayed problem size is taken
    from the header's top level for a log written before the space recorded it, and a
    log that records none at all (older still) is accepted.

    >>> from search.grid_space import GridSpace
    >>> class Bowl(Measurer):
    ...     name = "bowl"
    ...     def measure(self, configs):
    ...         return [MeasureRecord.ok(c, time_ms=1.0) for c in configs]
    >>> space = GridSpace({"a": [1, 2]})
    >>> check_resume_header("r.jsonl", {"space": space.describe(), "seed": 3}, space, Bowl())
    >>> check_resume_header("r.jsonl", {"measurer": {"name": "gpu"}}, space, Bowl())
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: resume log 'r.jsonl' was measured with 'gpu', not 'bowl'; ...
    """
    check_type("space", space, Space)
    check_type("measurer", measurer, Measurer)
    check_resume_identity(path, header, as_logged(space.describe()), measurer.name)


def check_resume_identity(path, header: Mapping[str, Any], now: Mapping[str, Any],
                          measurer: str | None = None) -> None:
    """:func:`check_resume_header` against ``now``, a space's description or the part of
    it known before the space is built (``{"layer", "device", "algorithm"}``: a run
    refuses another layer's log before it builds anything), and the measurer's name if
    given. Only the fields both hold are compared.

    >>> check_resume_identity("r.jsonl", {"space": {"algorithm": "direct"}}, {"algorithm": "winograd"})
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: resume log 'r.jsonl' was written for another space (algorithm "direct" there, "winograd" here); start a new log for this run

    A header whose ``space`` or ``measurer`` is there but no object cannot be compared,
    and is refused:

    >>> check_resume_identity("r.jsonl", {"space": "conv"}, {"algorithm": "winograd"})
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: resume log 'r.jsonl' records a space that is no object ...
    """
    check_type("header", header, Mapping)
    check_type("now", now, Mapping)
    for key in ("space", "measurer"):
        if header.get(key) is not None and not isinstance(header[key], Mapping):
            raise InvalidInputError(
                f"resume log {str(path)!r} records a {key} that is no object "
                f"({shown(header[key])}); it cannot be told to be this run's: start a new "
                f"log for this run")
    logged_space = header.get("space")
    if isinstance(logged_space, Mapping):
        if "problem_size" not in logged_space and "problem_size" in header:
            logged_space = {**logged_space, "problem_size": header["problem_size"]}
        for key in _SPACE_IDENTITY:
            there, here = logged_space.get(key), now.get(key)
            if key == "layer" and isinstance(there, Mapping) and isinstance(here, Mapping):
                there, here = ({k: v for k, v in d.items() if k != "name"} for d in (there, here))
            if key in logged_space and key in now and there != here:
                raise InvalidInputError(
                    f"resume log {str(path)!r} was written for another space ({key} "
                    f"{_shown(key, logged_space[key])} there, {_shown(key, now[key])} "
                    f"here); start a new log for this run")
    logged_meas = header.get("measurer")
    if (measurer is not None and isinstance(logged_meas, Mapping)
            and logged_meas.get("name") not in (None, measurer)):
        raise InvalidInputError(f"resume log {str(path)!r} was measured with {logged_meas.get('name')!r}, "
                         f"not {measurer!r}; start a new log for this run")


def load_resume(path, space: Space, measurer: Measurer,
                reused: set | None = None) -> dict[int, MeasureRecord]:
    """The records of the log at ``path`` by index in ``space`` (the first of each index).

    Logged configurations that are not in ``space`` are dropped with a warning. ``reused``,
    when given, gets the indices whose record the log marks as another run's (taken from
    the tuning database, ``--reuse``): the resumed run still counts them as reused.

    >>> import os, tempfile
    >>> from search.kt_cache import KtCache
    >>> from search.log_writer import LogWriter
    >>> from search.measure.replay import ReplayMeasurer
    >>> from search.replay_space import ReplaySpace
    >>> cache = KtCache({"a": [1, 2]}, [{"a": 1, "time": 2.0}, {"a": 2, "time": 1.0}])
    >>> path = os.path.join(tempfile.mkdtemp(), "run.jsonl")
    >>> with LogWriter(path, {"measurer": {"name": "replay"}}) as w:
    ...     w.append(0, MeasureRecord.ok({"a": 1}, time_ms=2.0), reused=True)
    ...     w.append(1, MeasureRecord.ok({"a": 2}, time_ms=1.0))
    >>> reused = set()
    >>> got = load_resume(path, ReplaySpace(cache), ReplayMeasurer(cache), reused)
    >>> {i: r.time_ms for i, r in got.items()}, reused
    ({0: 2.0, 1: 1.0}, {0})
    """
    check_type("space", space, Space)
    check_type("measurer", measurer, Measurer)
    if reused is not None:
        check_type("reused", reused, set)
    known: dict[int, MeasureRecord] = {}
    dropped = 0
    logged = read_log(path)
    check_resume_header(path, logged.header, space, measurer)
    for e in logged.entries:
        i = space.index(e.record.config)
        if i is None:
            dropped += 1
            continue
        if i not in known and e.reused and reused is not None:
            reused.add(i)
        known.setdefault(i, e.record)
    if dropped:
        log.warning("resume: %d logged configurations are not in this space; ignored", dropped)
    return known
