"""What a tuning session calls to tune with history: read the database, build the prior, wrap.

:func:`transfer_options` reads the history for a space from a tuning database and
returns the prior (``None`` when nothing is usable) and a :class:`HistoryInfo`
(the ``"history"`` object of ``--json``, plus a one-line notice when the
database holds only other parameter spaces). :func:`with_history` wraps the
session's strategy. A tuning session with ``--history DB`` does, per layer or
recorded space, *before* it stores this run's measurements in the database::

    prior, info = transfer_options(db_path, space, problem)  # problem as stored
    if info.notice:
        print(info.notice, file=sys.stderr)                   # one line
    strategy = with_history(make_strategy(name, space, options, rng), prior, seed=seed)
    result = tune(space, measurer, strategy=strategy, ...)
    out["history"] = info.as_json()                           # --json

(``gga`` takes its history through its own options instead, and ``random`` /
``grid`` gain nothing from it.)

Examples
--------
>>> import numpy as np
>>> from search.db import Measurement, TuningDB, Workload
>>> from search.measure.base import MeasureRecord
>>> from search.grid_space import GridSpace
>>> db = TuningDB(":memory:")
>>> _ = db.add([Measurement(Workload("k", [8], ("y",)), "gpu0", "t",
...                         MeasureRecord.ok({"y": 1}, time_ms=1.0))])
>>> prior, info = transfer_options(db, GridSpace({"x": [1, 2]}))
>>> prior is None, info.as_json()
(True, {'records': 0, 'devices': [], 'used': False})
>>> info.notice
'history: 1 record of other parameter spaces not used'
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np

from iobound import limits

from iobound.errors import InvalidInputError
from iobound.wording import counted

from ..option_checks import check_records, check_type, shown
from .guided import GuidedOptions, HistoryGuided, check_wrapped, guided_options
from .prior import HistoryPrior, PriorOptions

__all__ = ["HistoryInfo", "own_records", "usable_history", "transfer_options", "with_history",
           "check_exclude"]


@dataclass(frozen=True)
class HistoryInfo:
    """What the history held for a space (its timed records of this space's parameters,
    the target's own left out: what every strategy reads, whatever share its own rules
    then keep), their devices, whether the strategy used them, a notice, and the seconds
    taken to read it and make the prior (set by the tuning session).

    >>> info = HistoryInfo(12, ("a100",), True, seconds=0.01234)
    >>> info.as_json()
    {'records': 12, 'devices': ['a100'], 'used': True, 'seconds': 0.012}
    >>> HistoryInfo(0, (), False, notice="history: nothing usable").to_dict()["notice"]
    'history: nothing usable'
    """

    records: int
    devices: tuple[str, ...]
    used: bool
    notice: str | None = None
    seconds: float | None = None
    #: the database's mark (:meth:`~search.db.TuningDB.last_id`) the records were read up
    #: to: a resumed run reads the history as it was then (set by the tuning session)
    up_to: int | None = None

    def as_json(self) -> dict:
        """The ``"history"`` object of ``--json``: records, devices, used (and seconds when
        known)."""
        out = {"records": self.records, "devices": list(self.devices), "used": self.used}
        return out if self.seconds is None else {**out, "seconds": round(self.seconds, 3)}

    def to_dict(self) -> dict:
        """:meth:`as_json` plus the notice, when there is one."""
        return {**self.as_json(), **({"notice": self.notice} if self.notice else {})}


def own_records(records: Iterable) -> frozenset:
    """The identities (config, timestamp) of a run's own records (e.g. a resumed log's), for
    :func:`transfer_options`'s ``exclude``.

    >>> from search.measure.base import MeasureRecord
    >>> r = MeasureRecord.ok({"x": 1}, time_ms=1.0)
    >>> own_records([r]) == {('{"x":1}', r.timestamp)}
    True
    """
    from ..db.model import canon_key
    from ..measure.base import MeasureRecord
    records = check_records("records", records, MeasureRecord)
    return frozenset((canon_key(r.config), float(r.timestamp)) for r in records)


def check_exclude(exclude: Any) -> frozenset:
    """``exclude`` as a frozenset (itself when it is one) when it holds a run's own record
    identities, ``(config key, timestamp)`` pairs as :func:`own_records` makes them; else
    InvalidInputError naming it (a string was a TypeError at the first record compared).

    >>> check_exclude("abc")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: exclude must be a set of (config key, ...) ..., got 'abc'
    """
    what = "a set of (config key, timestamp) pairs (own_records makes one)"
    if isinstance(exclude, (str, bytes, Mapping)) or not hasattr(exclude, "__iter__"):
        raise InvalidInputError(f"exclude must be {what}, got {shown(exclude)}")
    items = exclude if isinstance(exclude, frozenset) else list(exclude)
    for item in items:  # a (str, number) pair is hashable: a set's member
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)
                and isinstance(item[1], numbers.Real) and not isinstance(item[1], bool)):
            raise InvalidInputError(f"exclude must be {what}, got the item {shown(item)}")
    return frozenset(items)


def transfer_options(db, space, problem: Any = None, *, exclude_devices: Iterable[str] = (),
                     exclude: frozenset = frozenset(), options: PriorOptions | None = None,
                     seed: int = 0, up_to: int | None = None
                     ) -> tuple[HistoryPrior | None, HistoryInfo]:
    """The history prior for ``space`` from ``db`` (a TuningDB, or the path of one that
    exists: reading never creates a database) and what it used.

    ``problem`` is the target's problem (a layer dict, a recorded problem size)
    for the match score; ``exclude_devices`` keeps devices out of the history;
    ``exclude`` (:func:`own_records`) keeps the target's own records of this run out
    (a resumed layer's records, stored when it was interrupted, are not history);
    ``up_to`` reads only what was stored by that mark (:meth:`~search.db.TuningDB.last_id`).
    An example with :func:`with_history`, which guides a strategy with the prior, is there.

    >>> from search.db import Measurement, TuningDB, Workload
    >>> from search.measure.base import MeasureRecord
    >>> from search.grid_space import GridSpace
    >>> db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
    >>> recs = [MeasureRecord.ok({"x": x}, time_ms=1.0 + x) for x in range(4)]
    >>> _ = db.add([Measurement(w, d, "t", r) for d in ("gpu0", "gpu1") for r in recs])
    >>> prior, info = transfer_options(db, GridSpace({"x": list(range(4))}), [8],
    ...                                exclude_devices=["gpu0"])
    >>> prior.devices, info.to_dict()
    (('gpu1',), {'records': 4, 'devices': ['gpu1'], 'used': True})
    """
    from ..db import TuningDB
    from ..db.opening import open_database
    from ..db.queries import other_space_timings

    limits.check_int("seed", seed, limits.SEED)
    exclude = check_exclude(exclude)
    if options is not None:  # checked with or without history: 'x' was ignored when none fit
        check_type("options", options, PriorOptions)
    if not isinstance(db, TuningDB):
        with open_database(db, "db", readonly=True) as handle:
            return transfer_options(handle, space, problem, exclude_devices=exclude_devices,
                                    exclude=exclude, options=options, seed=seed, up_to=up_to)
    hist = usable_history(db, space, problem, exclude_devices=exclude_devices, exclude=exclude,
                          up_to=up_to)
    prior = HistoryPrior.fit(space, hist, problem, options, seed) if hist else None
    other = other_space_timings(db, space.params)
    notice = None
    if prior is None and other:
        notice = f"history: {counted(other, 'record')} of other parameter spaces not used"
    elif prior is None and hist:
        notice = f"history: none of {counted(len(hist), 'record')} matches this space and problem"
    if prior is None:
        return None, HistoryInfo(0, (), False, notice)
    # what the history held for this space, as every strategy reports it (the prior's
    # sources may keep fewer: a replayed space's records of configurations outside it)
    return prior, HistoryInfo(len(hist), tuple(sorted({m.device for m in hist})), True, notice)


def usable_history(db, space, problem: Any = None, *, exclude_devices: Iterable[str] = (),
                   exclude: frozenset = frozenset(), up_to: int | None = None) -> list:
    """The database's records usable as history for ``space`` (same parameter names, not
    of ``exclude_devices``, stored by the mark ``up_to`` when given), without the target's
    own records named in ``exclude``.

    >>> from search import GridSpace, MeasureRecord
    >>> from search.db import Measurement, TuningDB, Workload
    >>> mine, other = (MeasureRecord.ok({"x": x}, time_ms=1.0 + x) for x in (1, 2))
    >>> db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
    >>> _ = db.add([Measurement(w, "gpu0", "t", r) for r in (mine, other)])
    >>> got = usable_history(db, GridSpace({"x": [1, 2]}), [8], exclude=own_records([mine]))
    >>> [m.record.config for m in got]  # the run's own record left out
    [{'x': 2}]
    """
    from ..db.model import canon_key
    from ..db.queries import history_for_space
    from .sources import same_problem
    exclude = check_exclude(exclude)
    hist = history_for_space(db, space, exclude_devices=exclude_devices, up_to=up_to)
    if not exclude:
        return hist
    # the problem as a layer, its name aside: a resume may name the layer another way
    return [m for m in hist if not ((canon_key(m.record.config), float(m.record.timestamp))
                                    in exclude
                                    and same_problem(m.workload.problem, problem))]


def with_history(strategy, prior: HistoryPrior | None,
                 options: GuidedOptions | Mapping[str, Any] | None = None, seed: int | None = 0):
    """``strategy`` guided by ``prior`` (:class:`HistoryGuided`); unchanged when ``prior`` is None.

    ``options`` is :class:`GuidedOptions`, a mapping of its fields or None (the defaults).
    ``seed`` (the session's seed; ``None`` is 0, as in :func:`search.tuner.tune`) seeds a
    generator of its own for the history rounds' draws, so the inner strategy's draws are
    exactly those it makes without history. Every argument is checked, with a prior or
    without.

    Another device's records of the same parameters (its optimum x = 4; the target's,
    x = 3) give the first round, where the strategy alone would draw at random:

    >>> import numpy as np
    >>> from search import GridSpace, Measurer, MeasureRecord, make_strategy, tune
    >>> from search.db import Measurement, TuningDB, Workload
    >>> class Toy(Measurer):
    ...     name = "toy"
    ...     def measure(self, configs):
    ...         return [MeasureRecord.ok(c, time_ms=1.0 + abs(c["x"] - 3)) for c in configs]
    >>> space, w = GridSpace({"x": list(range(12))}), Workload("k", [1], ("x",))
    >>> db = TuningDB(":memory:")  # the database of `iobound tune --history`
    >>> _ = db.add([Measurement(w, "GPU X", "t", MeasureRecord.ok({"x": x}, [2.0 + abs(x - 4)]))
    ...             for x in range(12)])
    >>> prior, info = transfer_options(db, space)
    >>> info.records, info.devices, info.used
    (12, ('GPU X',), True)
    >>> strategy = with_history(make_strategy("random", space, rng=np.random.default_rng(0)), prior)
    >>> r = tune(space, Toy(), strategy=strategy, budget=4)
    >>> [t.config["x"] for t in r.trials], r.best.config
    ([4, 3, 5, 2], {'x': 3})
    """
    check_wrapped(strategy, prior)
    options = guided_options(options)
    seed = 0 if seed is None else limits.check_int("seed", seed, limits.SEED)
    if prior is None:
        return strategy
    return HistoryGuided(strategy, prior, options, np.random.default_rng([seed, 1]))
