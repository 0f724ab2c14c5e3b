"""The continuous (halo-free, real-valued) optimum of the direct and Winograd dataflows.

Ignoring halos and border tiles, a block with spatial tile ``P = x y`` and ``z`` output
channels moves per output ``f(P, z) = C_in (a P + K z) / (P z)`` words and occupies
``g(P, z) = c P z + alpha (a P + K z)`` words on chip (the constants per algorithm are
in :mod:`dataflow.optimal_tiles`). Minimising ``f`` subject to ``g = S`` with Lagrange
multipliers, in SymPy, gives ``a P = K z``: the optimality condition ``x y = R_df z``.
:mod:`dataflow.optimal_tiles` searches the integer tiles around it (and re-exports these
names).

A tile cannot exceed the layer: ``z <= Z_max`` (the layer's ``c_out``; one group's
``c_out / groups`` for a grouped layer, which is tiled per group, :mod:`dataflow.grouped`)
and ``P <= P_max = h_out w_out``. The optimum is taken within that box.

Principle. In log coordinates ``u = ln P``, ``v = ln z``,
``f = C_in (a e^-v + K e^-u)`` and ``g = c e^(u+v) + alpha a e^u + alpha K e^v`` are
positive sums of exponentials of linear forms: convex (``f`` strictly), so ``{g <= S}`` is
convex and, with the box ``u <= ln P_max``, ``v <= ln Z_max``, minimising ``f`` is a convex
program with a unique solution (``proofs/test_optimality_conditions.py`` checks the
convexity and, on a cap, the signs of the KKT multipliers in SymPy). ``f`` falls as ``P`` or ``z`` grows and ``g`` rises, so:

* ``g(P_max, Z_max) <= S`` (the whole layer fits one block): the corner
  ``P = P_max, z = Z_max`` (``bound_by = "layer"``);
* otherwise ``g = S`` holds at the optimum. If the interior (Lagrange) point lies in the
  box, it is the optimum (``"memory"``, ``x y = R_df z``). If it breaks ``z <= Z_max``,
  the optimum has ``z = Z_max`` (were that cap slack there, the point would be a local,
  hence by convexity the global and unique, optimum of the problem without it, which is
  the interior point: a contradiction) and ``P`` from ``g = S`` (``"c_out"``);
  symmetrically ``P = P_max`` and ``z`` from ``g = S`` (``"spatial"``). Both cannot break:
  then ``g(P_max, Z_max) < g(P*, z*) = S``, the first case.

``P`` from ``g = S`` at ``z = Z_max`` is ``(S - alpha K Z_max) / (c Z_max + alpha a)``,
which falls with ``z``; it is used only when ``Z_max < z*``, so it exceeds ``P* > 0`` and
is positive (likewise ``z`` at ``P_max``), and it is at most ``P_max`` because
``g(P_max, Z_max) > S``. So the cap point is always a valid tile: it is clamped to the box
only against rounding, and a non-positive value (impossible in exact arithmetic) raises
``ArithmeticError`` rather than being reported.

The spatial tile is reported as ``x = y = sqrt(P)`` when that fits both axes, else as
the smaller axis whole and the other ``P`` divided by it (``x <= w_out``, ``y <= h_out``).

Examples
--------
>>> from iobound.layer import ConvLayer
>>> opt = direct_continuous_optimum(ConvLayer(1, 8, 64, 64, 64, 3, 3), 4096)
>>> round(opt.x * opt.y / opt.z, 9), opt.bound_by
(9.0, 'memory')
>>> opt = direct_continuous_optimum(ConvLayer(1, 8, 64, 64, 8, 3, 3), 4096)
>>> opt.z, opt.bound_by                        # the interior point has z = 20.36
(8.0, 'c_out')
>>> opt = direct_continuous_optimum(ConvLayer(1, 8, 10, 10, 8, 3, 3), 4096)
>>> (opt.x, opt.y, opt.z), opt.bound_by        # 8 x 8 x 8 outputs fit one block
((8.0, 8.0, 8.0), 'layer')
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import sympy as sp

from iobound.layer import ConvLayer

from .io_volume import takes_layer

__all__ = ["BOUND_BY", "ContinuousOptimum", "boundary_expressions", "continuous_optimum_expressions",
           "dataflow_reuse", "direct_continuous_optimum", "winograd_continuous_optimum"]

#: What fixes the optimum: the memory alone (the interior Lagrange point), the channel cap
#: z = Z_max with g = S, the spatial cap P = P_max with g = S, or both caps (the layer fits).
BOUND_BY = ("memory", "c_out", "spatial", "layer")

# Symbols of the derivation, declared once.
P, Z = sp.symbols("P z", positive=True)
LAM = sp.Symbol("lambda", real=True)  # negative at the optimum: f falls where g grows
A, K, C, ALPHA, S, C_IN = sp.symbols("a K c alpha S C_in", positive=True)


@dataclass(frozen=True)
class ContinuousOptimum:
    """Real-valued optimum of the halo-free model within the layer's box.

    Attributes
    ----------
    x, y, z : float
        Tile sizes: ``x = y = sqrt(P)`` when that fits both axes, else the smaller axis
        whole; ``x <= w_out``, ``y <= h_out``, ``z <=`` (one group's) ``c_out``.
        ``x y = reuse * z`` when ``bound_by == "memory"``.
    reuse : float
        The dataflow's reuse ``R_df = K / a`` in the condition ``x y = R_df z``.
    io : float
        The halo-free model's total I/O (words) at this point, outputs included.
    bound_by : str
        One of :data:`BOUND_BY`: ``"memory"`` (the interior optimum, ``x y = R_df z``),
        ``"c_out"`` (z capped at c_out, P from the memory), ``"spatial"`` (``x y``
        capped at ``h_out w_out``, z from the memory) or ``"layer"`` (both capped: the
        whole layer fits one block).
    """

    x: float
    y: float
    z: float
    reuse: float
    io: float
    bound_by: str = "memory"


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
def boundary_expressions() -> tuple[sp.Expr, sp.Expr]:
    """``(P on g = S as a function of z, z on g = S as a function of P)`` (SymPy).

    Where the optimum lies when a cap binds: ``z = Z_max`` and ``P`` from the first, or
    ``P = P_max`` and ``z`` from the second.

    Examples
    --------
    >>> p_of_z, z_of_p = boundary_expressions()
    >>> p_of_z
    (-K*alpha*z + S)/(a*alpha + c*z)
    >>> sp.simplify(p_of_z.subs(Z, z_of_p) - P)
    0
    """
    g = C * P * Z + ALPHA * (A * P + K * Z) - S
    (p_of_z,), (z_of_p,) = sp.solve(g, P), sp.solve(g, Z)
    return sp.simplify(p_of_z), sp.simplify(z_of_p)


@functools.lru_cache(maxsize=None)
def _numeric_optimum():
    p_opt, z_opt = continuous_optimum_expressions()
    p_of_z, z_of_p = boundary_expressions()
    args = (A, K, C, ALPHA, S)
    return (sp.lambdify(args, p_opt, "math"), sp.lambdify(args, z_opt, "math"),
            sp.lambdify(args + (Z,), p_of_z, "math"), sp.lambdify(args + (P,), z_of_p, "math"))


def _boxed(a: float, k: float, c: float, alpha: float, s: int, p_max: int,
           z_max: int) -> tuple[float, float, str]:
    """``(P, z, bound_by)`` minimising f on ``g <= S``, ``P <= p_max``, ``z <= z_max``
    (the case analysis of the module docstring)."""
    p_fn, z_fn, p_of_z, z_of_p = _numeric_optimum()
    if c * p_max * z_max + alpha * (a * p_max + k * z_max) <= s:
        return float(p_max), float(z_max), "layer"
    p, z = p_fn(a, k, c, alpha, s), z_fn(a, k, c, alpha, s)
    if z > z_max:
        p, z, by = min(p_of_z(a, k, c, alpha, s, z_max), p_max), float(z_max), "c_out"
    elif p > p_max:
        p, z, by = float(p_max), min(z_of_p(a, k, c, alpha, s, p_max), z_max), "spatial"
    else:
        return p, z, "memory"
    if not (p > 0 and z > 0):   # impossible in exact arithmetic (module docstring)
        raise ArithmeticError(f"no positive tile on g = S at the cap: P={p}, z={z}")
    return p, z, by


def _spatial(p: float, h_out: int, w_out: int) -> tuple[float, float]:
    """``(x, y)`` with ``x y = p``: square when it fits, else the smaller axis whole."""
    side = math.sqrt(p)
    if side <= min(h_out, w_out):
        return side, side
    if w_out <= h_out:
        return float(w_out), min(p / w_out, float(h_out))
    return min(p / h_out, float(w_out)), float(h_out)


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
    # tiles are per group (dataflow.grouped): z <= one group's c_out
    p, z, by = _boxed(a, k, c, alpha, s, layer.h_out * layer.w_out, layer.c_out_per_group)
    hwc = layer.n * layer.h_out * layer.w_out * layer.c_out
    # C_in of the model: the input channels one output reads (one group's; c_in when dense)
    io = hwc * layer.c_in_per_group * (a * p + k * z) / (p * z) + hwc
    x, y = _spatial(p, layer.h_out, layer.w_out)
    return ContinuousOptimum(x=x, y=y, z=z, reuse=k / a, io=io, bound_by=by)


def direct_continuous_optimum(layer: ConvLayer, fast_memory: int, alpha: int = 1) -> ContinuousOptimum:
    """The halo-free continuous optimum of the direct dataflow (within the layer's box).

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
    """The halo-free continuous optimum of the Winograd dataflow F(e x e, r x r) (within the
    layer's box; the model ignores that x and y are multiples of e).

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
