"""History filtering for the guided GA (Mu et al. 2020): match score, filtering metric, seeds.

Match score (their Eq. 1, the fallback score of TVM): for every dimension ``d`` of
the problem, the share of the history problem's divisors that also divide the
target's, averaged over the dimensions::

    s(h, i) = (1/D) * sum_d |F(h_d) & F(i_d)| / |F(h_d)|,  F(n) = divisors of n

Equal problems score 1. A problem is read as its integers (a list such as a
recorded ``problem_size``, or a layer's integer fields by name); problems with
different shapes score 1 when equal and 0 otherwise, and an unknown target
problem scores every record 1 (nothing tells them apart).

The divisors are counted, not listed: ``F(a) & F(b) = F(gcd(a, b))``, so a
dimension scores ``d(gcd(a, b)) / d(a)`` with ``d`` the number of divisors, read
from the prime factors of ``a``. Trial division stops at 2**16 (or the cube root of
what is left), so a score takes at most milliseconds whatever the sizes; what is
left then has no prime factor below that bound. It is exact whenever that part is
settled: 1, a prime or a prime's square below 2**64 (SymPy's ``isprime``, exact
there), or below the bound's cube (then it is at most two primes); so every size up
to 2**48 (2.8e14), and larger ones such as 10**18. Otherwise (three or more primes
above 2**16, or a part of 2**64 or more that is no prime's square below it) that part
is counted as two primes: it shares all its divisors with the target's dimension
when it divides it, one more than 1 when they share a factor, none else.

Filtering metric (their Eq. 2): ``m(h, i) = Th(h) * gamma(h, i) * s(h, i)**omega``,
omega = 2. Two adaptations, and why:

- ``Th(h)`` is the record's throughput *relative to the best of its own workload
  and device* (``best_time / time``, in (0, 1]) instead of the raw throughput:
  history mixes devices, and the raw numbers would rank every record of the
  fastest GPU above every record of a slower one.
- ``gamma(h, i)``, their utilisation of the target's parallelism per knob, needs
  to know which knob tiles which problem dimension; a generic recorded space does
  not say. Here ``gamma`` is 1 when the configuration is a member of the target
  space and 0 when it is not (it cannot run there at all).

A configuration recorded in several histories (devices, problems) gets the mean of
its metrics; the seeds are the configurations in order of that mean.

Examples
--------
>>> match_score([4096, 4096], [4096, 4096]), match_score([8], [12]), match_score([8], [2, 2])
(1.0, 0.75, 0.0)
>>> problem_dims({"cin": 3, "name": "conv1", "hin": 224})
(3, 224)
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from ..kt_keys import value_key

__all__ = ["problem_dims", "full_layer", "match_score", "HistoryFilter", "filter_history",
           "OMEGA", "MIN_MATCH"]

#: Mu et al.'s exponent of the match score in the filtering metric (their Eq. 2).
OMEGA = 2.0
#: Records whose match score is below this are filtered out of the history.
MIN_MATCH = 0.5


def problem_dims(problem: Any) -> tuple[int, ...] | None:
    """The problem's positive integers in a fixed order, or None when it has none.

    >>> import numpy as np
    >>> problem_dims([64, 0, True, np.int64(3), 2.0]), problem_dims("conv1")  # sizes > 0 only
    ((64, 3, 2), None)
    """
    if _dimension(problem) is not None:
        vals = [problem]
    elif isinstance(problem, (list, tuple)):
        vals = list(problem)
    elif isinstance(problem, dict):
        problem = full_layer(problem)
        vals = [problem[k] for k in sorted(problem)]
    else:
        return None
    dims = tuple(d for d in map(_dimension, vals) if d is not None and d > 0)
    return dims or None


def _dimension(value: Any) -> int | None:
    """``value`` as a size when it is a whole number (a numpy integer, 64.0), not a bool."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def full_layer(problem: dict) -> dict:
    """A layer's dict with every field (defaults filled, output sizes derived), so that the
    same layer written with fewer keys lines up field by field; any other dict as it is.

    >>> full_layer({"n": 1, "c_in": 2, "h_in": 5, "w_in": 5, "c_out": 2, "k_h": 3, "k_w": 3})["h_out"]
    3
    """
    from iobound.errors import InvalidInputError
    from iobound.layer import ConvLayer
    try:
        return ConvLayer.from_dict(problem).to_dict()
    except (InvalidInputError, TypeError, ValueError):
        return problem


#: Trial division's last divisor (module doc): bounds a score's time whatever the size.
_TRIAL = 1 << 16


def _is_prime(n: int) -> bool:
    """Whether ``n`` is prime, by SymPy's test where it is deterministic (below 2**64);
    above, ``False`` (the module doc's approximation). SymPy is imported only for the
    rare dimension with no prime factor up to the trial bound."""
    if n >= 1 << 64:
        return False
    from sympy import isprime
    return bool(isprime(n))


@lru_cache(maxsize=4096)
def _factors(n: int) -> tuple[tuple[tuple[int, int], ...], int, int]:
    """``n``'s small prime factors ``((p, exponent), ...)``, the rest (no prime factor
    below the trial bound) and its number of divisors (module doc).

    >>> _factors(360), _factors(2 * 65537**2), _factors(10**18)[1:]
    ((((2, 3), (3, 2)), 5, 2), (((2, 1),), 4295098369, 3), (1, 1))
    """
    out, d = [], 2
    while d <= _TRIAL and d * d * d <= n:
        if n % d == 0:
            e = 0
            while n % d == 0:
                n, e = n // d, e + 1
            out.append((d, e))
        d += 1 if d == 2 else 2
    if n == 1:
        return tuple(out), 1, 1
    two = n < d * d * d  # at most two prime factors
    root = math.isqrt(n)
    if root * root == n and (two or _is_prime(root)):
        return tuple(out), n, 3  # a prime's square
    prime = n < d * d or _is_prime(n)
    return tuple(out), n, 2 if prime else 4  # else two primes (exact when ``two``)


def _dimension_score(a: int, b: int) -> float:
    """``|F(a) & F(b)| / |F(a)| = d(gcd(a, b)) / d(a)`` (module doc)."""
    small, rest, rest_count = _factors(a)
    shared = total = 1
    for p, e in small:
        k = 0
        while k < e and b % p == 0:
            b, k = b // p, k + 1
        shared, total = shared * (k + 1), total * (e + 1)
    g = math.gcd(rest, b)
    shared *= 1 if g == 1 else rest_count if g == rest else 2
    return shared / (total * rest_count)


def match_score(history_problem: Any, target_problem: Any) -> float:
    """Eq. 1 between two problems (see module doc); in [0, 1]; 1 when either is not known
    (a T4 results file records no problem: nothing says it differs).

    Sizes Python calls equal score alike (a numpy integer or 64.0 is 64, as the tuning
    database keys problems):

    >>> match_score(None, [64, 64]), match_score([64], None), match_score([64, 64], [64])
    (1.0, 1.0, 0.0)
    >>> import numpy as np
    >>> match_score([np.int64(64), 32.0], [64, 32])
    1.0
    """
    if target_problem is None or history_problem is None:
        return 1.0
    h, t = problem_dims(history_problem), problem_dims(target_problem)
    if h is None or t is None or len(h) != len(t):
        return 1.0 if history_problem == target_problem else 0.0
    return sum(_dimension_score(a, b) for a, b in zip(h, t)) / len(h)


@dataclass(frozen=True)
class HistoryFilter:
    """The outcome of filtering: ranked seeds and what the history held.

    Attributes
    ----------
    seeds : tuple of (index, metric)
        Target-space indices, best mean filtering metric first.
    records, usable : int
        Records given; records that passed (in the space, match >= min_match).
    devices : tuple of str
        Devices of the usable records.
    value_weights : dict
        Per parameter, ``((value, summed metric), ...)`` of the usable records in the
        order the values first appear (the "experience" the guided mutation draws
        values from); pairs, not a dict, because a value may be a list.

    >>> from search import GridSpace, MeasureRecord
    >>> from search.db import Measurement, Workload
    >>> space, w = GridSpace({"a": list(range(8))}), Workload("k", [8], ("a",))
    >>> hist = [Measurement(w, "A100", "t", MeasureRecord.ok({"a": a}, time_ms=1.0 + abs(a - 5)))
    ...         for a in range(8)]  # a = 5 was the fastest
    >>> f = filter_history(space, hist)
    >>> f.records, f.usable, f.devices, f.value_weights["a"][5]  # a = 5 weighs most
    (8, 8, ('A100',), (5, 1.0))
    """

    seeds: tuple
    records: int
    usable: int
    devices: tuple
    value_weights: dict


def filter_history(space, history: Sequence, target_problem: Any = None, omega: float = OMEGA,
                   min_match: float = MIN_MATCH) -> HistoryFilter:
    """Rank the space's configurations by the filtering metric of ``history``.

    ``history`` holds records with ``workload.problem``, ``device``, ``time_ms``
    and ``record.config`` (:class:`search.db.Measurement`); untimed ones are ignored.
    ``omega`` and ``min_match`` are checked as :class:`~search.strategies.gga.GuidedGAOptions`
    checks them (a NaN min_match let every record through).

    >>> from search import GridSpace, MeasureRecord
    >>> from search.db import Measurement, Workload
    >>> space, w = GridSpace({"a": list(range(8))}), Workload("k", [8], ("a",))
    >>> hist = [Measurement(w, "A100", "t", MeasureRecord.ok({"a": a}, time_ms=1.0 + abs(a - 5)))
    ...         for a in range(8)]  # a = 5 was the fastest
    >>> filter_history(space, hist, target_problem=[12]).seeds[:2]  # match score 0.75
    ((5, 0.5625), (4, 0.28125))
    >>> filter_history(space, hist, target_problem=[7]).usable  # 0.25, below min_match
    0
    """
    from search.option_checks import check_number
    from search.transfer.sources import source_devices  # (that module imports this one)
    check_number("omega", omega, 0)
    check_number("min_match", min_match, 0, 1)
    device = source_devices(history)  # one GPU held under two names is one group
    group_best: dict[tuple, float] = {}
    for h in history:
        if h.time_ms is not None:
            g = (h.workload, device[h.device])
            group_best[g] = min(group_best.get(g, math.inf), h.time_ms)
    sums: dict[int, list] = {}
    weights: dict[str, dict] = {p: {} for p in space.params}  # key -> [value, summed metric]
    devices, usable = set(), 0
    for h in history:
        if h.time_ms is None:
            continue
        s = match_score(h.workload.problem, target_problem)
        if s < min_match:
            continue
        i = space.index(h.record.config)
        if i is None:  # gamma = 0: it cannot run in the target space
            continue
        m = group_best[(h.workload, device[h.device])] / h.time_ms * s ** omega
        acc = sums.setdefault(int(i), [0.0, 0])
        acc[0] += m
        acc[1] += 1
        usable += 1
        devices.add(device[h.device])
        for p in space.params:
            v = h.record.config[p]
            weights[p].setdefault(value_key(v), [v, 0.0])[1] += m
    ranked = sorted(((total / n, i) for i, (total, n) in sums.items()), key=lambda t: (-t[0], t[1]))
    pairs = {p: tuple((v, w) for v, w in by_key.values()) for p, by_key in weights.items()}
    return HistoryFilter(seeds=tuple((i, m) for m, i in ranked), records=len(history),
                         usable=usable, devices=tuple(sorted(devices)), value_weights=pairs)


