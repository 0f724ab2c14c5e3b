"""Lemma 4.8: T(S) <= 4 S sqrt(R S) + S - 1 for direct convolution.

With the paper's phi_1(k) = 2 S sqrt(R k) = psi_1(k) and phi_2(k) = k - 1, the
objective of Thm 4.5 is F(k1, k2) = phi_1(k1) + phi_2(k2 + psi_1(k1)). Moving one
unit of budget from k2 to k1 never lowers F (dF/dk1 >= dF/dk2 on 0 < k1 <= S when
R S >= 1), so the maximum over k1 + k2 <= S is at k1 = S, k2 = 0.
"""

import sympy as sp

from iobound.direct_bounds import direct_composite, direct_T_expr
from iobound.symbols import R, S

k1, k2 = sp.symbols("k1 k2", nonnegative=True)
t = sp.Symbol("t", positive=True)        # k1 = t S, 0 < t <= 1
u, q = sp.symbols("u q", nonnegative=True)  # S = (1+u)^2, R = (1+q)^2, i.e. S, R >= 1


def _objective():
    return direct_composite(paper=True).objective((k1, k2))


def test_objective_is_the_papers():
    """The composite API builds 4 S sqrt(R k1) + k2 - 1."""
    assert sp.simplify(_objective() - (4 * S * sp.sqrt(R * k1) + k2 - 1)) == 0


def test_budget_moves_to_k1():
    """dF/dk1 - dF/dk2 >= 2 sqrt(R S) - 1 > 0 for k1 = t S, t in (0, 1]."""
    F = _objective()
    gap = (sp.diff(F, k1) - sp.diff(F, k2)).subs(k1, t * S)
    assert sp.simplify(gap - (2 * sp.sqrt(R * S) / sp.sqrt(t) - 1)) == 0
    # at t <= 1 the gap is at least its value at t = 1, which is positive for R, S >= 1
    at_one = (2 * sp.sqrt(R * S) - 1).subs({S: (1 + u) ** 2, R: (1 + q) ** 2})
    assert sp.expand(at_one).is_positive
    assert sp.diff(2 * sp.sqrt(R * S) / sp.sqrt(t), t).is_negative


def test_maximum_closed_form():
    """T(S) = S + F(S, 0) = 4 S sqrt(R S) + S - 1, the API's vertex maximum."""
    F = _objective()
    T = S + F.subs({k1: S, k2: 0})
    assert sp.simplify(T - (4 * S * sp.sqrt(R * S) + S - 1)) == 0
    assert sp.simplify(direct_T_expr(True) - T) == 0


def test_matches_exact_integer_maximum():
    """For sample (R, S) the closed form equals the enumerated integer maximum."""
    alg = direct_composite(paper=True)
    for r in (1, 4, 9):
        for s in (1, 5, 40):
            exact = alg.T_exact(s, {"R": r})
            closed = float(direct_T_expr(True).subs({R: r, S: s}))
            assert abs(exact - closed) < 1e-9 * closed
