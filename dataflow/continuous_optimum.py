"""The continuous (halo-free, real-valued) optimum of the direct and Winograd dataflows.

Ignoring halos and border tiles, a block with spatial tile ``P = x y`` and ``z`` output
channels moves per output ``f(P, z) = C_in (a P + K z) / (P z)`` words and occupies
``g(P, z) = c P z + alpha (a P + K z)`` words on chip (the constants per algorithm are
in :mod:`dataflow.optimal_tiles`). Minimising ``f`` subject to ``g = S`` with Lagrange
multipliers, in SymPy, gives ``a P = K z``: the optimality condition ``x y = R_df z``.
:mod:`dataflow.optimal_tiles` searches the integer tiles around it (and re-exports these
names).

Examples
--------
>>> from iobound.layer import ConvLayer
>>> opt = direct_continuous_optimum(ConvLayer(1, 8, 64, 64, 64, 3, 3), 4096)
>>> round(opt.x * opt.y / opt.z, 9)
9.0
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import sympy as sp

from iobound.layer import ConvLayer

from .io_volume import takes_layer

__all__ = ["ContinuousOptimum", "continuous_optimum_expressions", "dataflow_reuse",
           "direct_continuous_optimum", "winograd_continuous_optimum"]

# Symbols of the derivation, declared once.
P, Z = sp.symbols("P z", positive=True)
LAM = sp.Symbol("lambda", real=True)  # negative at the optimum: f falls where g grows
A, K, C, ALPHA, S, C_IN = sp.symbols("a K c alpha S C_in", positive=True)


@dataclass(frozen=True)
class ContinuousOptimum:
    """Real-valued optimum of the halo-free model (square spatial tile ``x = y``).

    Attributes
    ----------
    x, y, z : float
        Tile sizes (``x y = reuse * z``).
    reuse : float
        The dataflow's reuse ``R_df = K / a`` in the condition ``x y = R_df z``.
    io : float
        The halo-free model's total I/O (words) at this point, outputs included.
    """

    x: float
    y: float
    z: float
    reuse: float
    io: float


@functools.lru_cache(maxsize=None)
def continuous_optimum_expressions() -> tuple[sp.Expr, sp.Expr]:
    """``(P*, z*)`` minimising ``f = C_in (a P + K z)/(P z)`` subject to ``g = S`` (SymPy).

    The Lagrange conditions ``grad f = lambda grad g`` eliminate lambda to one equation,
    which SymPy solves for ``P``; the constraint then fixes ``z``.

    Examples
    --------
    >>> p_opt, z_opt = continuous_optimum_expressions()
    >>> sp.simplify(A * p_opt - K * z_opt)
    0
    """
    f = C_IN * (A * P + K * Z) / (P * Z)
    g = C * P * Z + ALPHA * (A * P + K * Z) - S
    lagrange = [sp.diff(f, v) - LAM * sp.diff(g, v) for v in (P, Z)]
    lam = sp.solve(lagrange[0], LAM)[0]
    p_sols = [s for s in sp.solve(sp.numer(sp.together(lagrange[1].subs(LAM, lam))), P)
              if s.is_positive is not False]
    if len(p_sols) != 1:
        raise ArithmeticError(f"expected one positive stationary P, got {p_sols}")
    p_of_z = sp.simplify(p_sols[0])
    z_sols = [s for s in sp.solve(g.subs(P, p_of_z), Z) if s.is_negative is not True]
    z_pos = [s for s in z_sols if sp.simplify(s.subs({A: 1, K: 1, C: 1, ALPHA: 1, S: 8})) > 0]
    if len(z_pos) != 1:
        raise ArithmeticError(f"expected one positive z, got {z_sols}")
    z_opt = sp.simplify(z_pos[0])
    return sp.simplify(p_of_z.subs(Z, z_opt)), z_opt


@functools.lru_cache(maxsize=None)
def _numeric_optimum():
    p_opt, z_opt = continuous_optimum_expressions()
    args = (A, K, C, ALPHA, S)
    return sp.lambdify(args, p_opt, "math"), sp.lambdify(args, z_opt, "math")


def _axis_density(k: int, mu: int, d: int) -> int:
    return min(k, mu // math.gcd(mu, d))


@takes_layer
def dataflow_reuse(layer: ConvLayer) -> float:
    """``R_df = k_h k_w / (rho_h rho_w)``: the reuse in the dataflow's own optimum ``x y = R_df z``.

    Equals ``reuse_max`` for stride 1 and the paper's ``k_h k_w / mu^2`` when windows overlap.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> dataflow_reuse(ConvLayer(1, 3, 224, 224, 64, 7, 7, stride=(2, 2), padding=(3, 3)))
    12.25
    >>> dataflow_reuse(ConvLayer(1, 3, 56, 56, 64, 1, 1, stride=(2, 2)))
    1.0
    """
    a = (_axis_density(layer.k_h, layer.stride[0], layer.dilation[0])
         * _axis_density(layer.k_w, layer.stride[1], layer.dilation[1]))
    return layer.k_h * layer.k_w / a


def _optimum(layer: ConvLayer, a: float, k: float, c: float, alpha: float, s: int) -> ContinuousOptimum:
    p_fn, z_fn = _numeric_optimum()
    p, z = p_fn(a, k, c, alpha, s), z_fn(a, k, c, alpha, s)
    hwc = layer.n * layer.h_out * layer.w_out * layer.c_out
    # C_in of the model: the input channels one output reads (one group's; c_in when dense)
    io = hwc * layer.c_in_per_group * (a * p + k * z) / (p * z) + hwc
    side = math.sqrt(p)
    return ContinuousOptimum(x=side, y=side, z=z, reuse=k / a, io=io)


def direct_continuous_optimum(layer: ConvLayer, fast_memory: int, alpha: int = 1) -> ContinuousOptimum:
    """The halo-free continuous optimum of the direct dataflow.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> opt = direct_continuous_optimum(ConvLayer(1, 8, 64, 64, 64, 3, 3), 4096)
    >>> round(opt.x * opt.y / opt.z, 9) == opt.reuse == 9
    True
    """
    a = layer.k_h * layer.k_w / dataflow_reuse(layer)
    return _optimum(layer, a, layer.k_h * layer.k_w, 1.0, alpha, fast_memory)


def winograd_continuous_optimum(layer: ConvLayer, e: int, fast_memory: int) -> ContinuousOptimum:
    """The halo-free continuous optimum of the Winograd dataflow F(e x e, r x r).

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> opt = winograd_continuous_optimum(ConvLayer(1, 8, 64, 64, 64, 3, 3), 2, 4096)
    >>> round(opt.x * opt.y / opt.z, 9)
    9.0
    """
    layer.check_winograd()
    r = layer.k_h
    c = 2.0 * (e + r - 1) ** 2 / e ** 2
    return _optimum(layer, 1.0, r * r, c, 1.0, fast_memory)
