"""Thm 4.9: the leading term MACs / (4 sqrt(2 R S)) from Thm 4.6 and Lemma 4.7.

Q >= S (|V| / T(2S) - 1) with |V| = (2 K C_in - 1) P C_out + I + K C_in C_out
(K = k_h k_w taps, P = H_out W_out, I inputs; Lemma 4.7) and T(S) of Lemma 4.8.
As C_in and P = H_out W_out grow the ratio to the leading term tends to 8 sqrt(2R) S^(3/2)/T(2S),
which tends to 1 as S grows.
"""

import sympy as sp

from iobound.direct_bounds import direct_bound_exprs, direct_leading_exprs
from iobound.symbols import MACS, R, S, V

K, P, Cin, Cout, I = sp.symbols("K P C_in C_out I", positive=True)


def _ratio():
    lemma_4_7 = (2 * K * Cin - 1) * P * Cout + I + K * Cin * Cout
    macs = K * Cin * P * Cout
    bound = direct_bound_exprs()["hong_kung_composite"].args[1]  # Max(0, expr)
    lead = direct_leading_exprs()["hong_kung_composite"]
    return (bound / lead).subs({V: lemma_4_7, MACS: macs}, simultaneous=True)


def test_bound_is_theorem_4_6_with_lemma_4_8():
    """The expression is S (V / (8 sqrt(2) sqrt(R) S^(3/2) + 2 S - 1) - 1)."""
    bound = direct_bound_exprs()["hong_kung_composite"].args[1]
    T2 = 4 * (2 * S) * sp.sqrt(R * 2 * S) + 2 * S - 1
    assert sp.simplify(bound - S * (V / T2 - 1)) == 0


def test_leading_term_limit():
    """ratio -> 1 as C_in -> oo and P -> oo (the layer grows), then S -> oo (any R)."""
    in_cin = sp.limit(_ratio(), Cin, sp.oo)
    in_p = sp.limit(in_cin, P, sp.oo)   # the weights' share 1/(2P) vanishes
    assert sp.simplify(in_p - 8 * sp.sqrt(2 * R) * S ** sp.Rational(3, 2)
                       / (8 * sp.sqrt(2) * sp.sqrt(R) * S ** sp.Rational(3, 2) + 2 * S - 1)) == 0
    assert sp.limit(in_p, S, sp.oo) == 1


def test_leading_term_value():
    """S * 2 MACs / (8 sqrt(2 R) S^(3/2)) simplifies to MACs / (4 sqrt(2 R S))."""
    assert sp.simplify(S * 2 * MACS / (8 * sp.sqrt(2 * R) * S ** sp.Rational(3, 2))
                       - direct_leading_exprs()["hong_kung_composite"]) == 0
