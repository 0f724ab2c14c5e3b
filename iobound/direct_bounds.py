"""I/O lower bounds of direct convolution: Hong-Kung composite, X-partition, compulsory.

All bounds count loads plus stores of words between slow and fast memory in
the red-blue pebble game (inputs start blue, outputs end blue, recomputation
allowed) with S words of fast memory, on the direct DAG of
:mod:`iobound.vertex_counts`. The reuse factor is ``R = layer.reuse_max``: the
proofs (proofs/README.md) need the *maximum* number of windows that read one
input, not the paper's average ``k_h k_w / mu^2``.

* ``hong_kung_composite``: paper Thm 4.6/4.9, ``S (|V| / T(2S) - 1)`` with
  Lemma 4.8's ``T(S) = 4 S sqrt(R S) + S - 1``, obtained from the composite API
  with the paper's phi/psi; leading term ``MACs / (4 sqrt(2 R S))``.
* ``x_partition``: beyond the paper, ``sqrt(2) MACs / sqrt(R S) - 4 S`` (segments
  of 4S I/Os; proofs/test_x_partition.py); leading term ``sqrt(2) MACs/sqrt(R S)``.
* ``x_partition_chain``: for the chain summation of our DAG (every output one
  accumulation chain, its terms in any order), ``2 W / sqrt(S) - O/2 - 2 S`` for S >= 9 (its value at 9 below),
  with ``W = sum_p 1/sqrt(T_c(p))`` the per-class weighted products
  (:mod:`iobound.reuse_classes`; ``W >= MACs / sqrt(R_max)``) and O the outputs;
  segments of 2S loads charging operands to the start budget, each store worth a quarter
  of a fresh chain's gain (proofs/test_x_partition_chain.py);
  leading term ``2 W / sqrt(S)``, the constant 2 of Smith et al. for matrix multiply.
  Reported as the larger of that form and ``2 W / sqrt(S) - O/8 - 17 S/8`` (S >= 11): the
  same segments with one shared fast memory at each segment boundary (partial sums kept
  there are not operands of the next segment) and a potential of 1/16 per kept partial
  sum (proofs/test_x_partition_chain_shared.py).
* ``compulsory``: used inputs + used weights + outputs.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=64, h_in=56, w_in=56, c_out=64, k_h=3, k_w=3, padding=(1, 1))
>>> v = direct_bound_values(layer, 12288)
>>> round(v["hong_kung_composite"]), round(v["x_partition"]), round(v["compulsory"])
(47688, 430835, 438272)
>>> round(v["x_partition_chain"])
627604
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from . import limits
from .composite import CompositeAlgorithm, CompositeStep, composite_bound_expr
from .layer import ConvLayer, takes_layer
from .reuse_classes import weighted_products
from .symbols import INPUTS, MACS, OUTPUTS, WEIGHTS, W_CLASS, R, S, V, X_IO, k
from .vertex_counts import direct_counts

__all__ = ["direct_composite", "direct_T_expr", "direct_bound_exprs", "direct_bound_values",
           "direct_leading_terms", "direct_bound_details", "xpartition_segment_expr",
           "chain_bound_expr", "CHAIN_MIN_S", "chain_shared_bound_expr", "CHAIN_SHARED_MIN_S"]


def direct_composite(paper: bool = True) -> CompositeAlgorithm:
    """The two-step composite form of direct convolution (products, then sums).

    ``paper=True``: Lemma 4.8's ``phi_1(k) = 2 S sqrt(R k)``, ``psi_1 = phi_1``,
    ``phi_2(k) = k - 1``. ``paper=False``: the tighter ``phi_1(k) = k sqrt(R S)/2``
    proven in proofs/test_direct_composite.py (T four times smaller).

    >>> direct_composite().name, direct_composite(paper=False).name
    ('direct (paper)', 'direct (tight)')
    >>> [step.name for step in direct_composite().steps]
    ['products', 'sums']
    """
    paper = limits.check_flag("paper", paper)
    phi1 = 2 * S * sp.sqrt(R * k) if paper else k * sp.sqrt(R * S) / 2
    return CompositeAlgorithm((CompositeStep("products", phi1), CompositeStep("sums", k - 1)),
                              name="direct (paper)" if paper else "direct (tight)")


@lru_cache(maxsize=None)
def direct_T_expr(paper: bool = True) -> sp.Expr:
    """T(S): ``4 S sqrt(R S) + S - 1`` (paper) or ``S sqrt(R S) + S - 1`` (tight).

    >>> direct_T_expr(), direct_T_expr(paper=False)
    (4*sqrt(R)*S**(3/2) + S - 1, sqrt(R)*S**(3/2) + S - 1)
    """
    return direct_composite(paper).T_expr("vertex")


def xpartition_segment_expr() -> sp.Expr:
    """``Y (MACs / (sqrt(R) ((2S + Y)/3)^(3/2)) - 1)``: the bound for segments of Y I/Os.

    >>> xpartition_segment_expr()
    Y*(MACs/(sqrt(R)*(2*S/3 + Y/3)**(3/2)) - 1)
    """
    return X_IO * (MACS / (sp.sqrt(R) * ((2 * S + X_IO) / 3) ** sp.Rational(3, 2)) - 1)


#: The chain bound's proof needs S >= 9 (proofs/test_x_partition_chain.py); below, its value at 9.
CHAIN_MIN_S = 9


def chain_bound_expr() -> sp.Expr:
    """``2 W_c / sqrt(S) - O/2 - 2 S``: the chain X-partition bound for S >= CHAIN_MIN_S.

    >>> chain_bound_expr()
    -O/2 - 2*S + 2*W_c/sqrt(S)
    """
    return 2 * W_CLASS / sp.sqrt(S) - OUTPUTS / 2 - 2 * S


#: The shared-boundary chain bound's proof needs S >= 11 (proofs/test_x_partition_chain_shared.py).
CHAIN_SHARED_MIN_S = 11


def chain_shared_bound_expr() -> sp.Expr:
    """``2 W_c / sqrt(S) - O/8 - 17 S/8``: the shared-boundary chain bound for S >= CHAIN_SHARED_MIN_S.

    >>> chain_shared_bound_expr()
    -O/8 - 17*S/8 + 2*W_c/sqrt(S)
    """
    return 2 * W_CLASS / sp.sqrt(S) - OUTPUTS / 8 - sp.Rational(17, 8) * S


@lru_cache(maxsize=None)
def direct_bound_exprs() -> dict[str, sp.Expr]:
    """Method name -> SymPy expression (in S, R, V, MACs, I_used, W_used, O).

    >>> exprs = direct_bound_exprs()
    >>> list(exprs)
    ['hong_kung_composite', 'x_partition', 'x_partition_chain', 'compulsory']
    >>> exprs["compulsory"]
    I_used + O + W_used
    """
    xpart = sp.simplify(xpartition_segment_expr().subs(X_IO, 4 * S))
    return {
        "hong_kung_composite": composite_bound_expr(direct_T_expr(True)),
        "x_partition": sp.Max(0, xpart),
        # below S = 9 the value at 9 (more red pebbles never cost I/O): non-increasing in S
        "x_partition_chain": sp.Max(0, chain_bound_expr().subs(S, sp.Max(S, CHAIN_MIN_S)),
                                    chain_shared_bound_expr().subs(S, sp.Max(S, CHAIN_SHARED_MIN_S))),
        "compulsory": INPUTS + WEIGHTS + OUTPUTS,
    }


@lru_cache(maxsize=None)
def direct_leading_exprs() -> dict[str, sp.Expr]:
    """Method name -> leading term (large layer, large S).

    >>> direct_leading_exprs()["x_partition_chain"]
    2*W_c/sqrt(S)
    """
    return {
        "hong_kung_composite": MACS / (4 * sp.sqrt(2 * R * S)),
        "x_partition": sp.sqrt(2) * MACS / sp.sqrt(R * S),
        "x_partition_chain": 2 * W_CLASS / sp.sqrt(S),
    }


_ARGS = (S, R, V, MACS, INPUTS, WEIGHTS, OUTPUTS, W_CLASS)


@lru_cache(maxsize=None)
def _compiled() -> dict[str, callable]:
    out = {m: sp.lambdify(_ARGS, e, "math") for m, e in direct_bound_exprs().items()}
    out.update({f"lead:{m}": sp.lambdify(_ARGS, e, "math")
                for m, e in direct_leading_exprs().items()})
    return out


def _args(layer: ConvLayer, s: int) -> tuple:
    c = direct_counts(layer)
    return (float(s), float(layer.reuse_max), float(c.vertices), float(c.products),
            float(c.used_inputs), float(c.used_weights), float(c.outputs),
            float(weighted_products(layer)))


def _check_s(s) -> int:
    """S as an int: a whole number of words in :data:`iobound.limits.FAST_MEMORY_WORDS`
    (the pebble game's red pebbles, as :func:`iobound.report.bound_report` takes them);
    else InvalidInputError naming S."""
    return limits.check_int("fast memory S (words)", s, limits.FAST_MEMORY_WORDS)


@takes_layer
def direct_bound_values(layer: ConvLayer, s: int) -> dict[str, float]:
    """Method name -> bound value (compiled expressions, no symbolic work).

    >>> from iobound.layer import ConvLayer
    >>> tiny = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> v = direct_bound_values(tiny, 64)   # a tiny layer: the composite bound clamps at 0
    >>> v["hong_kung_composite"], round(v["x_partition_chain"], 2), v["compulsory"]
    (0.0, 187.33, 432.0)
    """
    args = _args(layer, _check_s(s))
    fns = _compiled()
    return {m: float(fns[m](*args)) for m in direct_bound_exprs()}


@takes_layer
def direct_leading_terms(layer: ConvLayer, s: int) -> dict[str, float]:
    """Method name -> leading term value.

    >>> from iobound.layer import ConvLayer
    >>> tiny = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> {m: round(t, 1) for m, t in direct_leading_terms(tiny, 64).items()}
    {'hong_kung_composite': 30.2, 'x_partition': 241.4, 'x_partition_chain': 341.3}
    """
    args = _args(layer, _check_s(s))
    fns = _compiled()
    return {m: float(fns[f"lead:{m}"](*args)) for m in direct_leading_exprs()}


@takes_layer
def direct_bound_details(layer: ConvLayer) -> dict[str, tuple[str, ...]]:
    """Method name -> assumptions, with this layer's numbers filled in.

    >>> from iobound.layer import ConvLayer
    >>> tiny = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> direct_bound_details(tiny)["x_partition"][-1]
    'MACs = 4096 real products (padding taps excluded)'
    """
    c = direct_counts(layer)
    game = ("red-blue pebble game (Hong & Kung 1981), recomputation allowed; I/O = loads + "
            "stores of words, inputs start in slow memory, outputs end there; S words of "
            "fast memory")
    reuse = (f"R = R_max = {layer.reuse_max} (max windows sharing one input; the paper's "
             f"average k_h k_w/mu^2 = {layer.reuse_paper:g} is not what the proofs support)")
    grouped = () if layer.groups == 1 else (
        f"groups = {layer.groups}: the DAG is {layer.groups} disjoint dense DAGs of "
        f"{layer.c_in_per_group} -> {layer.c_out_per_group} channels; Loomis-Whitney per group, "
        "summed by Cauchy-Schwarz into the same segment inequality (proofs/test_grouped_bounds.py)",)
    return {
        "hong_kung_composite": (
            game,
            "Thm 4.6 with 2S-partitions: Q >= S (|V| / T(2S) - 1), clamped at 0",
            "T(S) = 4 S sqrt(R S) + S - 1 (Lemma 4.8, paper's phi_1 = 2 S sqrt(R k)); "
            "proofs/test_lemma_4_8.py, proofs/test_direct_composite.py",
            reuse,
            f"|V| = {c.vertices} exact for the direct DAG (used inputs {c.used_inputs}, "
            f"used weights {c.used_weights}, {c.products} real products, binary "
            "summation trees; taps on padding are not vertices)",
        ) + grouped,
        "x_partition": (
            game,
            "segments of Y = 4S I/Os; per segment the products are <= sqrt(R |A||B||C|) "
            "with |A|+|B|+|C| <= 2S + Y (operands red at its start or loaded, output "
            "trees red at its end or stored); proofs/test_x_partition.py",
            "Q >= sqrt(2) MACs / sqrt(R S) - 4 S, clamped at 0; the constant 2 of "
            "Kwasniewski et al. is not claimed",
            reuse,
            f"MACs = {c.products} real products (padding taps excluded)",
        ) + grouped,
        "x_partition_chain": (
            game,
            "chain summation: every output is one accumulation chain s_k = s_(k-1) + p_k "
            "(its terms in any order, as our DAG builds it); not split or tree reductions",
            "segments of 2S loads; products charged to the segment of their parent sum; per "
            "segment inputs, weights, incoming partial sums and products <= S + loads, "
            "outputs touched <= S + stores; outputs started fresh <= O in all; every "
            "output stored at least once; "
            "proofs/test_x_partition_chain.py",
            f"Q >= 2 W / sqrt(S) - O/2 - 2 S for S >= {CHAIN_MIN_S} and, with one shared fast memory at "
            "each segment boundary (a partial sum kept there is no operand of the next segment; "
            "potential 1/16 per kept partial sum), Q >= 2 W / sqrt(S) - O/8 - 17 S/8 for S >= "
            f"{CHAIN_SHARED_MIN_S} (proofs/test_x_partition_chain_shared.py); the larger of the two, each "
            "below its least S at its value there (valid as I/O never grows with S), clamped at 0",
            f"per-class reuse: W = sum over products of 1/sqrt(T_c) = {weighted_products(layer):.6g} "
            f"(T_c taps reading the input's residue class; R_eff = (MACs/W)^2 = "
            f"{(c.products / weighted_products(layer)) ** 2 if c.products else 0:.4g}, R_max = "
            f"{layer.reuse_max})",
            f"O = {c.outputs} outputs, MACs = {c.products} real products",
        ) + grouped,
        "compulsory": (
            game,
            f"every used input ({c.used_inputs}) and used weight ({c.used_weights}) is "
            f"loaded at least once and every output ({c.outputs}) stored at least once",
        ),
    }
