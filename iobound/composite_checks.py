"""Checks of the steps a user gives :mod:`iobound.composite`: their phi and psi, and the
parameter values they are evaluated with.

The relaxed T(S) of :meth:`~iobound.composite.CompositeAlgorithm.T_expr` over-estimates T
only for non-decreasing phi and psi (and psi >= 0 where it feeds the next step), so those
are proven here with SymPy before it is used; anything SymPy cannot prove is refused.

Examples
--------
>>> import sympy as sp
>>> from iobound.symbols import S, k
>>> nondecreasing(k * sp.sqrt(S)), nondecreasing(k * (S - k))
(True, False)
>>> own_symbols(sp.Symbol("k") + 1) == k + 1
True
>>> check_params({"R": 9})
{'R': 9.0}
"""

from __future__ import annotations

import inspect
import math
import numbers
from functools import lru_cache

import numpy as np
import sympy as sp

from .errors import InvalidInputError
from .symbols import S, k

__all__ = ["own_symbols", "check_function", "nondecreasing", "nonnegative", "check_params",
           "finite_real"]


def own_symbols(expr: sp.Expr) -> sp.Expr:
    """``expr`` with any other symbol named ``k`` or ``S`` (e.g. a plain
    ``sp.Symbol("k")``, other assumptions) replaced by :data:`k` / :data:`S`.

    >>> own_symbols(sp.Symbol("S", positive=True) * k).free_symbols == {S, k}
    True
    """
    ours = {"k": k, "S": S}
    swap = {x: ours[x.name] for x in expr.free_symbols
            if isinstance(x, sp.Symbol) and not isinstance(x, sp.Dummy)
            and x.name in ours and x != ours[x.name]}
    return expr.xreplace(swap) if swap else expr


def check_function(step: str, which: str, f) -> None:
    """InvalidInputError unless ``f`` is a SymPy expression, a real number or a callable
    ``f(k)`` / ``f(k, S)``.

    >>> check_function("sums", "phi", lambda k: k - 1)   # a callable f(k): accepted
    >>> check_function("sums", "phi", "k - 1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: step 'sums': phi must be a SymPy expression in k ...
    """
    if isinstance(f, sp.Basic):
        if not isinstance(f, sp.Expr):
            raise InvalidInputError(f"step {step!r}: {which} must be a SymPy expression in k, "
                                    f"got {type(f).__name__} {f}")
        return
    if isinstance(f, (int, float)) and not isinstance(f, bool):
        return
    if isinstance(f, (str, bytes)) or not callable(f):
        raise InvalidInputError(f"step {step!r}: {which} must be a SymPy expression in k or a "
                                f"callable f(k) / f(k, S), got {type(f).__name__} {f!r}")
    try:
        n_args = len(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        n_args = None
    if n_args not in (1, 2):
        raise InvalidInputError(f"step {step!r}: {which} must be a callable of one or two "
                                f"arguments f(k) / f(k, S), got {f!r}")


#: Functions that may jump: a derivative >= 0 on every piece says nothing of the jumps.
_MAY_JUMP = (sp.Piecewise, sp.Heaviside, sp.floor, sp.ceiling, sp.frac, sp.sign, sp.Mod,
             sp.DiracDelta)


def finite_real(expr: sp.Expr) -> bool:
    """False when ``expr`` holds a NaN, an infinity or the imaginary unit (a count of
    vertices is none of these).

    >>> finite_real(2 * k), finite_real(sp.oo * k), finite_real(sp.I * k)
    (True, False, False)
    """
    return not (expr.has(sp.nan, sp.oo, -sp.oo, sp.zoo, sp.I) or expr.is_real is False)


@lru_cache(maxsize=256)
def nondecreasing(expr: sp.Expr) -> bool:
    """True when SymPy proves ``expr`` non-decreasing in k for k >= 0 (other symbols by
    their own assumptions): continuous in k (no function that may jump, such as a
    Piecewise), d/dk >= 0 for k > 0, and the value at 0 at most the limit.

    >>> nondecreasing(sp.Piecewise((10 * k, k < 2), (k, True)))   # drops at k = 2
    False
    """
    if k not in expr.free_symbols:
        return True
    if any(f.has(k) for f in expr.atoms(*_MAY_JUMP)):
        return False
    kp = sp.Dummy("k", positive=True)
    e = expr.xreplace({k: kp})
    d = sp.diff(e, kp)
    if d.is_nonnegative is not True and sp.simplify(d).is_nonnegative is not True:
        return False
    at0 = expr.subs(k, 0)
    if at0.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        return False
    try:
        lim = sp.limit(e, kp, 0, "+")
    except (NotImplementedError, ValueError):  # SymPy cannot take the limit: not proven
        return False
    gap = sp.simplify(lim - at0)
    return gap == 0 or gap.is_nonnegative is True


@lru_cache(maxsize=256)
def nonnegative(expr: sp.Expr) -> bool:
    """True when SymPy proves ``expr >= 0`` for k >= 0.

    >>> nonnegative(k * sp.sqrt(S)), nonnegative(k - 1)
    (True, False)
    """
    return expr.is_nonnegative is True or sp.simplify(expr).is_nonnegative is True


def check_params(params) -> dict[str, float]:
    """``params`` as ``{name: float}`` (keys names or SymPy symbols, finite real values).

    >>> check_params(None), check_params({sp.Symbol("R"): 9, "mu": 2})
    ({}, {'R': 9.0, 'mu': 2.0})
    >>> check_params({"S": 3})
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: params: S is the argument of phi and psi, not a parameter
    """
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise InvalidInputError(f"params must be a dict of parameter values, got {params!r}")
    out = {}
    for key, value in params.items():
        name = key.name if isinstance(key, sp.Symbol) else key
        if not isinstance(name, str) or not name.isidentifier():
            raise InvalidInputError(f"params: key {key!r:.60} must be a parameter name")
        if name in ("k", "S"):
            raise InvalidInputError(f"params: {name} is the argument of phi and psi, not a "
                                    "parameter")
        # a string would be parsed ("2"), a bool taken as 0 / 1: neither is a value
        if isinstance(value, (bool, np.bool_, str, bytes)) or not isinstance(value, numbers.Real):
            raise InvalidInputError(f"params: {name} must be a real number, got {value!r:.60}")
        try:
            x = float(value)
        except OverflowError:
            x = math.inf
        if not math.isfinite(x):
            raise InvalidInputError(f"params: {name} must be a finite real number, got "
                                    f"{value!r:.60}")
        out[name] = x
    return out
