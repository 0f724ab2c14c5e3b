"""The SymPy symbols of the bound formulas, declared once with their assumptions.

Every bound expression in :mod:`iobound` is built from these symbols, so that
expressions from different modules compose and compare.

Examples
--------
>>> S.is_positive, k.is_nonnegative
(True, True)
"""

from __future__ import annotations

import sympy as sp

__all__ = ["S", "k", "R", "V", "MACS", "X_IO", "INPUTS", "WEIGHTS", "OUTPUTS",
           "GAMMA", "E", "RR", "N_TILE", "W_CLASS"]

#: fast-memory size in words (or the size parameter of an S-partition)
S = sp.Symbol("S", positive=True)
#: the argument of a vertex-generation function phi_j(k), psi_j(k)
k = sp.Symbol("k", nonnegative=True)
#: reuse factor (the toolkit uses R = layer.reuse_max, see proofs/README.md)
R = sp.Symbol("R", positive=True)
#: number of vertices |V| of the computation DAG
V = sp.Symbol("V", positive=True)
#: real multiply-accumulates: product vertices of the DAG (padding taps excluded)
MACS = sp.Symbol("MACs", positive=True)
#: per-class weighted products sum_p 1/sqrt(T_c(p)) (iobound.reuse_classes)
W_CLASS = sp.Symbol("W_c", positive=True)
#: I/O operations per segment in the X-partition argument
X_IO = sp.Symbol("Y", positive=True)
#: used inputs, used weights and outputs (vertices) of the DAG
INPUTS = sp.Symbol("I_used", nonnegative=True)
WEIGHTS = sp.Symbol("W_used", nonnegative=True)
OUTPUTS = sp.Symbol("O", nonnegative=True)
#: Winograd: transformed values one raw input can take part in generating
GAMMA = sp.Symbol("gamma", positive=True)
#: Winograd tile parameters F(e x e, r x r), n = e + r - 1
E = sp.Symbol("e", positive=True, integer=True)
RR = sp.Symbol("r", positive=True, integer=True)
N_TILE = sp.Symbol("n", positive=True, integer=True)
