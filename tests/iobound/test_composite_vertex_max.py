"""The "vertex" T(S) of a composite algorithm keeps every undominated vertex candidate.

For steps whose objective is convex in (k_1, k_2) (a linear step, then a quadratic one,
with no outputs passed on) the maximum over the simplex is at a vertex, so the vertex
expression must equal the exact enumerated maximum T_exact for every S and parameter R,
whichever of the two vertices wins.
"""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from iobound.composite import CompositeAlgorithm, CompositeStep
from iobound.symbols import R, S, k

ALG = CompositeAlgorithm((CompositeStep("linear", R * k, psi=sp.Integer(0)),
                          CompositeStep("quadratic", k**2)))


def test_incomparable_vertices_give_a_max():
    """S + R S and S + S^2: neither dominates for all S, R >= 1, so both are kept."""
    expr = ALG.T_expr("vertex")
    assert isinstance(expr, sp.Max)
    assert set(expr.args) == {S + R * S, S + S**2}


@settings(deadline=None, max_examples=40)
@given(st.integers(1, 30), st.integers(1, 40))
def test_vertex_expression_equals_exact_maximum(s, r):
    """T_expr("vertex") at (S, R) = (s, r) equals the enumerated T_exact(s)."""
    value = float(ALG.T_expr("vertex").subs({S: s, R: r}))
    assert value == pytest.approx(ALG.T_exact(s, params={"R": r}))
