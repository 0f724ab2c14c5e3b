"""A bound report: every valid lower bound of a layer at one fast-memory size.

Examples
--------
>>> from iobound.networks import get_layer
>>> rep = bound_report(get_layer("alexnet.conv1"), 12288)
>>> sorted(rep.bounds), rep.best_method
(['compulsory', 'hong_kung_composite', 'x_partition', 'x_partition_chain'], 'x_partition_chain')
>>> bound_report(get_layer("alexnet.conv1"), 1 << 20).best_method
'compulsory'
>>> best_lower_bound(get_layer("alexnet.conv1"), 12288) == rep.best
True
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import sympy as sp

from .algorithms import ALGORITHMS, DEFAULT_WINOGRAD_E, Algorithm, get_algorithm
from . import limits
from .errors import InvalidInputError
from .layer import ConvLayer, check_layer

__all__ = ["Bound", "BoundReport", "bound_report", "best_lower_bound", "ALGORITHMS",
           "DEFAULT_WINOGRAD_E"]


@dataclass(frozen=True)
class Bound:
    """One lower bound: its method, value (I/O words), SymPy expression, assumptions.

    ``expression`` is in the symbols of :mod:`iobound.symbols` (S, R, V, MACs, ...);
    the value comes from its compiled form. ``leading_term`` is the value of the
    asymptotic term (None when the bound has none, e.g. compulsory I/O).

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> bounds = bound_report(layer, 16).bounds
    >>> b = bounds["x_partition_chain"]
    >>> b.method, round(b.value, 1), round(b.leading_term, 1), len(b.assumptions) > 0
    ('x_partition_chain', 630.7, 682.7, True)
    >>> str(bounds["compulsory"].expression), bounds["compulsory"].leading_term
    ('I_used + O + W_used', None)
    """

    method: str
    value: float
    expression: sp.Expr
    assumptions: tuple[str, ...]
    leading_term: float | None


@dataclass(frozen=True)
class BoundReport:
    """All bounds of one layer, algorithm and fast-memory size; the best of them.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> r = bound_report(layer, 16)   # S = 16 words
    >>> r.algorithm, r.e, r.fast_memory_words, r.best_method, round(r.best, 1)
    ('direct', None, 16, 'x_partition_chain', 630.7)
    >>> r.best == max(b.value for b in r.bounds.values()), r.bounds["compulsory"].value
    (True, 432.0)
    """

    layer: ConvLayer
    fast_memory_words: int
    algorithm: str
    e: int | None
    bounds: dict[str, Bound]
    best: float
    best_method: str
    leading_terms: dict[str, float] | None = None

    def to_dict(self) -> dict:
        """JSON-ready form (expressions as strings)."""
        return {
            "algorithm": self.algorithm, "e": self.e,
            "fast_memory_words": self.fast_memory_words,
            "bounds": {m: b.value for m, b in self.bounds.items()},
            "expressions": {m: str(b.expression) for m, b in self.bounds.items()},
            "assumptions": {m: list(b.assumptions) for m, b in self.bounds.items()},
            "leading_terms": dict(self.leading_terms or {}),
            "best": self.best, "best_method": self.best_method,
        }


def _check(layer: ConvLayer, s, algorithm, e) -> tuple[Algorithm, int | None]:
    check_layer(layer)
    if isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 1:
        raise InvalidInputError(f"fast memory S must be an integer number of words >= 1, got {s!r}")
    limits.check_int("fast memory S (words)", s, limits.FAST_MEMORY_WORDS)
    alg = get_algorithm(algorithm)
    alg.check(layer)
    return alg, alg.parameter(e)


def bound_report(layer: ConvLayer, S: int, algorithm: "str | Algorithm" = "direct",
                 e: int | None = None) -> BoundReport:
    """Every lower bound of ``layer`` at ``S`` words of fast memory, and the best.

    Parameters
    ----------
    layer : ConvLayer
    S : int
        Fast memory in words (>= 1).
    algorithm : {"direct", "winograd"} or Algorithm
    e : int, optional
        Winograd output tile (default 2); direct takes none (InvalidInputError).

    Raises
    ------
    ValueError
        For a bad S, algorithm or e, or Winograd on a layer it does not apply to.

    Examples
    --------
    >>> from iobound.networks import get_layer
    >>> r = bound_report(get_layer("alexnet.conv1"), 12288)  # 48 KiB of fp32
    >>> r.best_method, round(r.best), len(r.bounds)
    ('x_partition_chain', 624432, 4)
    >>> round(r.bounds["compulsory"].value)  # each used input and weight, each output, once
    479835
    >>> str(r.bounds["compulsory"].expression)
    'I_used + O + W_used'
    """
    alg, e = _check(layer, S, algorithm, e)
    S = int(S)
    parts = alg.bound_parts(layer, S, e)
    values, leads, exprs, details = parts.values, parts.leading_terms, parts.expressions, parts.details
    bounds = {m: Bound(m, values[m], exprs[m], details[m], leads.get(m)) for m in values}
    best_method = max(bounds, key=lambda m: bounds[m].value)
    return BoundReport(layer, S, alg.name, e, bounds, bounds[best_method].value,
                       best_method, leads)


def best_lower_bound(layer: ConvLayer, S: int, algorithm: "str | Algorithm" = "direct",
                     e: int | None = None) -> float:
    """The largest valid lower bound (I/O words) of :func:`bound_report`.

    >>> from iobound.networks import get_layer
    >>> round(best_lower_bound(get_layer("alexnet.conv1"), 12288))
    624432
    """
    return bound_report(layer, S, algorithm, e).best
