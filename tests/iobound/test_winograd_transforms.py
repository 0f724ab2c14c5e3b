"""Winograd transform matrices: the convolution identity, the exact solve and its limits."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from iobound.winograd_transforms import (MAX_TILE_EDGE, interpolation_points, verify_transforms,
                                         winograd_transforms)


@pytest.mark.parametrize("e, r", [(1, 1), (1, 3), (2, 3), (3, 2), (4, 3), (2, 5), (6, 3)])
def test_identity_holds_symbolically(e, r):
    """A^T [(G g) * (B^T d)] is the valid correlation of d by g, exactly."""
    t = winograd_transforms(e, r)
    assert (t.AT.shape, t.G.shape, t.BT.shape) == ((e, t.n), (t.n, r), (t.n, t.n))
    assert verify_transforms(t)


@given(st.integers(1, 6), st.integers(1, 5), st.integers(0, 2 ** 32 - 1))
def test_nested_2d_identity_numerically(e, r, seed):
    """Y = A^T [(G g G^T) * (B^T d B)] A equals the 2-D valid correlation (float64)."""
    AT, G, BT = winograd_transforms(e, r).as_numpy()
    rng = np.random.default_rng(seed)
    n = e + r - 1
    d, g = rng.standard_normal((n, n)), rng.standard_normal((r, r))
    y = AT @ ((G @ g @ G.T) * (BT @ d @ BT.T)) @ AT.T
    ref = np.array([[np.sum(g * d[i:i + r, j:j + r]) for j in range(e)] for i in range(e)])
    assert np.allclose(y, ref, rtol=1e-8, atol=1e-8 * max(1.0, np.abs(ref).max()))


def _bt_by_sp_solve(e, r):
    """The input transform solved equation by equation with sp.solve (the slow reference)."""
    t = winograd_transforms(e, r)
    n = t.n
    unknowns = sp.symbols(f"b0:{n * n}")
    B = sp.Matrix(n, n, unknowns)
    eqs = [sum(t.AT[i, j] * t.G[j, k] * B[j, l] for j in range(n)) - (1 if l == i + k else 0)
           for i in range(e) for k in range(r) for l in range(n)]
    sol = sp.solve(eqs, unknowns, dict=True)[0]
    return B.subs(sol, simultaneous=True).subs({u: 0 for u in unknowns}, simultaneous=True)


@pytest.mark.parametrize("e, r", [(2, 3), (3, 2), (2, 2)])
def test_gauss_jordan_matches_equation_solve(e, r):
    """The one-matrix Gauss-Jordan solve gives the same (unique) B^T as sp.solve."""
    assert winograd_transforms(e, r).BT == _bt_by_sp_solve(e, r)


def test_f2x3_matches_lavin_gray():
    """F(2, 3) with points 0, 1, -1, infinity is Lavin & Gray's, up to the sign of each point.

    Per point j only the product A^T[i, j] G[j, k] B^T[j, l] matters (a row sign moves
    between the three matrices), so those triple products are compared.
    """
    lavin = (sp.Matrix([[1, 1, 1, 0], [0, 1, -1, -1]]),
             sp.Matrix([[1, 0, 0], [sp.S.Half] * 3, [sp.S.Half, -sp.S.Half, sp.S.Half], [0, 0, 1]]),
             sp.Matrix([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]))
    t = winograd_transforms(2, 3)
    assert interpolation_points(3) == [0, 1, -1]

    def triple(AT, G, BT):
        return [[[[AT[i, j] * G[j, k] * BT[j, l] for l in range(4)] for k in range(3)]
                 for i in range(2)] for j in range(4)]

    assert triple(t.AT, t.G, t.BT) == triple(*lavin)
    assert [abs(x) for x in t.BT] == [abs(x) for x in lavin[2]]


@pytest.mark.parametrize("e, r, field", [(0, 3, "e must"), (2, 0, "r must"), (1.5, 3, "e must"),
                                         (MAX_TILE_EDGE, 2, "e \\+ r - 1 must be <= 32")])
def test_bad_arguments_name_the_field(e, r, field):
    """Bad e or r, or a tile above MAX_TILE_EDGE, is a ValueError naming it."""
    with pytest.raises(ValueError, match=field):
        winograd_transforms(e, r)
