"""The benchmarks' one score of a search: how close the best time it found is to the best
known.

``reference / best`` (1.0: it found the optimum or the reference; 0.5: its best runs at
half the optimum's speed), 0.0 when it found nothing (no time, a failed one, a
non-finite or non-positive time): every table in ``benchmarks/results`` means this by
"optimum / best found".

>>> speed_score(2.0, 4.0), speed_score(2.0, None), speed_score(2.0, float("inf"))
(0.5, 0.0, 0.0)
"""

from __future__ import annotations

import math

__all__ = ["speed_score"]


def speed_score(reference_ms: float, best_ms: float | None) -> float:
    """``reference_ms / best_ms``, or 0.0 when ``best_ms`` is no time (module doc)."""
    if best_ms is None or not math.isfinite(best_ms) or best_ms <= 0:
        return 0.0
    return reference_ms / best_ms
