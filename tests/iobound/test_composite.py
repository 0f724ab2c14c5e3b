"""The composite-algorithm API: maxima of T(S) and the Hong-Kung matrix multiply."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from iobound.composite import CompositeAlgorithm, CompositeStep, composite_bound_expr
from iobound.symbols import S, V, k

MM = CompositeAlgorithm((CompositeStep("products", k * sp.sqrt(S) / 2),
                         CompositeStep("sums", k - 1)), name="matrix multiply")


def _mm_vertices(n):
    return 2 * n * n + n * n * (2 * n - 1)


def test_matmul_T_closed_form():
    """Hong-Kung matmul: T(S) = S^(3/2) + S - 1 (vertex maximum)."""
    assert sp.simplify(MM.T_expr("vertex") - (S ** sp.Rational(3, 2) + S - 1)) == 0


@given(st.integers(0, 300))
def test_matmul_vertex_equals_exact(s):
    """The vertex maximum equals the enumerated integer maximum."""
    if s == 0:
        assert MM.T_exact(0) == -1.0      # phi_2(0) = -1: only a formal value at s = 0
        return
    assert MM.T_exact(s) == pytest.approx(float(MM.T_expr("vertex").subs(S, s)))


@given(st.integers(1, 200))
def test_relaxed_over_estimates(s):
    """The relaxed maximum is >= the exact maximum."""
    assert float(MM.T_expr("relaxed").subs(S, s)) >= MM.T_exact(s) - 1e-9


@given(st.lists(st.tuples(st.floats(0, 5), st.floats(0, 5), st.floats(0, 3)),
                min_size=1, max_size=3), st.integers(1, 12))
def test_relaxed_over_estimates_random_monotone_steps(coeffs, s):
    """For random non-decreasing phi = a k + b sqrt(k S) + c, relaxed >= exact.

    The float coefficients are taken exactly (``sp.Rational``): ``nsimplify`` searched
    for a closed form of each random float and took about a second per example."""
    steps = tuple(CompositeStep(f"s{i}", sp.Rational(a) * k + sp.Rational(b) * sp.sqrt(k * S)
                                + sp.Rational(c))
                  for i, (a, b, c) in enumerate(coeffs))
    alg = CompositeAlgorithm(steps)
    relaxed = float(alg.T_expr("relaxed").subs(S, s))
    assert relaxed >= alg.T_exact(s) - 1e-6 * max(1, relaxed)


@pytest.mark.parametrize("n, t", [(64, 8), (128, 16)])
def test_matmul_bound_is_theta_n3_over_sqrt_S(n, t):
    """n x n matmul: bound <= blocked schedule I/O and within a constant of n^3/sqrt(S)."""
    s = t * t + 2 * t + 2
    q = float(composite_bound_expr(MM.T_expr("vertex")).subs({V: _mm_vertices(n), S: s}))
    blocked = (n // t) ** 2 * (2 * t * n + t * t)
    assert q <= blocked
    assert q >= 0.3 * n ** 3 / np.sqrt(s)


def test_callable_steps_numeric_only():
    """Callables work in T_exact but not symbolically."""
    alg = CompositeAlgorithm((CompositeStep("p", lambda kk, ss: kk * np.sqrt(ss) / 2),
                              CompositeStep("s", lambda kk: kk - 1)))
    assert alg.T_exact(16) == MM.T_exact(16)
    with pytest.raises(ValueError, match="callable"):
        alg.T_expr()


def test_psi_differs_from_phi():
    """psi feeds the next step, phi counts the step's vertices."""
    alg = CompositeAlgorithm((CompositeStep("a", 3 * k, k), CompositeStep("b", k)))
    assert sp.simplify(alg.T_expr("vertex") - 5 * S) == 0   # S + (3S + S) at k1 = S
    assert alg.T_exact(7) == 35


def test_rejections():
    """Empty algorithms, unknown methods and huge enumerations are ValueErrors."""
    with pytest.raises(ValueError, match="at least one step"):
        CompositeAlgorithm(())
    with pytest.raises(ValueError, match="unknown method"):
        MM.T_expr("magic")
    with pytest.raises(ValueError, match="points"):
        MM.T_exact(10 ** 5, max_points=1000)


def test_vertex_maximum_is_only_a_candidate_when_the_split_pays():
    """phi_1 = phi_2 = sqrt(k S), psi_1 = 0: the best split is k1 = k2 = S/2 (T = S + sqrt(2) S),
    above the vertex value S + S. The relaxed maximum (the default) still over-estimates,
    which is why only it is used for bounds without a proof that a vertex is the maximum."""
    alg = CompositeAlgorithm((CompositeStep("a", sp.sqrt(k * S), sp.Integer(0)),
                              CompositeStep("b", sp.sqrt(k * S))))
    s = 50
    exact = alg.T_exact(s)
    assert exact == pytest.approx(s + np.sqrt(2) * s, rel=1e-12)
    assert float(alg.T_expr("vertex").subs(S, s)) < exact
    assert float(alg.T_expr().subs(S, s)) >= exact
