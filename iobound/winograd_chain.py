"""The Winograd chain X-partition bound: ``Q >= 2 MACs / (kappa sqrt(S)) - N + O - 2 S`` (S >= 9).

For the builder's DAG (:mod:`dataflow.dag_winograd`): every ``Pi[nu]`` of a (batch, tile,
c_out) is one accumulation chain over the input channels (``N`` chains, ``MACs = c_in N``
element products), transforms as the builder makes them (two separable passes, zeros
dropped). Any schedule, recomputation allowed. The proof (proofs/test_winograd_chain.py):

1. Trace. From the first computation of every ``Pi``, follow the values back along its
   chain: one compute event per product and partial sum (``s_(k-1)`` before ``s_k``).
2. Segments. Cut the moves after every ``2S``-th *virtual load*: a load, or the traced
   event of a chain's first sum (its "fresh" start; one per chain, ``N`` in all). So
   ``L + N >= 2S (h - 1)`` for ``h`` segments. Charge each product to the segment of its
   parent sum's traced event; the charged sums of a chain in a segment form a run.
3. Start budget. A charged product computed in the segment needs its operands red; a
   used ``P`` entry was red at the start, loaded, or computed in the segment from red
   predecessors, so the ``P`` entries of frequency ``nu`` it uses are at most the routed
   loads of the start-budget vertices on the input side (:mod:`iobound.winograd_routing`):
   ``a_nu <= cap_in1 |D_in|``, ``sum a_nu <= cap_in |D_in|``; kernels alike
   (``b_nu <= |D_w|``, ``sum b_nu <= cap_w |D_w|``). A charged product computed
   earlier is itself in the budget (``P'``), a run that does not start its chain needs
   the chain's previous sum (``c_n``). All distinct: ``|D_in| + |D_w| + c_n + P' <= S +
   loads``; with the ``f`` fresh runs, ``|D_in| + |D_w| + c + P' <= S + L_j + f_j <= 3S``
   for the ``c`` chains touched.
4. Loomis-Whitney per frequency (products of frequency nu: (c_in, tile) x (c_out, c_in)
   x (tile, c_out)) and Cauchy-Schwarz over frequencies: computed products
   ``<= sqrt(c) sqrt(sum_nu a_nu b_nu) <= kappa sqrt(|D_in| |D_w| c)``. With one routing
   per frequency for both sides, ``sum_nu a_nu b_nu <= sum_(v, w) sum_nu load_nu(v)
   kload_nu(w) <= cross |D_in| |D_w|``; also ``<= cap_in1 cap_w`` and ``<= cap_in`` times it.
   ``kappa^2 = min(cross, cap_in1 cap_w, cap_in)``: 1 for F(2x2, 3x3) (a routing where
   every (input, weight) pair shares at most one unit of charge).
5. Per segment: ``X <= kappa sqrt(c) (3S - c) / 2 <= kappa S^(3/2)`` (incoming products
   never beat an operand once ``kappa sqrt(S) >= 3``, i.e. S >= 9).
6. ``MACs <= h kappa S^(3/2)`` gives ``L + N >= 2 MACs / (kappa sqrt S) - 2S``, and
   every output is stored at least once: ``Q = L + St >= ... - N + O``.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=256, h_in=56, w_in=56, c_out=256, k_h=3, k_w=3, padding=(1, 1))
>>> round(winograd_chain_bound(layer, 2, 12290))
12397958
"""

from __future__ import annotations

import math
from functools import lru_cache

import sympy as sp

from .direct_bounds import _check_s
from .layer import ConvLayer, takes_layer
from .limits import check_winograd_e
from .symbols import OUTPUTS, S
from .vertex_counts import direct_counts
from .winograd_vertex_counts import winograd_chain_count
from .winograd_routing import WinogradCaps, winograd_caps

__all__ = ["KAPPA", "N_CHAINS", "C_IN", "CHAIN_MIN_S", "winograd_chain_expr", "winograd_chain_leading_expr",
           "winograd_layer_caps", "winograd_chain_bound", "winograd_chain_details"]

#: The Loomis-Whitney constant of step 4
KAPPA = sp.Symbol("kappa", positive=True)
#: Channel-sum chains (Pi vertices) of the DAG
N_CHAINS = sp.Symbol("N_chains", positive=True)
#: Input channels (products per chain)
C_IN = sp.Symbol("C_in", positive=True)
#: Step 5 needs kappa sqrt(S) >= 3; kappa >= 1 always, so S >= 9 suffices. Below, the value at 9.
CHAIN_MIN_S = 9


def winograd_chain_expr() -> sp.Expr:
    """``2 C_in N / (kappa sqrt(S)) - N + O - 2 S`` (MACs = C_in N) for S >= CHAIN_MIN_S (not clamped).

    >>> winograd_chain_expr()
    2*C_in*N_chains/(sqrt(S)*kappa) - N_chains + O - 2*S
    """
    return 2 * C_IN * N_CHAINS / (KAPPA * sp.sqrt(S)) - N_CHAINS + OUTPUTS - 2 * S


def winograd_chain_leading_expr() -> sp.Expr:
    """The leading term ``2 MACs / (kappa sqrt(S))``, MACs = C_in N.

    >>> winograd_chain_expr() - winograd_chain_leading_expr()   # what the leading term leaves out
    -N_chains + O - 2*S
    """
    return 2 * C_IN * N_CHAINS / (KAPPA * sp.sqrt(S))


@takes_layer
def winograd_layer_caps(layer: ConvLayer, e: int) -> WinogradCaps:
    """The routing caps of this layer's DAG (:func:`iobound.winograd_routing.winograd_caps`).

    >>> tiny = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> caps = winograd_layer_caps(tiny, 2)
    >>> round(caps.cap_in, 6), round(caps.kappa, 6)
    (4.0, 1.0)
    """
    layer.check_winograd()
    return _layer_caps(layer, check_winograd_e(e))


@lru_cache(maxsize=4096)
def _layer_caps(layer: ConvLayer, e: int) -> WinogradCaps:
    return winograd_caps(e, layer.k_h, layer.padding, (layer.h_in, layer.w_in),
                         layer.winograd_tiles(e))


@takes_layer
def winograd_chain_bound(layer: ConvLayer, e: int, s: int) -> float:
    """The bound's value (clamped at 0; for S < 9 its value at 9).

    The symbolic form is :func:`winograd_chain_expr`; this evaluates the same formula.

    >>> tiny = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> round(winograd_chain_bound(tiny, 2, 64)), round(winograd_chain_bound(tiny, 2, 2))
    (16, 1086)
    >>> winograd_chain_bound(tiny, 2, 2) == winograd_chain_bound(tiny, 2, 9)   # S < 9: at 9
    True
    """
    s = _check_s(s)
    s = max(float(s), CHAIN_MIN_S)
    n = winograd_chain_count(layer, e)
    kappa = winograd_layer_caps(layer, e).kappa
    value = 2 * layer.c_in * n / (kappa * math.sqrt(s)) - n + direct_counts(layer).outputs - 2 * s
    return max(0.0, value)


@takes_layer
def winograd_chain_details(layer: ConvLayer, e: int) -> tuple[str, ...]:
    """The assumptions, with this layer's numbers.

    >>> tiny = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> winograd_chain_details(tiny, 2)[2].split("; ")[1]
    'N = 576 chains, MACs = c_in N = 2304'
    """
    caps = winograd_layer_caps(layer, e)
    n = winograd_chain_count(layer, e)
    return (
        f"the builder's Winograd F({e}x{e}, {layer.k_h}x{layer.k_h}) DAG: every Pi[nu] of a "
        "(batch, tile, c_out) is one accumulation chain over c_in (any channel order); "
        "separable two-pass transforms, zeros dropped; any schedule, recomputation allowed",
        "segments of 2S loads + fresh chain starts; per frequency Loomis-Whitney, transformed "
        "operands charged to their start-budget ancestors by a fixed routing; "
        "proofs/test_winograd_chain.py",
        f"kappa^2 = min(cross, cap_in1 cap_w, cap_in) = min({caps.cross:.4f}, "
        f"{caps.cap_in1:.4f} x {caps.cap_w:.4f}, {caps.cap_in:.4f}); N = {n} chains, MACs = c_in N = {layer.c_in * n}",
        "Q >= 2 MACs / (kappa sqrt S) - N + O - 2S for S >= 9 (its value at 9 below), clamped at 0",
    )
