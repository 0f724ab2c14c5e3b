"""I/O lower bounds of Winograd F(e x e, r x r) convolution.

The DAG is the one of :func:`iobound.winograd_vertex_counts.winograd_vertex_count`. Its four
steps and the vertex-generation functions proven for it (proofs/test_winograd.py; the
DAG facts steps 2-4 rest on are checked on built DAGs in
proofs/test_winograd_composite_steps.py) go through the composite API:

1. input and kernel transforms (two separable passes each, as the DAG builder
   makes them): ``psi_1 = gamma k`` transformed entries P, J and
   ``phi_1 = gamma (n + 1)/n k`` vertices with the intermediate pass, where
   ``gamma = n^2 ceil(n/e)^2`` (a raw input lies in at most ``ceil(n/e)^2`` tile
   windows; in each it feeds at most n entries of ``B^T d``, each feeding at most
   n entries of P; a weight likewise feeds n of ``G g`` and n^2 of J);
2. element products: ``phi_2 = psi_2 = k sqrt(S) / 2`` (for each of the n^2
   frequencies a matrix multiply; Loomis-Whitney plus Cauchy-Schwarz with at most
   S output groups (b, tile, c_out), the minimum-set bound);
3. channel sums: ``phi_3 = psi_3 = k`` (binary trees: sums <= leaves);
4. output transform: ``phi_4 = e n S + S`` (following successors inside a
   partition set stays in one group (b, tile, c_out) and ends in the minimum
   set, so at most S groups, each with ``e n`` entries of ``A^T Pi``; outputs have
   no successors, so those of the set are in the minimum set).

T(S) is the composite API's ``"relaxed"`` maximum, a proven over-estimate.

``x_partition``: the segment argument of the direct X-partition bound, with the
operands of a segment's products bounded through the transform fan-out:
``Q >= sqrt(2) MACs / (n sqrt(gamma) sqrt(S)) - 4 S`` with MACs the element
products of full tiles (proofs/test_winograd.py).

Both bounds are valid but weak (gamma enters them). ``x_partition_chain``
(:mod:`iobound.winograd_chain`, proofs/test_winograd_chain.py) charges transformed
operands to their raw ancestors by a routing instead of the fan-out gamma and treats
each ``Pi[nu]`` as one accumulation chain: ``Q >= 2 MACs / (kappa sqrt(S)) - N + O - 2S``
with ``kappa = 1`` for F(2x2, 3x3) (larger on small images). Its leading term is
``2n / (e r kappa)`` times the paper's Thm 4.12 leading term ``W_out H_out C_out C_in
(e + r - 1) r / (e sqrt(S))``, 4/3 for F(2x2, 3x3); Thm 4.12 itself is reported for
reference only (it does not follow from the paper's lemmas, proofs/README.md, errata).

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=64, h_in=56, w_in=56, c_out=64, k_h=3, k_w=3, padding=(1, 1))
>>> v = winograd_bound_values(layer, 2, 1024)
>>> round(v["hong_kung_composite"]), round(v["compulsory"])
(16206, 438272)
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from . import limits
from .composite import CompositeAlgorithm, CompositeStep, composite_bound_expr
from .direct_bounds import _check_s
from .layer import ConvLayer, takes_layer
from .symbols import GAMMA, INPUTS, MACS, OUTPUTS, RR, WEIGHTS, X_IO, E, N_TILE, S, V, k
from .vertex_counts import direct_counts
from .winograd_vertex_counts import winograd_chain_count, winograd_counts, winograd_gamma, winograd_products_lower, winograd_vertex_count
from .winograd_chain import (C_IN, CHAIN_MIN_S, KAPPA, N_CHAINS, winograd_chain_details,
                             winograd_chain_expr, winograd_chain_leading_expr, winograd_layer_caps)

__all__ = ["winograd_composite", "winograd_T_expr", "winograd_bound_exprs",
           "winograd_bound_values", "winograd_leading_terms", "winograd_bound_details",
           "paper_thm_4_12_expr", "winograd_xpartition_segment_expr"]

#: Winograd output pixels x channels (W_out H_out C_out C_in), for Thm 4.12
HWCC = sp.Symbol("HWCC", positive=True)


def winograd_composite() -> CompositeAlgorithm:
    """The four steps of Winograd with the vertex-generation functions above.

    >>> [step.name for step in winograd_composite().steps]
    ['transforms', 'element products', 'channel sums', 'output transform']
    """
    return CompositeAlgorithm((
        CompositeStep("transforms", GAMMA * (N_TILE + 1) / N_TILE * k, GAMMA * k),
        CompositeStep("element products", k * sp.sqrt(S) / 2),
        CompositeStep("channel sums", k),
        CompositeStep("output transform", E * N_TILE * S + S),
    ), name="winograd")


@lru_cache(maxsize=None)
def winograd_T_expr() -> sp.Expr:
    """``T(S) = (3 + e n) S + gamma (n+1)/n S + (1 + gamma) S^(3/2)`` (relaxed maximum).

    >>> winograd_T_expr()
    S**(3/2)*gamma + S**(3/2) + S*e*n + S*gamma + S*gamma/n + 3*S
    """
    return winograd_composite().T_expr("relaxed")


def paper_thm_4_12_expr() -> sp.Expr:
    """The paper's Thm 4.12 leading term (reference only, not a proven bound here).

    >>> paper_thm_4_12_expr()
    HWCC*n*r/(sqrt(S)*e)
    """
    return HWCC * N_TILE * RR / (E * sp.sqrt(S))


@lru_cache(maxsize=None)
def winograd_bound_exprs() -> dict[str, sp.Expr]:
    """Method name -> SymPy expression (symbols S, gamma, e, n, V, I_used, W_used, O).

    >>> winograd_bound_exprs()["x_partition_chain"]   # below S = 9 its value at 9
    Max(0, 2*C_in*N_chains/(kappa*sqrt(Max(9, S))) - N_chains + O - 2*Max(9, S))
    """
    xpart = sp.simplify(winograd_xpartition_segment_expr().subs(X_IO, 4 * S))
    return {
        "hong_kung_composite": composite_bound_expr(winograd_T_expr()),
        "x_partition": sp.Max(0, xpart),
        "x_partition_chain": sp.Max(0, winograd_chain_expr().subs(S, sp.Max(S, CHAIN_MIN_S))),
        "compulsory": INPUTS + WEIGHTS + OUTPUTS,
    }


def winograd_xpartition_segment_expr() -> sp.Expr:
    """``Y (MACs / (n sqrt(gamma) ((2S + Y)/3)^(3/2)) - 1)`` for segments of Y I/Os.

    >>> winograd_xpartition_segment_expr()
    Y*(MACs/(sqrt(gamma)*n*(2*S/3 + Y/3)**(3/2)) - 1)
    """
    return X_IO * (MACS / (N_TILE * sp.sqrt(GAMMA) * ((2 * S + X_IO) / 3) ** sp.Rational(3, 2))
                   - 1)


@lru_cache(maxsize=None)
def winograd_leading_exprs() -> dict[str, sp.Expr]:
    """Leading terms: ours, in MACs = element products, and the paper's.

    >>> list(winograd_leading_exprs())
    ['hong_kung_composite', 'x_partition', 'x_partition_chain', 'paper_thm_4_12']
    """
    return {
        "hong_kung_composite": MACS / (sp.sqrt(2) * (1 + GAMMA) * sp.sqrt(S)),
        "x_partition": sp.sqrt(2) * MACS / (N_TILE * sp.sqrt(GAMMA) * sp.sqrt(S)),
        "x_partition_chain": winograd_chain_leading_expr(),
        "paper_thm_4_12": paper_thm_4_12_expr(),
    }


_ARGS = (S, GAMMA, V, MACS, INPUTS, WEIGHTS, OUTPUTS, HWCC, E, RR, N_TILE, KAPPA, N_CHAINS, C_IN)


@lru_cache(maxsize=None)
def _compiled() -> dict[str, callable]:
    out = {m: sp.lambdify(_ARGS, e, "math") for m, e in winograd_bound_exprs().items()}
    out.update({f"lead:{m}": sp.lambdify(_ARGS, e, "math")
                for m, e in winograd_leading_exprs().items()})
    return out


@lru_cache(maxsize=4096)
def _args(layer: ConvLayer, e: int) -> tuple:
    w = winograd_counts(layer, e)
    d = direct_counts(layer)
    v = winograd_vertex_count(layer, e)
    hwcc = layer.n * layer.h_out * layer.w_out * layer.c_out * layer.c_in
    return (float(winograd_gamma(layer, e)), float(v), float(winograd_products_lower(layer, e)),
            float(d.used_inputs), float(d.used_weights), float(d.outputs),
            float(hwcc), float(e), float(w.r), float(e + w.r - 1),
            winograd_layer_caps(layer, e).kappa, float(winograd_chain_count(layer, e)), float(layer.c_in))


@takes_layer
def winograd_bound_values(layer: ConvLayer, e: int, s: int) -> dict[str, float]:
    """Method name -> bound value (compiled).

    >>> from iobound.layer import ConvLayer
    >>> tiny = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> v = winograd_bound_values(tiny, 2, 64)   # a tiny layer: the weak bounds clamp at 0
    >>> v["hong_kung_composite"], v["x_partition"], round(v["x_partition_chain"]), v["compulsory"]
    (0.0, 0.0, 16, 432.0)
    """
    s = _check_s(s)
    # e checked here, not by the caches below: they compare keys by equality, so True or
    # 2.0 would be answered as 1 or 2 once those were cached
    args = (float(s),) + _args(layer, limits.check_winograd_e(e))
    fns = _compiled()
    return {m: float(fns[m](*args)) for m in winograd_bound_exprs()}


@takes_layer
def winograd_leading_terms(layer: ConvLayer, e: int, s: int) -> dict[str, float]:
    """Method name -> leading term value (``paper_thm_4_12`` for reference).

    >>> from iobound.layer import ConvLayer
    >>> tiny = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> t = winograd_leading_terms(tiny, 2, 64)
    >>> round(t["x_partition_chain"]), t["paper_thm_4_12"]   # 4/3 of Thm 4.12 for F(2x2, 3x3)
    (576, 432.0)
    """
    s = _check_s(s)
    args = (float(s),) + _args(layer, limits.check_winograd_e(e))  # checked before the cache
    fns = _compiled()
    return {m: float(fns[f"lead:{m}"](*args)) for m in winograd_leading_exprs()}


@takes_layer
def winograd_bound_details(layer: ConvLayer, e: int) -> dict[str, tuple[str, ...]]:
    """Method name -> assumptions, with this layer's numbers filled in.

    >>> from iobound.layer import ConvLayer
    >>> tiny = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> winograd_bound_details(tiny, 2)["x_partition"][-1]
    "MACs = 256 element products of full tiles (a lower count of the DAG's products)"
    """
    w = winograd_counts(layer, e)
    d = direct_counts(layer)
    n = e + w.r - 1
    game = ("red-blue pebble game (Hong & Kung 1981), recomputation allowed; I/O = loads + "
            "stores of words, inputs start in slow memory, outputs end there; S words of "
            "fast memory")
    return {
        "hong_kung_composite": (
            game,
            f"Winograd F({e}x{e}, {w.r}x{w.r}) DAG, n = {n}; transform coefficients are "
            "constants of the vertex operations (not vertices); every transformed value "
            "has at least one predecessor",
            "Thm 4.6 with 2S-partitions, T(S) = (3 + e n) S + gamma (n+1)/n S + (1 + gamma) "
            "S^(3/2) from the composite API's relaxed maximum, gamma = n^2 ceil(n/e)^2 = "
            f"{winograd_gamma(layer, e)}; proofs/test_winograd.py",
            f"|V| = {winograd_vertex_count(layer, e)} exact for the dataflow builder's DAG "
            "(separable transforms, zeros dropped, chains over c_in)",
            "the paper's Thm 4.12 leading term is not proven for this DAG and is reported "
            "only under leading_terms['paper_thm_4_12']",
        ),
        "x_partition": (
            game,
            "segments of Y = 4S I/Os, each product charged to its useful computation; per "
            "segment the products are <= sqrt(|P||J||C|) (Loomis-Whitney per frequency, "
            "Cauchy-Schwarz over frequencies) with |P| <= gamma x (inputs, B^T d, P entries red "
            "at its start or loaded), |J| <= n^2 x (weights, G g, J entries likewise), |C| "
            "groups (b, tile, c_out) <= red at its end + stores; proofs/test_winograd.py",
            f"Q >= sqrt(2) MACs / (n sqrt(gamma) sqrt(S)) - 4 S, clamped at 0; gamma = "
            f"{winograd_gamma(layer, e)}, n = {n}",
            f"MACs = {winograd_products_lower(layer, e)} element products of full tiles (a "
            "lower count of the DAG's products)",
        ),
        "x_partition_chain": (game,) + winograd_chain_details(layer, e),
        "compulsory": (
            game,
            f"any DAG computing the convolution loads every used input ({d.used_inputs}) "
            f"and weight ({d.used_weights}) once and stores every output ({d.outputs}) once",
        ),
    }
