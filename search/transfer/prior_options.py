"""How tuning history becomes a prior: the options of :class:`~.prior.HistoryPrior`.

>>> PriorOptions().omega, PriorOptions(min_match=0.8).min_match
(2.0, 0.8)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..option_checks import check_count, check_number
from ..strategies.gga_history import MIN_MATCH, OMEGA

__all__ = ["PriorOptions"]


@dataclass(frozen=True)
class PriorOptions:
    """How history becomes a prior.

    Attributes
    ----------
    omega : float
        Exponent of the match score in a source's weight (Mu et al.: 2).
    min_match : float
        Sources whose problem matches the target's less are not used.
    max_candidates : int
        The ranking model scores the whole space up to this size, else a random
        sample of this many configurations (Lorien's sampling) plus every
        configuration a source measured.
    n_estimators, max_depth : int
        The ranking model's boosting rounds and tree depth.
    consensus_match : float
        Only sources matching the target's problem at least this well enter the
        consensus (0: every source); the ranking model learns from all of them.
    max_rows_per_source : int
        The ranking model learns from at most this many of a source's records: its
        fastest half of them and a seeded uniform sample of the rest
        (:func:`search.cost_model.training_rows`).
    max_rows : int
        ... and from at most this many records in all: with more, the sources share them
        (:func:`search.cost_model.source_caps`: the small ones whole, the large ones an
        equal share), so a database of many devices or layers costs seconds of fitting.

    Examples
    --------
    >>> PriorOptions(n_estimators=50).n_estimators, PriorOptions().consensus_match
    (50, 0.0)
    >>> PriorOptions(min_match=1.5)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: min_match must be a finite number in [0, 1], got 1.5
    """

    omega: float = OMEGA
    min_match: float = MIN_MATCH
    max_candidates: int = 50_000
    n_estimators: int = 150
    max_depth: int = 6
    consensus_match: float = 0.0
    max_rows_per_source: int = 32_768
    max_rows: int = 262_144

    def __post_init__(self) -> None:
        for name, high in (("omega", math.inf), ("min_match", 1), ("consensus_match", 1)):
            check_number(name, getattr(self, name), 0, high)
        for name in ("max_candidates", "n_estimators", "max_depth", "max_rows_per_source",
                     "max_rows"):
            check_count(name, getattr(self, name), low=1)
