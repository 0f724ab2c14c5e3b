"""Mu et al.'s match score: the share of a history dimension's divisors that divide the target's.

It used to list every divisor by trial division up to sqrt(n): one history record
with a problem dimension of 10**18 took 30 s, and every history-using run paid it.
"""

from __future__ import annotations

import math

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from search.strategies.gga_history import match_score


def _divisor_set(n: int) -> set[int]:
    """Every divisor of ``n``, listed the way the score was first computed."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return set(small + [n // d for d in small])


def _listed_score(h, t) -> float:
    """The score by listing divisors (the original definition, for sizes up to 10**6)."""
    return sum(len(_divisor_set(a) & _divisor_set(b)) / len(_divisor_set(a))
               for a, b in zip(h, t)) / len(h)


def _exact_score(h, t) -> float:
    """The score by divisor counts, d(gcd(a, b)) / d(a), with SymPy's factorisation."""
    return sum(int(sympy.divisor_count(math.gcd(a, b))) / int(sympy.divisor_count(a))
               for a, b in zip(h, t)) / len(h)


dims = st.lists(st.integers(1, 10**6), min_size=1, max_size=4)


@settings(max_examples=300)
@given(dims, st.data())
def test_same_score_as_listing_divisors_up_to_a_million(h, data):
    """For sizes up to 10**6 the score is bit for bit the one of the divisor lists."""
    t = data.draw(st.lists(st.integers(1, 10**6), min_size=len(h), max_size=len(h)))
    assert match_score(h, t) == _listed_score(h, t)
    assert match_score(h, h) == 1.0


@given(st.integers(1, 2**48), st.integers(1, 2**64))
def test_exact_below_two_to_the_48(a, b):
    """Up to 2**48 (and any target size) the score is the exact divisor share."""
    assert match_score([a], [b]) == _exact_score([a], [b])


@pytest.mark.parametrize("a", [
    (2**16 + 1) * (2**31 - 1),           # two primes beyond the trial division, below 2**48
    65537**2,                              # a prime's square
    (2**31 - 1)**2 * 3,                    # a prime's square above 2**48
    10**18,                                # 2**18 * 5**18: only small primes
    (2**61 - 1) * 6,                       # a Mersenne prime above 2**48 times small ones
    2**64 - 59,                            # the largest prime below 2**64
])
def test_exact_for_large_sizes_the_factorisation_settles(a):
    """Large sizes whose part without small primes is at most two primes, or a prime below
    2**64, score exactly, against targets that share some of their divisors or none."""
    for b in (a, 64, 6 * 65537, math.gcd(a, 2**40 * 3**20) * 7, 1):
        assert match_score([a], [b]) == _exact_score([a], [b])


@pytest.mark.parametrize("h", [[10**18, 64], [10**40 + 1, 3], [2**200 * 3**100 + 1, 9],
                               [10**4000 + 7, 1]])
def test_huge_sizes_take_bounded_time_and_score_in_unit_interval(h):
    """Whatever the magnitude (no factorisation, no primality test of a 4,000-digit
    number: the old divisor list never ended), a score lies in [0, 1] and is 1 for an
    equal problem."""
    scores = [match_score(h, [64, 64]), match_score(h, [h[0] * 3, 64]), match_score(h, h)]
    assert all(0.0 <= s <= 1.0 for s in scores) and scores[-1] == 1.0


def test_ten_to_the_18_scores_its_divisor_share():
    """10**18 = 2**18 * 5**18 has 361 divisors, 7 of which (the powers of 2 up to 64) divide 64."""
    assert match_score([10**18, 64], [64, 64]) == (7 / 361 + 1) / 2
