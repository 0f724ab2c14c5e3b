"""Winograd F(e x e, r x r) transform matrices, constructed exactly with SymPy.

Toom-Cook construction over the points ``0, 1, -1, 1/2, -1/2, 2, -2, 1/3, ...``
plus the point at infinity (Lavin & Gray 2016). ``A^T`` (e x n) evaluates the
product polynomial's interpolation, ``G`` (n x r) evaluates the kernel
polynomial (scaled by the Lagrange denominators), and ``B^T`` (n x n) is
*solved for* exactly so that for every kernel g and input d

    y = A^T [(G g) * (B^T d)]      (1-D)
    Y = A^T [(G g G^T) * (B^T d B)] A   (2-D, nested)

is the valid correlation ``y_i = sum_k g_k d_{i+k}``. Nothing is a hard-coded
table; :func:`verify_transforms` checks the identity symbolically.

Examples
--------
>>> t = winograd_transforms(2, 3)
>>> t.n, t.BT.shape, t.G.shape, t.AT.shape
(4, (4, 4), (4, 3), (2, 4))
>>> verify_transforms(t)
True
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import sympy as sp

from .errors import InvalidInputError
from .limits import MAX_TILE_EDGE  # the largest input tile edge served (its reason there)
from .limits import Limit, check_int

__all__ = ["WinogradTransforms", "winograd_transforms", "interpolation_points", "verify_transforms",
           "MAX_TILE_EDGE", "check_winograd_tile"]

#: Interpolation points a transform of an input tile of at most MAX_TILE_EDGE takes (n - 1;
#: the point at infinity is the last).
_POINTS = Limit(0, MAX_TILE_EDGE, f"points: an input tile is at most {MAX_TILE_EDGE} wide")


@dataclass(frozen=True)
class WinogradTransforms:
    """Exact transform matrices of F(e, r) (1-D; nest them for 2-D).

    Examples
    --------
    >>> t = winograd_transforms(2, 3)
    >>> t.e, t.r, t.n, t.points
    (2, 3, 4, (0, 1, -1))
    >>> t.AT.tolist()   # output transform: rows of the points' powers, infinity last
    [[1, 1, 1, 0], [0, 1, -1, 1]]
    >>> [m.shape for m in t.as_numpy()]   # AT, G, BT as float64 arrays
    [(2, 4), (4, 3), (4, 4)]
    """

    e: int
    r: int
    AT: sp.Matrix  # e x n: output transform
    G: sp.Matrix   # n x r: kernel transform
    BT: sp.Matrix  # n x n: input transform
    points: tuple  # the n - 1 finite interpolation points (infinity is the n-th)

    @property
    def n(self) -> int:
        """Input tile edge e + r - 1."""
        return self.e + self.r - 1

    def as_numpy(self, dtype=np.float64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(AT, G, BT) as floating-point arrays."""
        return tuple(np.array(m.evalf(30).tolist(), dtype=dtype) for m in (self.AT, self.G, self.BT))


def interpolation_points(count: int) -> list[sp.Rational]:
    """The first ``count`` finite points: 0, then ``k, -k, 1/(k+1), -1/(k+1)`` for k = 1, 2, ...

    >>> [str(p) for p in interpolation_points(8)]
    ['0', '1', '-1', '1/2', '-1/2', '2', '-2', '1/3']
    """
    count = check_int("count", count, _POINTS)
    pts: list[sp.Rational] = [sp.Integer(0)]
    k = 1
    while len(pts) < count:
        for cand in (sp.Integer(k), -sp.Integer(k), sp.Rational(1, k + 1), -sp.Rational(1, k + 1)):
            if cand not in pts:
                pts.append(cand)
        k += 1
    return pts[:count]


def winograd_transforms(e: int, r: int) -> WinogradTransforms:
    """Exact A^T, G, B^T of F(e, r); cached, since every caller wants the same ones.

    The arguments are checked on every call, before the cache is asked: the cache
    compares keys by equality, so ``True`` or ``2.0`` would otherwise be answered
    with the transforms of ``1`` or ``2`` once those were cached.

    Raises
    ------
    ValueError
        For e < 1, r < 1 or an input tile e + r - 1 above :data:`MAX_TILE_EDGE`.

    Examples
    --------
    >>> t = winograd_transforms(4, 3)   # F(4, 3): 6 x 6 input tiles
    >>> t.n, t.BT.shape, t.G.shape, verify_transforms(t)
    (6, (6, 6), (6, 3), True)
    >>> winograd_transforms(4, 3) is t   # cached
    True
    """
    return _transforms(*check_winograd_tile(e, r))


def check_winograd_tile(e: int, r: int) -> tuple[int, int]:
    """``(e, r)`` as ints when F(e, r) is served: both integers >= 1 and the input tile
    e + r - 1 at most :data:`MAX_TILE_EDGE`; else InvalidInputError saying which.

    >>> check_winograd_tile(31, 3)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: Winograd e = 31 with r = 3 gives an input tile of 33; e + r - 1 must be <= 32
    """
    for name, v in (("e", e), ("r", r)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise InvalidInputError(f"Winograd {name} must be an integer >= 1, got {v!r}")
    e, r = int(e), int(r)
    n = e + r - 1
    if n > MAX_TILE_EDGE:
        raise InvalidInputError(f"Winograd e = {e} with r = {r} gives an input tile of {n}; "
                                f"e + r - 1 must be <= {MAX_TILE_EDGE}")
    return e, r


@lru_cache(maxsize=None)
def _transforms(e: int, r: int) -> WinogradTransforms:
    """:func:`winograd_transforms` of checked ``int`` arguments."""
    n = e + r - 1
    pts = interpolation_points(n - 1)
    AT = sp.zeros(e, n)
    G = sp.zeros(n, r)
    for j, p in enumerate(pts):
        denom = sp.prod([p - q for q in pts if q != p]) if n > 1 else sp.Integer(1)
        for i in range(e):
            AT[i, j] = p**i
        for k in range(r):
            G[j, k] = p**k / denom
    # The point at infinity contributes the leading coefficients.
    AT[e - 1, n - 1] = 1
    G[n - 1, r - 1] = 1
    # Solve sum_j AT[i,j] G[j,k] BT[j,l] = [l == i + k] for BT: one linear system
    # M BT = I_shift with M[(i,k), j] = AT[i,j] G[j,k], solved exactly by Gauss-Jordan
    # elimination over the rationals (all n columns of BT at once).
    M = sp.Matrix(e * r, n, lambda row, j: AT[row // r, j] * G[j, row % r])
    rhs = sp.Matrix(e * r, n, lambda row, col: 1 if col == row // r + row % r else 0)
    try:
        BT, free = M.gauss_jordan_solve(rhs)
    except ValueError:
        raise ArithmeticError(
            f"no input transform exists for F({e}, {r}) with points {pts}") from None
    # Free parameters (if any) do not matter for the identity; pin them to zero.
    BT = BT.subs({u: 0 for u in free}, simultaneous=True)
    return WinogradTransforms(e=e, r=r, AT=AT, G=G, BT=BT, points=tuple(pts))


winograd_transforms.cache_clear = _transforms.cache_clear


def verify_transforms(t: WinogradTransforms) -> bool:
    """True when A^T[(G g) * (B^T d)] equals the valid correlation of d by g, symbolically.

    >>> verify_transforms(winograd_transforms(4, 3))
    True
    >>> import dataclasses
    >>> t = winograd_transforms(2, 3)
    >>> verify_transforms(dataclasses.replace(t, G=2 * t.G))   # a kernel transform scaled by 2
    False
    """
    g = sp.Matrix(sp.symbols(f"g0:{t.r}"))
    d = sp.Matrix(sp.symbols(f"d0:{t.n}"))
    y = t.AT * (t.G * g).multiply_elementwise(t.BT * d)
    expected = sp.Matrix([sum(g[k] * d[i + k] for k in range(t.r)) for i in range(t.e)])
    return all(sp.expand(a - b) == 0 for a, b in zip(y, expected))
