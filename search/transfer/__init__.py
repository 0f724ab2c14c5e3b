"""Transfer learning from tuning history: a prior over the space, and strategies it guides.

:func:`with_history` wraps any strategy so that history proposes the first rounds
(the consensus's best and every source's) and keeps rounds only while its picks
improve the target's best (:mod:`.guided`), and gives a model-based strategy the
history's rankings (the consensus's and each source's) as features
(:mod:`.prior_feature`); :class:`HistoryPrior` (:mod:`.prior`) turns history records
into candidates. :func:`transfer_options` is what a tuning session calls.
"""

from __future__ import annotations

from .guided import GuidedOptions, HistoryGuided
from .prior import HistoryPrior, PriorOptions
from .prior_feature import PriorFeatureSpace
from .session import HistoryInfo, transfer_options, with_history

__all__ = ["GuidedOptions", "HistoryGuided", "HistoryPrior", "PriorOptions", "PriorFeatureSpace",
           "HistoryInfo", "transfer_options", "with_history"]
