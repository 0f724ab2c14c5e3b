"""What a tuning run has seen, what it may answer without measuring, the budget, the best.

Two kinds of records answer a configuration without measuring it:

- ``known``, the records of a resumed log (:mod:`search.resume`): the same run, so they
  count toward the budget whether the replay reaches them or not;
- ``reusable``, earlier measurements of this space on this device with this toolchain
  from the tuning database (``iobound tune --history DB --reuse``): another run's, so one
  counts only when the strategy asks for it, and is then written to this run's log (a
  resume is exact without the database), as Kernel Tuner counts a cache hit.

Examples
--------
>>> from search.measure.base import MeasureRecord
>>> led = Ledger({4: MeasureRecord.ok({"a": 4}, time_ms=3.0)},
...              reusable={7: MeasureRecord.ok({"a": 7}, time_ms=0.5)})
>>> led.seen[1] = MeasureRecord.ok({"a": 1}, time_ms=1.0)
>>> led.used()  # one measured here plus one known from the log; 7 is not asked yet
2
>>> led.take([7, 2, 3], budget=4)  # room for two: 7 is reused, 2 measured
([7], [2])
"""

from __future__ import annotations

import math
from typing import AbstractSet as Set, Mapping, Sequence

from .measure.base import MeasureRecord
from .space import Space
from .tune_result import Trial

__all__ = ["Ledger"]


class Ledger:
    """What a run has seen, what a resumed log knows, what the database lets it reuse,
    how much budget is used, the best (module doc).

    ``seen`` maps every index measured or answered in this run to its record;
    ``known`` the indices of a resumed log, ``reusable`` those of earlier runs; ``trials``
    the unique configurations in the order first answered; ``best`` the trial with the
    lowest finite cost.

    >>> from search.measure.base import MeasureRecord
    >>> led = Ledger()
    >>> led.add_trial(3, {"a": 3}, MeasureRecord.ok({"a": 3}, time_ms=2.0))
    >>> led.add_trial(5, {"a": 5}, MeasureRecord.ok({"a": 5}, time_ms=1.5))
    >>> led.best.index, led.best_cost, led.used(), [t.index for t in led.trials]
    (5, 1.5, 2, [3, 5])
    """

    def __init__(self, known: Mapping[int, MeasureRecord] | None = None,
                 reusable: Mapping[int, MeasureRecord] | None = None,
                 known_reused: Set[int] = frozenset()):
        self.known: dict[int, MeasureRecord] = dict(known or {})
        #: the known indices the resumed log marks as reused (another run's records)
        self.known_reused = frozenset(i for i in known_reused if i in self.known)
        self.reusable: dict[int, MeasureRecord] = {i: r for i, r in (reusable or {}).items()
                                                   if i not in self.known}
        self.seen: dict[int, MeasureRecord] = {}
        self.trials: list[Trial] = []
        self.best: Trial | None = None

    def used(self) -> int:
        """Budget used: indices seen here plus logged ones not reached (yet)."""
        return len(self.seen) + sum(1 for i in self.known if i not in self.seen)

    def take(self, new: Sequence[int], budget: int) -> tuple[list[int], list[int]]:
        """Of ``new`` (asked, not seen), in the order asked, those the budget has room for
        besides the logged ones (which are counted already): ``(reused, to measure)``."""
        room = budget - self.used()
        taken = [i for i in new if i not in self.known][:max(room, 0)]
        return ([i for i in taken if i in self.reusable],
                [i for i in taken if i not in self.reusable])

    @property
    def best_cost(self) -> float:
        """The best cost so far (``inf`` before anything ran ok)."""
        return self.best.record.cost if self.best is not None else math.inf

    def _trial(self, i: int, config: dict, record: MeasureRecord) -> Trial:
        return Trial(i, config, record, resumed=i in self.known,
                     reused=i in self.reusable or i in self.known_reused)

    def add_trial(self, i: int, config: dict, record: MeasureRecord) -> None:
        """Record index ``i`` as a trial (resumed when the log knew it, reused when the
        database did) and update the best."""
        self.seen[i] = record
        t = self._trial(i, config, record)
        self.trials.append(t)
        if record.cost < self.best_cost:
            self.best = t

    def add_untold(self, space: Space) -> None:
        """Make trials of the indices measured in a round cut short (interrupted), and
        the best again (the interrupt may have come between a trial and its best)."""
        done = {t.index for t in self.trials}
        for i, rec in list(self.seen.items()):
            if i not in done:
                self.trials.append(self._trial(i, space.get(i), rec))
        self.best = min(self.trials, key=lambda t: t.record.cost, default=None)
        if self.best is not None and not math.isfinite(self.best.record.cost):
            self.best = None

    def add_unreached(self, space: Space) -> None:
        """Append the logged trials the replay never asked for (they still count); again,
        it adds only those not added yet. Reusable records never asked for are no trials:
        they belong to earlier runs."""
        done = {t.index for t in self.trials}
        for i, rec in self.known.items():
            if i not in self.seen and i not in done:
                t = Trial(i, space.get(i), rec, resumed=True, reused=i in self.known_reused)
                self.trials.append(t)
                if rec.cost < self.best_cost:
                    self.best = t
