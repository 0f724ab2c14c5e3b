"""Kendall's tau of two orders and its one-sided p-value, exact on small samples with ties.

How far a source's times order the target's few measurements like the target decides
whether history earns a round (:meth:`.prior.HistoryPrior.agreement`). scipy's
``kendalltau`` takes the exact null distribution only when neither side has a tie; with
one it falls back to the normal approximation, which on the handful of configurations
the first history rounds measure is off: a perfect order of 7 configurations, three of
which tie on both sides (as an analytic cost model gives configurations it cannot tell
apart), gets p = 0.0016 from it against 0.0012 exact, on the wrong side of 0.01 / 7 sources.
Here such samples (up to :data:`EXACT_UP_TO` pairs) get the exact p-value of the
permutation test: the share of all pairings of ``x`` with ``y`` whose concordance (tau-b's
numerator; its denominator is the same for every pairing) is at least the observed one.
``scipy.stats.permutation_test`` computes the same (the tests check it), several times slower
on 8 pairs, and this runs for every source each time history is judged. Tau is scipy's
tau-b either way, but a perfect order is exactly 1 (scipy's can be 1 - 2e-16, which
``GuidedOptions(trust=1.0)`` would refuse).

>>> round(kendall_greater([1, 2, 3, 4], [10, 20, 30, 40])[1], 4)  # 1 / 4!, no tie
0.0417
>>> tau, p = kendall_greater([1, 1, 1, 2, 3, 4, 5], [2, 2, 2, 3, 4, 5, 6])
>>> round(tau, 3), round(p, 5)  # 3! / 7! pairings order them as well
(1.0, 0.00119)
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import permutations

import numpy as np

#: Samples of at most this many pairs get the exact p-value when a side has a tie (8! =
#: 40,320 pairings, about 30 ms); larger ones keep the normal approximation, which is
#: close there.
EXACT_UP_TO = 8


@lru_cache(maxsize=EXACT_UP_TO)
def _pairings(n: int) -> np.ndarray:
    """Every permutation of ``range(n)``, one per row."""
    return np.array(list(permutations(range(n))), dtype=np.int8)


def kendall_greater(x, y) -> tuple[float, float]:
    """Kendall's tau-b of ``x`` and ``y`` and the one-sided p-value of a tau this large
    or larger by chance (module doc); ``(nan, nan)`` when either side is constant or
    there are fewer than two pairs. ``x`` and ``y`` are as many finite numbers.

    >>> kendall_greater([1, 2, 3], [1, 2])
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: y must hold 3 numbers (one per value of x), got 2
    """
    from scipy.stats import kendalltau

    from .checks import check_reals
    x = check_reals("x", x)
    y = check_reals("y", y, len(x), each="value of x")
    tau, p = kendalltau(x, y, alternative="greater")
    if abs(abs(tau) - 1.0) < 1e-12:  # scipy's tau-b of a perfect order can be 1 - 2e-16
        tau = math.copysign(1.0, tau)
    n = len(x)
    if math.isnan(tau) or n > EXACT_UP_TO or (len(set(x)) == n and len(set(y)) == n):
        return float(tau), float(p)
    i, j = np.triu_indices(n, 1)
    y_sign = np.sign(y[i] - y[j]).astype(np.int64)
    xs = x[_pairings(n)]
    concordance = (np.sign(xs[:, i] - xs[:, j]).astype(np.int64) * y_sign).sum(axis=1)
    observed = int((np.sign(x[i] - x[j]).astype(np.int64) * y_sign).sum())
    return float(tau), float(np.mean(concordance >= observed))
