"""A^T and G of F(e, r) are the Toom-Cook evaluation matrices of their points, rebuilt here
with exact fractions; the points follow the documented sequence.

For every finite point p_j: A^T[i, j] = p_j^i and G[j, k] = p_j^k / prod_{q != p_j} (p_j - q)
(the Lagrange denominator); the point at infinity (last column of A^T, last row of G)
picks the leading coefficients, e_{e-1} and e_{r-1} with coefficient +1. With A^T and G
fixed, B^T is the unique solution of the identity (tests/iobound/test_winograd_transforms.py).
"""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy as sp

from iobound.winograd_transforms import interpolation_points, verify_transforms, winograd_transforms

CASES = [(1, 1), (1, 3), (2, 2), (2, 3), (3, 2), (3, 3), (4, 3), (2, 5), (6, 3)]


def toom_cook(e: int, r: int, points: list[Fraction]):
    """(A^T, G) as lists of Fractions from the points (infinity last)."""
    n = e + r - 1
    AT = [[Fraction(0)] * n for _ in range(e)]
    G = [[Fraction(0)] * r for _ in range(n)]
    for j, p in enumerate(points):
        denom = Fraction(1)
        for q in points:
            if q != p:
                denom *= p - q
        for i in range(e):
            AT[i][j] = p ** i
        for kk in range(r):
            G[j][kk] = p ** kk / denom
    AT[e - 1][n - 1] = Fraction(1)
    G[n - 1][r - 1] = Fraction(1)
    return AT, G


def _frac(m: sp.Matrix):
    return [[Fraction(int(sp.fraction(x)[0]), int(sp.fraction(x)[1])) for x in m.row(i)]
            for i in range(m.rows)]


@pytest.mark.parametrize("e, r", CASES)
def test_output_and_kernel_transforms_are_toom_cook(e, r):
    """A^T evaluates powers at the points, G the kernel over the Lagrange denominators, and
    infinity contributes +1 on the leading coefficients; the identity then holds."""
    t = winograd_transforms(e, r)
    pts = [Fraction(int(sp.fraction(p)[0]), int(sp.fraction(p)[1])) for p in t.points]
    assert len(pts) == len(set(pts)) == e + r - 2
    AT, G = toom_cook(e, r, pts)
    assert _frac(t.AT) == AT and _frac(t.G) == G
    assert verify_transforms(t)


def test_points_are_distinct_nested_and_closed_under_negation():
    """0 first, then +/- pairs; a shorter list is a prefix of a longer one."""
    pts = interpolation_points(11)
    assert pts[0] == 0 and len(set(pts)) == 11
    assert all(pts[i] == -pts[i - 1] for i in range(2, 11, 2))
    assert all(interpolation_points(c) == pts[:c] for c in range(12))


def test_points_follow_the_documented_order():
    """The docstring's sequence: 0, then k, -k, 1/(k+1), -1/(k+1) for k = 1, 2, ...: 0, 1,
    -1, 1/2, -1/2, 2, -2, 1/3, -1/3, 3 (F(4, 3) thus uses 0, +-1, +-1/2; the docstrings once
    said 2, -2 came before 1/2, -1/2, which the code never did)."""
    h, third = sp.Rational(1, 2), sp.Rational(1, 3)
    assert interpolation_points(10) == [0, 1, -1, h, -h, 2, -2, third, -third, 3]
