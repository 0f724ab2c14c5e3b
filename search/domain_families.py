"""The search part of each algorithm family: knob values and CP-SAT tile constraints.

One :class:`DomainFamily` per algorithm, registered in :data:`DOMAINS` under its name
(the lower layers' parts: :mod:`iobound.algorithms`, :data:`dataflow.families.DATAFLOWS`,
:data:`kernels.families.KERNELS`). :mod:`search.table1` builds the domain and its CP-SAT
model through them instead of branching on the algorithm's name.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=6, k_h=3, k_w=3)
>>> params, values, pairs = domain_family("direct").knob_values(layer, None)
>>> params, values["x"], values["alpha"], pairs
(('x', 'y', 'z', 'alpha', 'tx', 'ty', 'tz'), (1, 2, 3, 6), (1, 2, 4), {})
>>> params, values, pairs = domain_family("winograd").knob_values(layer, (2, 3))
>>> params[0], values["e"], pairs[3]
('e', (2, 3), ((3, 6), (3, 6)))
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import math
from typing import NamedTuple

from ortools.sat.python import cp_model

from iobound.algorithms import DIRECT, OFFERED_WINOGRAD_ES, WINOGRAD, Algorithm, Registry
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from kernels.config_types import DirectConfig, WinogradConfig, transformed_row_words

__all__ = ["DomainFamily", "TileExprs", "DOMAINS", "domain_family", "divisors", "cp_product"]

#: Upper bound of the CP-SAT helper variables (products of sizes).
BIG = 1 << 40


def divisors(n: int) -> tuple[int, ...]:
    """The positive divisors of ``n`` in increasing order.

    Examples
    --------
    >>> divisors(12)
    (1, 2, 3, 4, 6, 12)
    """
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return tuple(sorted(set(small) | {n // d for d in small}))


def cp_product(model: cp_model.CpModel, a, b, name: str, ub: int) -> cp_model.IntVar:
    """A new variable equal to ``a * b`` (CP-SAT multiplication equality).

    >>> m = cp_model.CpModel()
    >>> a, b = m.NewIntVar(2, 9, "a"), m.NewIntVar(3, 3, "b")
    >>> _ = m.Add(cp_product(m, a, b, "ab", 100) == 21)
    >>> solver = cp_model.CpSolver()
    >>> solver.Solve(m) == cp_model.OPTIMAL, solver.Value(a)
    (True, 7)
    """
    v = model.NewIntVar(0, ub, name)
    model.AddMultiplicationEquality(v, [a, b])
    return v


class TileExprs(NamedTuple):
    """The sizes of a block as CP-SAT expressions: shared words, register words, x*y, x*y*z.

    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> m = cp_model.CpModel()
    >>> knobs = {p: m.NewConstant(v) for p, v in dict(x=2, y=3, z=4, alpha=1).items()}
    >>> sizes = domain_family("direct").tile_exprs(m, layer, knobs, {})
    >>> solver = cp_model.CpSolver(); _ = solver.Solve(m)
    >>> [solver.Value(e) for e in sizes]  # 4 x 5 inputs + 4 x 9 weights; 2 x 3 x 4 outputs
    [56, 24, 6, 24]
    """

    shared_words: object
    reg_words: object
    xy: object
    xyz: object


class DomainFamily(ABC):
    """What the search domain knows of one algorithm (see the module doc).

    >>> fam = domain_family("winograd")
    >>> isinstance(fam, DomainFamily), fam.name, type(fam).__name__
    (True, 'winograd', 'WinogradDomain')
    """

    algorithm: Algorithm

    @property
    def name(self) -> str:
        return self.algorithm.name

    @abstractmethod
    def knob_values(self, layer: ConvLayer, winograd_e) -> tuple[tuple[str, ...], dict, dict]:
        """``(params, values, tile_pairs)``: the knobs, their value lists, Winograd's (x, y) per e
        (``winograd_e``: Winograd's tiles, None for the offered ones; direct refuses any)."""

    @abstractmethod
    def tile_exprs(self, m: cp_model.CpModel, layer: ConvLayer, variables: dict, tile_pairs: dict) -> TileExprs:
        """Constrain the tile knobs and return the block's sizes as expressions."""

    @abstractmethod
    def thread_parents(self, m: cp_model.CpModel, variables: dict) -> dict:
        """The tile span each thread knob must divide (``tx`` -> x or x/e, ...)."""

    def _staged(self, m: cp_model.CpModel, x, y, rows_of_y, cols_of_x):
        rows = m.NewIntVar(0, BIG, "in_rows")
        cols = m.NewIntVar(0, BIG, "in_cols")
        m.Add(rows == rows_of_y(y))
        m.Add(cols == cols_of_x(x))
        return cp_product(m, rows, cols, "in_area", BIG)


class DirectDomain(DomainFamily):
    """Direct: tiles divide the output, alpha the input channels; threads divide the tiles.

    Grouped layers: ``z`` divides a group's output channels and ``alpha`` a group's input
    channels (a block works inside one group, :mod:`kernels.grouping`).

    >>> grouped = ConvLayer(n=1, c_in=8, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, groups=2)
    >>> _, values, _ = DirectDomain().knob_values(grouped, None)
    >>> values["z"], values["alpha"]  # divisors of a group's 2 outputs and 4 inputs
    ((1, 2), (1, 2, 4))
    >>> DirectDomain().knob_values(grouped, (2,))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: winograd_e=(2,) is for the winograd algorithm; ...
    """

    algorithm = DIRECT

    def knob_values(self, layer, winograd_e):
        if winograd_e is not None:
            raise InvalidInputError(f"winograd_e={winograd_e!r:.40} is for the winograd "
                                    "algorithm; the direct domain has no e")
        values = {"x": divisors(layer.w_out), "y": divisors(layer.h_out),
                  "z": divisors(layer.c_out_per_group), "alpha": divisors(layer.c_in_per_group)}
        values.update(tx=values["x"], ty=values["y"], tz=values["z"])
        return DirectConfig.params, values, {}   # the knob rows' column order

    def tile_exprs(self, m, layer, variables, tile_pairs):
        x, y, z, a = (variables[p] for p in ("x", "y", "z", "alpha"))
        mu_h, mu_w = layer.stride
        area = self._staged(m, x, y, lambda y: (y - 1) * mu_h + layer.extent_h,
                            lambda x: (x - 1) * mu_w + layer.extent_w)
        staged_in = cp_product(m, a, area, "staged_in", BIG)
        # a tight bound: alpha_z * k_h * k_w * 4 bytes must fit CP-SAT's 62-bit sums
        staged_w = cp_product(m, a, z, "alpha_z", layer.c_in * layer.c_out)
        xy = cp_product(m, x, y, "xy", BIG)
        acc = cp_product(m, xy, z, "acc", BIG)
        return TileExprs(staged_in + staged_w * (layer.k_h * layer.k_w), acc, xy, acc)

    def thread_parents(self, m, variables):
        return {"tx": variables["x"], "ty": variables["y"], "tz": variables["z"]}


class WinogradDomain(DomainFamily):
    """Winograd: x, y multiples of e whose tile counts divide the output's; one channel a step.

    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> WinogradDomain().knob_values(layer, None)[1]["e"]  # the offered tiles
    (2, 3, 4)
    >>> WinogradDomain().knob_values(layer, (1,))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: winograd e must be integers >= 2, got (1,)
    """

    algorithm = WINOGRAD

    def knob_values(self, layer, winograd_e):
        from kernels.families import kernel_family
        problem = kernel_family(self.algorithm).problem(layer)  # Winograd's, or groups
        if problem is not None:
            raise InvalidInputError(problem)
        es = tuple(sorted({int(e) for e in (OFFERED_WINOGRAD_ES if winograd_e is None
                                             else winograd_e)}))
        if not es or es[0] < 2:
            raise InvalidInputError(f"winograd e must be integers >= 2, got {winograd_e!r}")
        pairs = {e: (tuple(e * b for b in divisors(-(-layer.w_out // e))),
                     tuple(e * b for b in divisors(-(-layer.h_out // e)))) for e in es}
        values = {"e": es,
                  "x": tuple(sorted({v for p in pairs.values() for v in p[0]})),
                  "y": tuple(sorted({v for p in pairs.values() for v in p[1]})),
                  "z": divisors(layer.c_out)}
        values.update(tx=tuple(sorted({b for e, p in pairs.items() for v in p[0]
                                       for b in divisors(v // e)})),
                      ty=tuple(sorted({b for e, p in pairs.items() for v in p[1]
                                       for b in divisors(v // e)})),
                      tz=values["z"])
        return WinogradConfig.params, values, pairs

    def tile_exprs(self, m, layer, variables, tile_pairs):
        e, x, y, z = (variables[p] for p in ("e", "x", "y", "z"))
        r = layer.k_h
        m.AddAllowedAssignments([e, x, y], [(ev, xv, yv) for ev, (xs, ys) in tile_pairs.items()
                                            for xv in xs for yv in ys])
        area = self._staged(m, x, y, lambda y: y + r - 1, lambda x: x + r - 1)
        xy = cp_product(m, x, y, "xy", BIG)
        xyz = cp_product(m, xy, z, "xyz", BIG)
        # 2 (x/e)(y/e) z (e+r-1)^2 temporaries = xyz * 2 (e+r-1)^2 / e^2, per e; the
        # kernel's shared memory (kernels.config.shared_memory_words) holds the input
        # rectangle and (z + (x/e)(y/e)) transformed tiles of (e+r-1)^2 | 1 words, per e too.
        reg_words = m.NewIntVar(0, BIG, "temporaries")
        shared_words = m.NewIntVar(0, BIG, "shared_words")
        for ev in tile_pairs:
            is_e = m.NewBoolVar(f"e_is_{ev}")
            m.Add(e == ev).OnlyEnforceIf(is_e)
            m.Add(e != ev).OnlyEnforceIf(is_e.Not())
            n = ev + r - 1
            m.Add(reg_words * (ev * ev) == xyz * (2 * n * n)).OnlyEnforceIf(is_e)
            row = transformed_row_words(ev, r)
            m.Add(shared_words * (ev * ev) == (area + z * row) * (ev * ev)
                  + xy * row).OnlyEnforceIf(is_e)
        return TileExprs(shared_words, reg_words, xy, xyz)

    def thread_parents(self, m, variables):
        bx = m.NewIntVar(1, BIG, "bx")
        by = m.NewIntVar(1, BIG, "by")
        m.AddMultiplicationEquality(variables["x"], [bx, variables["e"]])
        m.AddMultiplicationEquality(variables["y"], [by, variables["e"]])
        return {"tx": bx, "ty": by, "tz": variables["z"]}


#: The search-domain families, keyed by algorithm name.
DOMAINS: Registry[DomainFamily] = Registry("algorithm")
for _fam in (DirectDomain(), WinogradDomain()):
    DOMAINS.register(_fam.name, _fam)


def domain_family(algorithm: "str | Algorithm") -> DomainFamily:
    """The :class:`DomainFamily` of an algorithm name or object (unknown: InvalidInputError).

    >>> domain_family("gemm")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: unknown algorithm 'gemm'; choose one of direct, winograd
    """
    return DOMAINS.get(algorithm)
