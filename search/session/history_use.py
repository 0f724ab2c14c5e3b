"""What a tuning session takes from the tuning database before it starts.

With ``--history DB`` a session stores its measurements in the database (see
:func:`~search.session.files.store_history`) and, before it starts, lets the
strategy learn from the database's timed records of workloads with exactly this
space's parameter names (any device, any problem: the strategies weigh them):

- ``gga`` and ``zero_shot`` (:data:`HISTORY_STRATEGIES`) take the records in their options;
- the model-based and genetic strategies (:data:`GUIDED_STRATEGIES`) are wrapped in
  :class:`~search.transfer.guided.HistoryGuided`: history's best configurations get
  the first rounds and keep rounds only while they win (:mod:`search.transfer`);
- ``random`` and ``grid`` do not use history.

Workloads with other parameter names say nothing about this space: they are left
out, with a notice. :class:`HistoryUse` reports what was found and whether it was used.

The history is read when the layer starts, so in a network run (``--network``)
each layer learns from the layers the run has stored before it (and from earlier
runs), never from itself: a layer's records are stored after it starts, and the
records of the log a layer resumes are left out (:func:`_own`).

Examples
--------
>>> HistoryUse(records=12, devices=("A100",), used=True).to_dict()
{'records': 12, 'devices': ['A100'], 'used': True}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..transfer.session import HistoryInfo

if TYPE_CHECKING:  # pragma: no cover
    from ..space import Space
    from .settings import TuneSettings

__all__ = ["HistoryUse", "HISTORY_STRATEGIES", "GUIDED_STRATEGIES", "history_options"]

#: Strategies whose options take history records: name -> whether they also take the
#: target problem (for a match score).
HISTORY_STRATEGIES = {"gga": True, "zero_shot": False}

#: Strategies that run under :class:`~search.transfer.guided.HistoryGuided` with history.
GUIDED_STRATEGIES = ("explorer", "sa", "ga")


#: What the database held for this space and whether it was used (one type for every
#: strategy: the transfer module's record).
HistoryUse = HistoryInfo


def _own(settings: "TuneSettings") -> frozenset:
    """This run's own records of the layer so far: those of the log it resumes (stored in
    the database when it was interrupted; they are the target's data, never history)."""
    from ..records import read_log
    from ..transfer.session import own_records
    if not settings.resume:
        return frozenset()
    return own_records(e.record for e in read_log(settings.resume).entries)


def _usable(settings: "TuneSettings", space: "Space", problem: Any) -> tuple[list, int]:
    """(timed records usable for ``space``, workloads left out for their parameter names)."""
    from ..db import TuningDB
    from ..transfer.session import usable_history
    with TuningDB(settings.history) as db:
        other = sum(set(w.params) != set(space.params) for w in db.workloads())
        return usable_history(db, space, problem, exclude=_own(settings)), other


def _guided(settings: "TuneSettings", space: "Space", problem: Any):
    """(options, use, prior) for a strategy of :data:`GUIDED_STRATEGIES`."""
    from ..transfer import transfer_options
    prior, info = transfer_options(settings.history, space, problem, exclude=_own(settings),
                                   seed=settings.seed)
    return settings.options_dataclass(), info, prior


def history_options(settings: "TuneSettings", space: "Space", problem: Any):
    """(the strategy's options, :class:`HistoryUse` or ``None``, a history prior or ``None``).

    For a strategy of :data:`HISTORY_STRATEGIES` the options carry the usable
    records (and the target ``problem`` where the strategy matches problems); for
    one of :data:`GUIDED_STRATEGIES` the prior is what
    :func:`search.transfer.with_history` wraps it with.
    """
    from ..strategies import make_options
    if not settings.history:
        return settings.options_dataclass(), None, None
    if settings.strategy in GUIDED_STRATEGIES:
        return _guided(settings, space, problem)
    records, other = _usable(settings, space, problem)
    devices = tuple(sorted({m.device for m in records}))
    notes = []
    if other:
        notes.append(f"{other} workload(s) in {settings.history} have other parameters: not used")
    takes = settings.strategy in HISTORY_STRATEGIES
    if not takes and records:
        notes.append(f"strategy {settings.strategy!r} does not learn from history")
    if not takes:
        return (settings.options_dataclass(), HistoryUse(len(records), devices, False,
                                                         "; ".join(notes) or None), None)
    values = dict(settings.options or {}, history=tuple(records))
    if HISTORY_STRATEGIES[settings.strategy]:
        values["target_problem"] = problem
    use = HistoryUse(len(records), devices, bool(records), "; ".join(notes) or None)
    return make_options(settings.strategy, values), use, None
