"""Optimal tiles of the direct and Winograd dataflows for a fast memory of S words per block.

Continuous optimum (SymPy, Lagrange multipliers; :mod:`dataflow.continuous_optimum`).
Ignoring halos and border tiles, a
block with spatial tile ``P = x y`` and ``z`` output channels moves per output

    f(P, z) = C_in (a P + K z) / (P z)

words (``a P`` staged inputs per channel, ``K z`` weights per channel), and occupies

    g(P, z) = c P z + alpha (a P + K z)

words on chip. Direct: ``a = rho_h rho_w`` input rows x columns per output position
(``rho = min(k, mu / gcd(mu, d))``, i.e. ``mu`` for an overlapping window), ``K = k_h k_w``,
``c = 1`` (accumulators). Winograd: ``a = 1``, ``K = r^2``, ``alpha = 1``,
``c = 2 (e+r-1)^2 / e^2`` (two temporary arrays per Winograd tile). Minimising ``f``
subject to ``g = S`` gives ``a P = K z``, i.e. ``x y = R_df z`` with the dataflow's reuse
``R_df = K / a``; this is the paper's optimality condition ``x y = R z`` (Sec. 5.2/5.3)
with R the paper's ``k_h k_w / mu^2`` for overlapping windows and ``k_h k_w`` (= ``reuse_max``)
for stride 1. Within this model the staging term ``alpha (a P + K z)`` does not move the
condition. A tile cannot exceed the layer (``z <=`` one group's ``c_out``,
``P <= h_out w_out``): where that point lies outside, the optimum is on the cap with
``g = S`` (or the whole layer), and ``ContinuousOptimum.bound_by`` says which (a convex
program in ``ln P``, ``ln z``; :mod:`dataflow.continuous_optimum`). A real block stages
the whole input rectangle its tile reads, which is not ``a P`` when the stride exceeds the
window (a 1x1 kernel of stride 2), so the continuous optimum is only where the integer
search below, on exact footprints, starts.

Integer tiles: an exact search over all spatial tiles (divisors of w_out and h_out; for
Winograd multiples of e that divide them when such tiles fit, otherwise multiples of e
that may overhang the output by a partial Winograd tile), each with the
``z`` that minimises the exact I/O within the footprint limit (the largest feasible
divisor of c_out, or the smallest ``z`` with the fewest channel tiles). The exact I/O
of :func:`dataflow.direct.direct_io` decides; ties go to the smaller footprint.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=32, k_h=3, k_w=3, padding=(1, 1))
>>> best = optimal_direct_tiles(layer, fast_memory=1024)
>>> best.tiling, best.footprint.total <= 1024
(DirectTiling(x=8, y=8, z=8, alpha=1), True)
>>> round(best.continuous.x * best.continuous.y / best.continuous.z, 6)
9.0
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from iobound import limits
from iobound.algorithms import DEFAULT_WINOGRAD_E
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer, check_layer

from .continuous_optimum import (  # re-exported: the optimum the search starts from
    ALPHA, A, C, C_IN, K, S, ContinuousOptimum, continuous_optimum_expressions, dataflow_reuse,
    direct_continuous_optimum, winograd_continuous_optimum)
from .direct import DirectTiling, check_dense, direct_footprint, direct_io
from .io_volume import DataflowIO, Footprint, _used_total
from .winograd import WinogradTiling, winograd_footprint, winograd_io

__all__ = [
    "ContinuousOptimum",
    "TileChoice",
    "continuous_optimum_expressions",
    "dataflow_reuse",
    "direct_continuous_optimum",
    "winograd_continuous_optimum",
    "optimal_direct_tiles",
    "optimal_winograd_tiles",
]

logger = logging.getLogger(__name__)

@dataclass(frozen=True)
class TileChoice:
    """The integer tiling chosen for a layer and a fast memory of ``fast_memory`` words.

    Attributes
    ----------
    algorithm : str
        ``"direct"`` or ``"winograd"``.
    tiling : DirectTiling or WinogradTiling
    io : DataflowIO
        Exact I/O of the tiling.
    footprint : Footprint
        On-chip words of one block (``<= fast_memory``).
    fast_memory : int
        Words available to one block (S / N_p).
    divisible : bool
        Whether x, y, z divide w_out, h_out, c_out (the search domain's requirement).
    continuous : ContinuousOptimum
        The SymPy optimum (halo-free, within the layer's box) the integer tiles are
        compared with; the search itself is exhaustive and does not depend on it.

    Examples
    --------
    >>> from iobound import ConvLayer
    >>> choice = optimal_direct_tiles(ConvLayer(1, 4, 6, 6, 4, 3, 3, padding=1), 64)
    >>> choice.tiling, choice.io.total, choice.footprint.total, choice.divisible
    (DirectTiling(x=3, y=3, z=2, alpha=1), 1232, 61, True)
    >>> round(choice.continuous.x, 2), choice.continuous.bound_by  # the real-valued optimum
    (4.08, 'memory')
    """

    algorithm: str
    tiling: DirectTiling | WinogradTiling
    io: DataflowIO
    footprint: Footprint
    fast_memory: int
    divisible: bool
    continuous: ContinuousOptimum


# --- integer search -----------------------------------------------------------------

def _divisors(n: int) -> np.ndarray:
    return np.array([d for d in range(1, n + 1) if n % d == 0], dtype=np.int64)


def _axis_used(layer: ConvLayer, tiles: np.ndarray, axis: str) -> np.ndarray:
    i = 0 if axis == "h" else 1
    n_out = layer.h_out if axis == "h" else layer.w_out
    n_in = layer.h_in if axis == "h" else layer.w_in
    k = layer.k_h if axis == "h" else layer.k_w
    return np.array([_used_total(n_out, min(int(t), n_out), layer.stride[i], layer.dilation[i], k,
                                 layer.padding[i], n_in) for t in tiles], dtype=np.int64)


def _best_z(z_max: np.ndarray, c_out: int, divisors_only: bool) -> np.ndarray:
    """Per candidate, the z minimising the channel-tile count within ``z <= z_max`` (0: none)."""
    z_max = np.minimum(z_max, c_out)
    if divisors_only:
        divs = _divisors(c_out)
        pos = np.searchsorted(divs, z_max, side="right") - 1
        return np.where(pos >= 0, divs[np.maximum(pos, 0)], 0)
    safe = np.maximum(z_max, 1)
    n_z = -(-c_out // safe)
    return np.where(z_max >= 1, -(-c_out // n_z), 0)


def _search(layer, xs, ys, fixed_shared, per_z, divisors_only, fast_memory):
    """Exhaustive over the (x, y) pairs (increasing ``xs``, ``ys``) whose ``z = 1`` block fits;
    returns (x, y, z) of the least exact I/O or None.

    The footprint grows with x and y, so the pairs are listed per x up to the largest y that
    fits, never as a grid over every tile size of the output."""
    def fits(x, y):
        return fixed_shared(x, y) + per_z(x, y) <= fast_memory

    xs = xs[fits(xs, ys[0])]
    if not xs.size:
        return None
    ys = ys[fits(xs[0], ys)]
    keep = [fits(x, ys) for x in xs]
    counts = np.array([int(k.sum()) for k in keep], dtype=np.int64)
    ux, uy = _axis_used(layer, xs, "w"), _axis_used(layer, ys, "h")
    X, Y = np.repeat(xs, counts), np.concatenate([ys[k] for k in keep])
    used = np.repeat(ux, counts) * np.concatenate([uy[k] for k in keep])
    room = fast_memory - fixed_shared(X, Y)
    z_max = np.where(room > 0, room // per_z(X, Y), 0)
    Zb = _best_z(z_max, layer.c_out, divisors_only)
    ok = Zb >= 1
    if not ok.any():
        return None
    # blocks that read no input at all (only padding): z does not change the I/O
    Zb = np.where(ok & (used == 0), 1, Zb)
    n_x = -(-layer.w_out // np.minimum(X, layer.w_out))
    n_y = -(-layer.h_out // np.minimum(Y, layer.h_out))
    n_z = -(-layer.c_out // np.maximum(Zb, 1))
    io = layer.n * (n_z * layer.c_in * used
                    + n_x * n_y * layer.c_out * layer.c_in * layer.k_h * layer.k_w)
    foot = fixed_shared(X, Y) + per_z(X, Y) * Zb
    io = np.where(ok, io, np.iinfo(np.int64).max)
    k = np.lexsort((foot, io))[0]
    return int(X[k]), int(Y[k]), int(Zb[k])


def _check_layer(layer) -> None:
    check_layer(layer)


def _divisible(layer: ConvLayer, x: int, y: int, z: int) -> bool:
    return layer.w_out % x == 0 and layer.h_out % y == 0 and layer.c_out % z == 0


def optimal_direct_tiles(layer: ConvLayer, fast_memory: int, alpha: int = 1,
                         divisors: bool = True) -> TileChoice:
    """The direct tiling of least exact I/O whose footprint fits ``fast_memory`` words.

    Parameters
    ----------
    layer : ConvLayer
    fast_memory : int
        Words one block may hold (S / N_p for N_p blocks sharing S).
    alpha : int
        Input channels staged per step (1 in the paper; it only changes the footprint).
    divisors : bool
        Search only tiles that divide the output dimensions (Table 1); ``False`` searches
        any size (border tiles clipped).

    Raises
    ------
    ValueError
        When not even a 1 x 1 x 1 tile fits.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> optimal_direct_tiles(ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=(1, 1)), 128).tiling
    DirectTiling(x=4, y=4, z=2, alpha=1)
    """
    _check_layer(layer)
    fast_memory = limits.check_int("fast_memory", fast_memory, limits.FAST_MEMORY_WORDS)
    divisors = limits.check_flag("divisors", divisors)
    check_dense(layer, "optimal_direct_tiles")
    alpha = limits.check_int("alpha", alpha, limits.Limit(1, layer.c_in, f"c_in={layer.c_in}"))
    mu_h, mu_w = layer.stride
    kk = layer.k_h * layer.k_w

    def fixed(X, Y):
        return alpha * ((Y - 1) * mu_h + layer.extent_h) * ((X - 1) * mu_w + layer.extent_w)

    def per_z(X, Y):
        return X * Y + alpha * kk

    if divisors:   # 1 divides everything, so a dividing tile fits whenever any tile does
        found = _search(layer, _divisors(layer.w_out), _divisors(layer.h_out), fixed, per_z, True, fast_memory)
    else:
        found = _search(layer, np.arange(1, layer.w_out + 1), np.arange(1, layer.h_out + 1),
                        fixed, per_z, False, fast_memory)
    if found is None:
        need = direct_footprint(layer, DirectTiling(1, 1, 1, alpha)).total
        raise InvalidInputError(f"fast memory of {fast_memory} words is too small: the smallest block "
                         f"(1x1x1, alpha={alpha}) needs {need} words")
    tiling = DirectTiling(*found, alpha)
    return TileChoice("direct", tiling, direct_io(layer, tiling), direct_footprint(layer, tiling),
                      fast_memory, _divisible(layer, *found),
                      direct_continuous_optimum(layer, fast_memory, alpha))


def winograd_search(layer: ConvLayer, fast_memory: int, e: int, divisors: bool, fixed, per_z,
                    free_z: bool = False):
    """Winograd tiles (multiples of ``e``; dividing the output first when ``divisors`` and such
    a tile fits, else overhanging) of least exact I/O for a footprint ``fixed + per_z * z``;
    ``(x, y, z)`` or None. ``free_z``: z need not divide c_out (the last channel block is
    smaller) even when ``divisors``.

    Examples
    --------
    A footprint of the input rectangle plus 16 accumulators per Winograd tile and channel:

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=1)
    >>> winograd_search(layer, 400, 2, True, lambda x, y: (x + 2) * (y + 2),
    ...                 lambda x, y: 16 * (x // 2) * (y // 2))
    (4, 8, 2)
    >>> winograd_search(layer, 20, 2, True, lambda x, y: (x + 2) * (y + 2), lambda x, y: 16) is None
    True
    """
    def mult(dim):
        return np.arange(e, -(-dim // e) * e + 1, e, dtype=np.int64)

    found = None
    if divisors:
        xs, ys = mult(layer.w_out), mult(layer.h_out)
        xs, ys = xs[layer.w_out % xs == 0], ys[layer.h_out % ys == 0]
        if xs.size and ys.size:
            found = _search(layer, xs, ys, fixed, per_z, not free_z, fast_memory)
    if found is None:
        if divisors:
            logger.info("no tile that divides the output and is a multiple of e=%d fits %d words; "
                        "searching overhanging tiles", e, fast_memory)
        found = _search(layer, mult(layer.w_out), mult(layer.h_out), fixed, per_z, False, fast_memory)
    return found


def optimal_winograd_tiles(layer: ConvLayer, fast_memory: int, e: int = DEFAULT_WINOGRAD_E,
                           divisors: bool = True) -> TileChoice:
    """The Winograd F(e x e, r x r) tiling of least exact I/O that fits ``fast_memory`` words.

    ``x`` and ``y`` are multiples of ``e``; with ``divisors`` they also divide the output
    (when any such tile fits), else they may overhang the output by a partial Winograd tile.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> optimal_winograd_tiles(ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=(1, 1)), 600).tiling
    WinogradTiling(e=2, x=4, y=8, z=2)
    """
    _check_layer(layer)
    layer.check_winograd()
    e = limits.check_int("winograd e", e, limits.WINOGRAD_E)
    fast_memory = limits.check_int("fast_memory", fast_memory, limits.FAST_MEMORY_WORDS)
    divisors = limits.check_flag("divisors", divisors)
    r, n = layer.k_h, e + layer.k_h - 1

    def fixed(X, Y):
        return (Y + r - 1) * (X + r - 1)

    def per_z(X, Y):
        return r * r + 2 * (X // e) * (Y // e) * n * n

    found = winograd_search(layer, fast_memory, e, divisors, fixed, per_z)
    if found is None:
        need = winograd_footprint(layer, WinogradTiling(e, e, e, 1)).total
        raise InvalidInputError(f"fast memory of {fast_memory} words is too small: the smallest Winograd "
                         f"block (e={e}, one tile, z=1) needs {need} words")
    tiling = WinogradTiling(e, *found)
    return TileChoice("winograd", tiling, winograd_io(layer, tiling), winograd_footprint(layer, tiling),
                      fast_memory, _divisible(layer, *found),
                      winograd_continuous_optimum(layer, e, fast_memory))
