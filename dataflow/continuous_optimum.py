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
and ``P <= P_max = h_out w_out``; and a tile has at least one output channel and one
output position: ``z >= 1``, ``P >= 1``. The optimum is taken within that box (before
the floors, a small S gave ``z < 1`` and an I/O below that of any tile).

Principle. In log coordinates ``u = ln P``, ``v = ln z``,
``f = C_in (a e^-v + K e^-u)`` and ``g = c e^(u+v) + alpha a e^u + alpha K e^v`` are
positive sums of exponentials of linear forms: convex (``f`` strictly), so ``{g <= S}`` is
convex and, with the box ``0 <= u <= ln P_max``, ``0 <= v <= ln Z_max``, minimising ``f``
is a convex program with a unique solution (``proofs/test_optimality_conditions.py`` checks
the convexity and, on each of the four sides of the box, the signs of the KKT multipliers
in SymPy). ``f`` falls as ``P`` or ``z`` grows and ``g`` rises, so:

* ``g(P_max, Z_max) <= S`` (the whole layer fits one block): the corner
  ``P = P_max, z = Z_max`` (``bound_by = "layer"``);
* ``g(1, 1) > S``: not even one output position of one channel fits the model's memory;
  no point of the box does. The smallest tile ``P = z = 1`` is reported (``"smallest
  tile"``, with ``g > S``): the rectangle searches stage at least ``g`` words and find no
  tile either, but a dataflow that streams an operand (the run orders of
  :mod:`dataflow.runs`, weight-stationary) can fit a block in fewer words;
* otherwise ``g = S`` holds at the optimum (a point with ``g < S`` could grow ``P`` or
  ``z``: the floors never stop that). Along ``g = S``, ``P`` falls as ``z`` grows, and the
  box leaves ``z`` the interval ``[max(1, z(P_max)), min(Z_max, z(1))]`` (``z(P)`` the
  ``z`` on ``g = S``), non-empty between the two cases above. If the interior (Lagrange)
  point ``z*`` lies in it, it is the optimum (``"memory"``, ``x y = R_df z``). Above it,
  the optimum is its upper end (were that end slack, the point would be a local, hence by
  convexity the global and unique, optimum of the problem without it, which is the
  interior point: a contradiction): ``z = Z_max`` with ``P`` from ``g = S``
  (``"c_out"``), or, when ``Z_max`` leaves ``P < 1``, ``P = 1`` with ``z`` from ``g = S``
  (``"one position"``). Below it, the lower end: ``P = P_max`` with ``z`` from ``g = S``
  (``"spatial"``) or ``z = 1`` with ``P`` from ``g = S`` (``"one channel"``).

The end point lies on ``g = S`` within the box in exact arithmetic (that is how the
interval is made); it is clamped to the box only against rounding, and a value outside
it by more than rounding raises ``ArithmeticError`` rather than being reported.

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
>>> opt = direct_continuous_optimum(ConvLayer(1, 3, 16, 16, 8, 7, 7), 99)
>>> (opt.x, opt.y, opt.z), opt.bound_by        # the interior point has z = 0.74
((5.0, 5.0, 1.0), 'one channel')
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import sympy as sp

from iobound import limits
from iobound.layer import ConvLayer, takes_layer

__all__ = ["BOUND_BY", "ContinuousOptimum", "boundary_expressions", "continuous_optimum_expressions",
           "dataflow_reuse", "direct_continuous_optimum", "winograd_continuous_optimum"]

#: What fixes the optimum: the memory alone (the interior Lagrange point), the channel cap
#: z = Z_max with g = S, the spatial cap P = P_max with g = S, both caps (the layer fits),
#: a floor with g = S: one output channel (z = 1) or one output position (P = 1), or
#: both floors with g > S (not even the smallest tile fits the model's memory).
BOUND_BY = ("memory", "c_out", "spatial", "layer", "one channel", "one position", "smallest tile")

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
        whole; ``1 <= x <= w_out``, ``1 <= y <= h_out``, ``1 <= z <=`` (one group's)
        ``c_out``. ``x y = reuse * z`` when ``bound_by == "memory"``.
    reuse : float
        The dataflow's reuse ``R_df = K / a`` in the condition ``x y = R_df z``.
    io : float
        The halo-free model's total I/O (words) at this point, outputs included.
    bound_by : str
        One of :data:`BOUND_BY`: ``"memory"`` (the interior optimum, ``x y = R_df z``),
        ``"c_out"`` (z capped at c_out, P from the memory), ``"spatial"`` (``x y``
        capped at ``h_out w_out``, z from the memory), ``"layer"`` (both capped: the
        whole layer fits one block), ``"one channel"`` (z held at 1, P from the memory),
        ``"one position"`` (``x y`` held at 1, z from the memory) or ``"smallest tile"``
        (``x y = z = 1``, which needs more than S words in the model: no tile fits it).

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> opt = direct_continuous_optimum(ConvLayer(1, 4, 6, 6, 4, 3, 3, padding=1), 64)
    >>> opt.bound_by, opt.reuse, opt.x == opt.y, round(opt.z, 3), round(opt.io)
    ('memory', 9.0, True, 1.848, 767)
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


def _in_box(v: float, low: float, high: float, what: str) -> float:
    """``v`` clamped to ``[low, high]`` against rounding; ArithmeticError when it lies
    outside by more (impossible in exact arithmetic: module docstring)."""
    if not low * (1 - 1e-9) <= v <= high * (1 + 1e-9):
        raise ArithmeticError(f"the end point on g = S has {what}={v}, outside [{low}, {high}]")
    return min(max(float(v), float(low)), float(high))


def _boxed(a: float, k: float, c: float, alpha: float, s: int, p_max: int,
           z_max: int) -> tuple[float, float, str]:
    """``(P, z, bound_by)`` minimising f on ``g <= S``, ``1 <= P <= p_max``,
    ``1 <= z <= z_max`` (the case analysis of the module docstring; ``(1, 1)`` when no
    point has ``g <= S``)."""
    p_fn, z_fn, p_of_z, z_of_p = _numeric_optimum()
    if c * p_max * z_max + alpha * (a * p_max + k * z_max) <= s:
        return float(p_max), float(z_max), "layer"
    if c + alpha * (a + k) > s:       # no point of the box fits: the smallest tile
        return 1.0, 1.0, "smallest tile"
    p, z = p_fn(a, k, c, alpha, s), z_fn(a, k, c, alpha, s)
    z_at_one, z_at_p_max = z_of_p(a, k, c, alpha, s, 1), z_of_p(a, k, c, alpha, s, p_max)
    if z > min(z_max, z_at_one):      # above the interval of z: its upper end
        if z_max <= z_at_one:
            z, by = float(z_max), "c_out"
            p = p_of_z(a, k, c, alpha, s, z)
        else:
            p, z, by = 1.0, z_at_one, "one position"
    elif z < max(1, z_at_p_max):      # below it: its lower end
        if z_at_p_max >= 1:
            p, z, by = float(p_max), z_at_p_max, "spatial"
        else:
            z, by = 1.0, "one channel"
            p = p_of_z(a, k, c, alpha, s, z)
    else:
        return p, z, "memory"
    return _in_box(p, 1, p_max, "P"), _in_box(z, 1, z_max, "z"), by


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


@takes_layer
def direct_continuous_optimum(layer: ConvLayer, fast_memory: int, alpha: int = 1) -> ContinuousOptimum:
    """The halo-free continuous optimum of the direct dataflow (within the layer's box).

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> opt = direct_continuous_optimum(ConvLayer(1, 8, 64, 64, 64, 3, 3), 4096)
    >>> round(opt.x * opt.y / opt.z, 9) == opt.reuse == 9
    True
    """
    fast_memory = limits.check_int("fast_memory", fast_memory, limits.FAST_MEMORY_WORDS)
    alpha = limits.check_int("alpha", alpha, limits.TILE)
    a = layer.k_h * layer.k_w / dataflow_reuse(layer)
    return _optimum(layer, a, layer.k_h * layer.k_w, 1.0, alpha, fast_memory)


@takes_layer
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
    e = limits.check_winograd_e(e)
    fast_memory = limits.check_int("fast_memory", fast_memory, limits.FAST_MEMORY_WORDS)
    r = layer.k_h
    c = 2.0 * (e + r - 1) ** 2 / e ** 2
    return _optimum(layer, 1.0, r * r, c, 1.0, fast_memory)
