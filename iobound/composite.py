"""The I/O lower bound of a composite algorithm (paper Thm 4.5 / 4.6) as an API.

A composite algorithm is a list of steps (a multi-step partition of its DAG).
Step ``j`` has maximum vertex-generation functions ``phi_j(k)`` (vertices of the
step generated from ``k`` dominator vertices) and ``psi_j(k)`` (outputs of the
step generated). They are SymPy expressions in :data:`iobound.symbols.k` and may
use :data:`iobound.symbols.S` (the partition size: the minimum set of an
S-partition has at most S vertices, which several phi use) and parameters such
as ``R``. For any S-partition ``|V_i| <= T(S)`` with

    T(S) = S + max_{k_1+...+k_n <= S} phi_1(k_1) + phi_2(k_2 + psi_1(k_1)) + ...

and then (Hong & Kung, 2S-partitions) ``Q >= S (|V| / T(2S) - 1)``.

How the maximum is computed
---------------------------
* ``"relaxed"`` (symbolic; valid only for phi, psi non-decreasing in ``k >= 0``):
  every ``k_j <= S``, so the argument of ``phi_j`` is at most ``A_j`` with
  ``A_1 = S``, ``A_{j+1} = S + psi_j(A_j)``; ``T <= S + sum_j phi_j(A_j)``.
  Over-estimating T keeps Q a valid lower bound. The method needs every ``phi_j``
  and ``psi_j`` (but the last step's psi, which feeds nothing) non-decreasing in
  ``k`` for ``k >= 0`` and every such ``psi_j >= 0`` (so the next argument stays
  ``>= 0``); it checks both with SymPy, under the symbols' own assumptions, and
  raises InvalidInputError naming the step when it cannot prove them (a hump
  ``k (S - k)`` is rejected: declare parameters ``positive=True``).
  :meth:`CompositeAlgorithm.T_exact` takes any phi.
* ``"vertex"`` (symbolic): the largest value at a vertex of the simplex (all the
  budget in one ``k_j``). It *is* the maximum only when the objective is
  maximised at a vertex (candidates that SymPy proves dominated, for symbols
  >= 1, are dropped); proofs/test_lemma_4_8.py proves that for the direct
  convolution, and :meth:`CompositeAlgorithm.T_exact` checks it numerically.
* :meth:`CompositeAlgorithm.T_exact`: the exact maximum over integer ``k_j`` by
  enumeration (vectorised; for validation on small S).

Examples
--------
Hong & Kung's matrix multiply: products from k operands with at most S output
trees (Loomis-Whitney: k sqrt(S)/2), then summation trees (k - 1 sums):

>>> import sympy as sp
>>> from iobound.symbols import S, k
>>> mm = CompositeAlgorithm((CompositeStep("products", k * sp.sqrt(S) / 2),
...                          CompositeStep("sums", k - 1)))
>>> mm.T_expr("vertex")
S**(3/2) + S - 1
>>> mm.T_exact(16), float(mm.T_expr("vertex").subs(S, 16))
(79.0, 79.0)
"""

from __future__ import annotations

import inspect
import numbers
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Union

import numpy as np
import sympy as sp

from . import limits
from .composite_checks import (check_function, check_params, finite_real, nondecreasing,
                               nonnegative, own_symbols)
from .errors import InvalidInputError
from .symbols import S, V, k

__all__ = ["CompositeStep", "CompositeAlgorithm", "composite_bound_expr"]

StepFunction = Union[sp.Expr, Callable[..., float]]

#: s of T_exact: the enumeration is for small S (and numpy's int64 sums must not overflow).
_S_EXACT = limits.Limit(0, 1 << 40, "s: the exact maximum enumerates; for small S only")
_POINTS = limits.Limit(1, 1 << 32, "points the exact maximum enumerates")


def _as_expr(f: StepFunction) -> sp.Expr | None:
    if isinstance(f, sp.Basic):
        return sp.sympify(f)
    if isinstance(f, (int, float)) and not isinstance(f, bool):
        return sp.sympify(f)
    return None


@dataclass(frozen=True)
class CompositeStep:
    """One sub-computation of a multi-step partition.

    Parameters
    ----------
    name : str
        A label, e.g. ``"products"``.
    phi : sympy.Expr or callable
        Upper bound on the step's vertices generated from ``k`` dominator
        vertices: an expression in ``k`` (and optionally ``S`` and parameters),
        or a callable ``f(k)`` or ``f(k, S)``.
    psi : sympy.Expr or callable, optional
        Upper bound on the step's *outputs* so generated; defaults to ``phi``.

    Examples
    --------
    >>> import sympy as sp
    >>> from iobound.symbols import S, k
    >>> step = CompositeStep("products", k * sp.sqrt(S) / 2)   # psi defaults to phi
    >>> step.symbolic("phi", S)
    S**(3/2)/2
    >>> step.evaluate("psi", [4, 16], 16).tolist()   # at k = 4 and 16, for S = 16
    [8.0, 32.0]
    """

    name: str
    phi: StepFunction
    psi: StepFunction | None = None

    def __post_init__(self) -> None:
        _check_name("step name", self.name)
        # a plain sp.Symbol("k") / sp.Symbol("S") is the toolkit's k / S
        for which in ("phi", "psi"):
            f = getattr(self, which)
            if isinstance(f, sp.Expr):
                object.__setattr__(self, which, own_symbols(f))

    def _fn(self, which: str) -> StepFunction:
        if which not in ("phi", "psi"):
            raise InvalidInputError(f"which must be 'phi' or 'psi', got {which!r:.60}")
        f = self.phi if which == "phi" or self.psi is None else self.psi
        check_function(self.name, "phi" if f is self.phi else "psi", f)
        return f

    def evaluate(self, which: str, arg, s, params: dict | None = None):
        """Numeric phi or psi at ``arg`` (array-like) for partition size ``s``."""
        f = self._fn(which)
        expr = _as_expr(f)
        params = check_params(params)
        s = limits.check_number("s", s, 0)
        try:
            arg = np.asarray(arg, float)
        except (TypeError, ValueError, OverflowError):
            raise InvalidInputError(f"step {self.name!r}: arg must be real numbers, got "
                                    f"{arg!r:.60}") from None
        with np.errstate(all="ignore"):
            if expr is not None:
                if not finite_real(expr):
                    raise InvalidInputError(f"step {self.name!r}: {which} = {expr} is not a "
                                            "finite real number")
                missing = sorted(x.name for x in expr.free_symbols - {k, S}
                                 if x.name not in params)
                if missing:
                    raise InvalidInputError(
                        f"step {self.name!r}: {which} = {expr} needs a value for "
                        f"{', '.join(missing)}; pass params={{{missing[0]!r}: ...}}")
                fn = _compiled(expr, tuple(sorted(params)))
                try:
                    out = fn(arg, float(s), *[params[p] for p in sorted(params)])
                except (NameError, OverflowError, TypeError) as exc:  # f(k), 10**400
                    raise InvalidInputError(f"step {self.name!r}: {which} = {expr} has no "
                                            f"numeric value ({exc})") from None
            else:
                n_args = len(inspect.signature(f).parameters)
                out = f(arg) if n_args == 1 else f(arg, s)
            try:
                out = np.asarray(out) + np.zeros(np.shape(arg))
                if np.iscomplexobj(out):   # float() would drop the imaginary part
                    if np.any(out.imag != 0):
                        raise ValueError("an imaginary part")
                    out = out.real
                out = np.asarray(out, float)
            except (TypeError, ValueError, OverflowError) as exc:
                raise InvalidInputError(f"step {self.name!r}: {which} did not give real "
                                        f"numbers ({exc})") from None
        if not np.all(np.isfinite(out)):
            bad = np.asarray(arg, float).ravel()[~np.isfinite(out.ravel())][0]
            raise InvalidInputError(f"step {self.name!r}: {which} is not a finite real number "
                                    f"at k = {bad:g}, s = {s} (got {out.ravel()[~np.isfinite(out.ravel())][0]})")
        return out

    def symbolic(self, which: str, arg: sp.Expr) -> sp.Expr:
        """phi or psi at a symbolic argument (callables are not symbolic)."""
        expr = _as_expr(self._fn(which))
        if expr is None:
            raise InvalidInputError(f"step {self.name!r}: {which} is a callable, not a SymPy "
                             "expression; use T_exact for a numeric maximum")
        if not isinstance(arg, sp.Expr) and not (isinstance(arg, numbers.Real)
                                                 and not isinstance(arg, bool)):
            raise InvalidInputError(f"step {self.name!r}: arg must be a SymPy expression or a "
                                    f"number, got {type(arg).__name__} {arg!r:.60}")
        return expr.subs(k, arg, simultaneous=True)


@lru_cache(maxsize=256)
def _compiled(expr: sp.Expr, param_names: tuple[str, ...]):
    params = [sp.Symbol(p, positive=True) for p in param_names]
    # rebuild with the expression's own symbols of those names (assumptions kept)
    by_name = {s.name: s for s in expr.free_symbols}
    params = [by_name.get(p.name, p) for p in params]
    return sp.lambdify((k, S, *params), expr, "numpy")


@dataclass(frozen=True)
class CompositeAlgorithm:
    """A composite algorithm: its steps in order (Definition 4.1).

    Examples
    --------
    >>> from iobound.symbols import S, k
    >>> alg = CompositeAlgorithm((CompositeStep("only", 2 * k),))
    >>> alg.T_expr()
    3*S
    """

    steps: tuple[CompositeStep, ...]
    name: str = field(default="")

    def __post_init__(self) -> None:
        try:
            steps = tuple(self.steps)
        except TypeError:
            raise InvalidInputError(f"steps must be a sequence of CompositeStep, got "
                                    f"{self.steps!r}") from None
        object.__setattr__(self, "steps", steps)
        _check_name("algorithm name", self.name, blank=True)
        if not self.steps:
            raise InvalidInputError("a composite algorithm needs at least one step")
        for i, step in enumerate(self.steps):
            if not isinstance(step, CompositeStep):
                raise InvalidInputError(f"step {i} must be a CompositeStep(name, phi, psi), "
                                        f"got {type(step).__name__} {step!r}")

    def _check_relaxed(self) -> None:
        """InvalidInputError unless the relaxed maximum is valid (module docstring)."""
        n = len(self.steps)
        for j, step in enumerate(self.steps):
            for which in ("phi", "psi") if j < n - 1 else ("phi",):
                expr = step.symbolic(which, k)
                if not finite_real(expr):
                    raise InvalidInputError(f"step {step.name!r}: {which} = {expr} is not a "
                                            "finite real number")
                if not nondecreasing(expr):
                    raise InvalidInputError(
                        f"step {step.name!r}: {which} = {expr} is not provably non-decreasing "
                        "in k for k >= 0, which the 'relaxed' T(S) needs (declare parameters "
                        "positive=True, or use T_exact)")
                if which == "psi" and not nonnegative(expr):
                    raise InvalidInputError(
                        f"step {step.name!r}: psi = {expr} is not provably >= 0 for k >= 0, "
                        "which the 'relaxed' T(S) needs (it is the next step's argument)")

    def objective(self, ks: tuple[sp.Expr, ...]) -> sp.Expr:
        """The nested sum phi_1(k_1) + phi_2(k_2 + psi_1(k_1)) + ... (symbolic)."""
        if isinstance(ks, (str, bytes)) or not isinstance(ks, (tuple, list)) \
                or len(ks) != len(self.steps):
            raise InvalidInputError(f"ks must be a tuple of {len(self.steps)} expressions, one "
                                    f"per step, got {ks!r:.60}")
        total, carry = sp.Integer(0), sp.Integer(0)
        for step, kj in zip(self.steps, ks):
            arg = kj + carry
            total += step.symbolic("phi", arg)
            carry = step.symbolic("psi", arg)
        return total

    def T_expr(self, method: str = "relaxed") -> sp.Expr:
        """T(S) as a SymPy expression in S (see the module docstring for methods).

        ``"relaxed"`` (the default) is a proven over-estimate only for phi, psi
        non-decreasing in k >= 0 (and psi >= 0); it raises InvalidInputError naming
        the step when SymPy cannot prove that. ``"vertex"`` is not always the maximum.
        """
        n = len(self.steps)
        if method == "relaxed":
            self._check_relaxed()
            total, arg = sp.Integer(0), S
            for step in self.steps:
                total += step.symbolic("phi", arg)
                arg = S + step.symbolic("psi", arg)
            return sp.expand(S + total)
        if method == "vertex":
            cands = []
            for j in range(n):
                ks = tuple(S if i == j else sp.Integer(0) for i in range(n))
                cands.append(sp.expand(S + self.objective(ks)))
            uniq = [c for c in dict.fromkeys(cands)
                    if not any(o is not c and _dominates(o, c) for o in cands)]
            return uniq[0] if len(uniq) == 1 else sp.Max(*uniq)
        raise InvalidInputError(f"unknown method {method!r}; choose 'relaxed' or 'vertex'")

    def T_exact(self, s: int, params: dict | None = None, max_points: int = 5_000_000) -> float:
        """Exact T(s) = s + max over integer k_j >= 0 with sum <= s (enumeration).

        ``params`` gives a value to every free symbol of phi, psi other than k and S
        (by name, e.g. ``{"R": 9}``).

        Raises
        ------
        InvalidInputError
            When the enumeration would exceed ``max_points`` points (``C(s + n, n)`` for
            ``n`` steps), a parameter has no value, or phi / psi is not a finite real
            number on the grid.
        """
        s = limits.check_int("s", s, _S_EXACT)
        max_points = limits.check_int("max_points", max_points, _POINTS)
        n = len(self.steps)
        count = 1
        for i in range(n):
            count = count * (s + 1 + i) // (i + 1)
        if count > max_points:
            raise InvalidInputError(f"exact enumeration needs {count} points (> {max_points}); "
                             "use T_expr('relaxed') for a valid over-estimate")
        grids = _simplex(s, n).astype(float)
        total = np.zeros(len(grids))
        carry = np.zeros(len(grids))
        for j, step in enumerate(self.steps):
            arg = grids[:, j] + carry
            total += step.evaluate("phi", arg, s, params)
            carry = step.evaluate("psi", arg, s, params)
        return float(s + total.max())


def _simplex(s: int, n: int) -> np.ndarray:
    """Every ``(k_1, ..., k_n)`` of integers >= 0 with sum <= s, one per row (built
    column by column: only points of the simplex are made, never the whole cube)."""
    rows = np.zeros((1, 0), dtype=np.int64)
    for _ in range(n):
        left = s - rows.sum(axis=1)                       # what each row may still take
        reps = left + 1
        start = np.repeat(np.cumsum(reps) - reps, reps)
        col = np.arange(reps.sum()) - start               # 0..left for each row
        rows = np.column_stack([np.repeat(rows, reps, axis=0), col])
    return rows


def _check_name(what: str, name, blank: bool = False) -> None:
    if not isinstance(name, str) or not name.isprintable() or not (blank or name.strip()):
        raise InvalidInputError(f"{what} must be a printable{'' if blank else ', not blank'} "
                                f"string, got {name!r:.60}")


def _dominates(a: sp.Expr, b: sp.Expr) -> bool:
    """True when SymPy proves ``a >= b`` for all symbols >= 1 (S, R, gamma are)."""
    shift = {x: (1 + sp.Symbol(f"_{x.name}", nonnegative=True)) ** 2
             for x in (a - b).free_symbols}
    diff = sp.expand((a - b).subs(shift, simultaneous=True))
    return a != b and bool(diff.is_nonnegative)


def composite_bound_expr(T: sp.Expr) -> sp.Expr:
    """Thm 4.6 with Hong & Kung's 2S-partitions: ``max(0, S (|V| / T(2S) - 1))``.

    >>> from iobound.symbols import S
    >>> composite_bound_expr(3 * S)
    Max(0, S*(-1 + V/(6*S)))
    """
    if not isinstance(T, sp.Expr) or not finite_real(T) or T.is_nonpositive is True:
        raise InvalidInputError(f"T must be a SymPy expression of T(S) > 0, got "
                                f"{type(T).__name__} {T!r:.60}")
    return sp.Max(0, S * (V / T.subs(S, 2 * S, simultaneous=True) - 1))
