"""How the match score (:mod:`search.strategies.gga_history`) reads a problem, and the
documented approximation for a size it cannot factor.

References: the doc of :func:`problem_dims` ("the problem's positive integers in a fixed
order": a dict's values by sorted key, bools and non-positive or non-integer values left
out, None when none is left); :func:`match_score`'s rule for problems of different shapes
(1 when equal, else 0); and the module doc's rule for a part of a size with no prime
factor below 2**16 that is neither 1, a prime nor a prime's square: it is counted as two
primes (4 divisors), checked on ``(p*q)**2`` with ``p, q`` primes above 2**16, whose true
divisor count (9) differs from the approximation's.
"""

from __future__ import annotations

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from search.strategies.gga_history import match_score, problem_dims

LAYER = {"c_in": 64, "h_in": 56, "w_in": 28, "c_out": 128}


@settings(max_examples=30, deadline=None)
@given(st.permutations(sorted(LAYER)))
def test_a_dict_reads_by_sorted_key_whatever_its_insertion_order(keys):
    shuffled = {k: LAYER[k] for k in keys}
    assert problem_dims(shuffled) == tuple(LAYER[k] for k in sorted(LAYER))
    assert match_score(shuffled, LAYER) == 1.0
    assert match_score(LAYER, shuffled) == 1.0


@pytest.mark.parametrize("problem, dims", [
    ({"a": 4, "flag": True, "name": "conv1", "zero": 0, "neg": -3, "f": 2.5}, (4,)),
    ([0, 5, False, 7], (5, 7)),
    (6, (6,)),
    (True, None),
    (0, None),
    ({"name": "x", "on": True}, None),
    (["a", "b"], None),
    ([], None),
    ("64", None),
])
def test_problem_dims_keeps_the_positive_integers_only(problem, dims):
    assert problem_dims(problem) == dims


@pytest.mark.parametrize("h, t, score", [
    (["x"], ["y"], 0.0),          # no integers on either side: equal or not
    (["x"], ["x"], 1.0),
    ({"name": "a", "on": True}, {"name": "b", "on": True}, 0.0),
    ([True, 8], [2, 8], 0.0),     # a bool is not a dimension: (8,) against (2, 8)
    ([0, 8], [8], 1.0),           # a zero is not a dimension: (8,) against (8,)
])
def test_problems_without_comparable_dimensions_score_by_equality(h, t, score):
    assert match_score(h, t) == score


P, Q = sympy.nextprime(2**16 + 100), sympy.nextprime(2**17)


@pytest.mark.parametrize("target, shared", [
    (P * Q, 2),            # shares a factor, not the whole part: one divisor more than 1
    ((P * Q) ** 2, 4),     # the whole part divides the target: all its (counted) divisors
    (7, 1),                # no common factor
])
def test_an_unfactored_part_counts_as_two_primes(target, shared):
    """(P*Q)**2 (no prime factor below 2**16, above 2**64, not a prime's square) is counted
    as two primes: 4 divisors, of which the target shares ``shared``."""
    a = (P * Q) ** 2
    assert a > 2**64 and not sympy.isprime(P * Q)
    assert match_score([a], [target]) == shared / 4
    assert match_score([6 * a], [6 * target]) == 4 * shared / 16


def _primes_above(n: int, k: int) -> list[int]:
    out = [sympy.nextprime(n)]
    while len(out) < k:
        out.append(sympy.nextprime(out[-1]))
    return out


#: Sizes below 2**48 made of three or four primes just above 2**8 ... 2**15 (times small
#: ones): trial division must go far enough to settle them (module doc: exact up to 2**48).
MANY_MIDDLE_PRIMES = [int(sympy.prod(_primes_above(2**b, k))) * s
                      for b, k, s in ((8, 3, 1), (8, 4, 6), (10, 3, 1), (10, 4, 1), (12, 3, 4),
                                      (14, 3, 1), (15, 3, 1))]


@pytest.mark.parametrize("a", MANY_MIDDLE_PRIMES)
def test_exact_for_products_of_three_or_four_middle_sized_primes(a):
    assert a < 2**48
    p = sympy.factorint(a)
    big = max(p)
    for b in (a, big, big * min(p), 2 * 3 * 5, a // big):
        want = int(sympy.divisor_count(sympy.gcd(a, b))) / int(sympy.divisor_count(a))
        assert match_score([a], [b]) == want
