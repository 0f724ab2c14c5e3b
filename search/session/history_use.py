"""What a tuning session takes from the tuning database before it starts.

With ``--history DB`` a session stores its measurements in the database (see
:func:`~search.session.files.store_history`) and, for the strategies that learn
from history (:data:`HISTORY_STRATEGIES`), hands them the database's timed records
of workloads with exactly this space's parameter names (any device, any problem:
the strategy weighs them). Workloads with other parameter names say nothing about
this space: they are left out, with a notice. :class:`HistoryUse` reports what
was found and whether the strategy used it.

Examples
--------
>>> HistoryUse(records=12, devices=("A100",), used=True).to_dict()
{'records': 12, 'devices': ['A100'], 'used': True}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ..space import Space
    from .settings import TuneSettings

__all__ = ["HistoryUse", "HISTORY_STRATEGIES", "history_options"]

#: Strategies whose options take history records: name -> whether they also take the
#: target problem (for a match score).
HISTORY_STRATEGIES = {"gga": True, "zero_shot": False}


@dataclass(frozen=True)
class HistoryUse:
    """The database's records usable for this space, their devices, whether they were used."""

    records: int
    devices: tuple[str, ...]
    used: bool
    notice: str = ""

    def to_dict(self) -> dict:
        d = {"records": self.records, "devices": list(self.devices), "used": self.used}
        if self.notice:
            d["notice"] = self.notice
        return d


def _usable(db_path: str, space: "Space") -> tuple[list, int]:
    """(timed records usable for ``space``, workloads left out for their parameter names)."""
    from ..db import TuningDB
    from ..db.queries import history_for_space
    with TuningDB(db_path) as db:
        other = sum(set(w.params) != set(space.params) for w in db.workloads())
        return history_for_space(db, space), other


def history_options(settings: "TuneSettings", space: "Space", problem: Any):
    """(the strategy's options, :class:`HistoryUse` or ``None`` without a database).

    For a strategy of :data:`HISTORY_STRATEGIES` the options carry the usable
    records (and the target ``problem`` where the strategy matches problems).
    """
    from ..strategies import make_options
    if not settings.history:
        return settings.options_dataclass(), None
    records, other = _usable(settings.history, space)
    devices = tuple(sorted({m.device for m in records}))
    notes = []
    if other:
        notes.append(f"{other} workload(s) in {settings.history} have other parameters: not used")
    takes = settings.strategy in HISTORY_STRATEGIES
    if not takes and records:
        notes.append(f"strategy {settings.strategy!r} does not learn from history "
                     f"(gga and zero_shot do)")
    if not takes:
        return settings.options_dataclass(), HistoryUse(len(records), devices, False, "; ".join(notes))
    values = dict(settings.options or {}, history=tuple(records))
    if HISTORY_STRATEGIES[settings.strategy]:
        values["target_problem"] = problem
    use = HistoryUse(len(records), devices, bool(records), "; ".join(notes))
    return make_options(settings.strategy, values), use
