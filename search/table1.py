"""The paper's Table 1 search domain as an OR-Tools CP-SAT model.

Knobs (names as in ``kernels.config``):

- direct: tile ``x | w_out``, ``y | h_out``, ``z | c_out``, channel chunk
  ``alpha | c_in``; threads ``tx | x``, ``ty | y``, ``tz | z``. For a grouped layer
  ``c_out`` and ``c_in`` are one group's (``c_out / groups``, ``c_in / groups``): a
  block works inside one group. Winograd refuses grouped layers.
- winograd F(e x e, r x r): ``e`` from a given set; ``x = e * bx`` with
  ``bx | ceil(w_out / e)`` (the tile holds a divisor of the number of Winograd
  tiles across the row, so layers with a prime ``w_out`` such as 13 still have
  tiles; border tiles are clipped), likewise ``y``; ``z | c_out``; threads
  ``tx | x/e``, ``ty | y/e``, ``tz | z``.

Two sets of constraints:

*Template and hardware* (the **unpruned** space, what a tuner such as AutoTVM
would search for this template): the divisibility above, the block's static shared
memory (fp32 bytes the kernel declares, ``kernels.config.shared_memory_words``: the
staged inputs and weights; Winograd's weights and tiles transformed) at most
``device.shared_mem_per_block_bytes``, threads per block at most
``device.max_threads_per_block``, register words per thread (accumulators for direct,
the two Winograd temporaries per tile and channel for Winograd) at most
``max_regs_per_thread``.

*Table 1 optimality pruning* (the **pruned** space, additionally), with
``S_b = min(S_sm / 2, per-block limit)`` in fp32 words and ``R = layer.reuse_max``
(the paper uses the average reuse ``k_h k_w / mu^2``; the maximum is the one the
bounds support, see DESIGN.md): shared bytes ``<= S_sm / 2``, ``x y z <= S_b``,
``z <= sqrt(S_b / R)`` written ``z^2 R <= S_b`` and ``x y <= sqrt(S_b R)`` written
``(x y)^2 <= S_b R`` (integers only, no rounding).

The tile-only part of the model is enumerated with CP-SAT; every tile solution
carries a reified flag ``table1`` saying whether the Table 1 constraints hold, so a
single enumeration gives both spaces. Thread triples per tile are counted in
:mod:`search.conv_space` with the same constraints; :func:`full_model` states the
whole space (threads included) in CP-SAT for cross-checks on small layers.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> from iobound.devices import get_device
>>> layer = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=64, k_h=3, k_w=3)
>>> dom = domain_for(layer, get_device("v100"), "direct")
>>> dom.values["x"], dom.values["alpha"], dom.s_b_words, dom.reuse
((1, 2, 3, 6), (1, 2, 4), 12288, 9)
>>> tiles = enumerate_tiles(dom)   # z = 64 breaks z^2 R <= S_b
>>> len(tiles.rows), int(tiles.table1.sum())
(336, 288)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from iobound.algorithms import ALGORITHMS, algorithm_name
from iobound.errors import SolverError
from iobound.layer import ConvLayer
from iobound.units import WORD_BYTES
from kernels.limits import (GRID_X_LIMIT, GRID_YZ_LIMIT, MAX_ACCUMULATORS_PER_THREAD, MAX_BLOCK_DIM,
                            REGISTER_OVERHEAD)
from search.interrupts import solve_stoppable

from .domain_families import cp_product, divisors, domain_family  # divisors: re-exported

__all__ = ["ALGORITHMS", "MAX_REGS_PER_THREAD", "Domain", "TileSolutions", "divisors",
           "domain_for", "enumerate_tiles", "full_model", "count_full_model"]

#: Register words (accumulators or Winograd temporaries) one thread may hold.
MAX_REGS_PER_THREAD = MAX_ACCUMULATORS_PER_THREAD


@dataclass(frozen=True)
class Domain:
    """Everything the constraint model needs about one layer, device and algorithm.

    Attributes
    ----------
    algorithm : str
        ``"direct"`` or ``"winograd"``.
    params : tuple of str
        Knob names, tile knobs first then ``tx, ty, tz``.
    values : dict
        Knob name -> increasing tuple of the values it may take (before constraints).
    tile_pairs : dict
        Winograd only: ``e`` -> (allowed ``x``, allowed ``y``).
    reuse : int
        ``R`` of the pruning (``layer.reuse_max``).
    s_b_words : int
        ``S_b`` in fp32 words.
    shared_limit_bytes, prune_shared_bytes : int
        Per-block hardware limit and the Table 1 ``S_sm / 2``.
    max_threads, max_regs : int
        Threads per block and register words per thread.
    regs_per_sm, reg_overhead : int
        The register file of an SM and the registers a thread needs besides its
        register words (``kernels.limits.REGISTER_OVERHEAD``): a block must satisfy
        ``(ceil(reg_words / threads) + reg_overhead) * threads <= regs_per_sm``.

    Examples
    --------
    >>> from iobound.devices import get_device
    >>> layer = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=2, k_h=1, k_w=1)
    >>> dom = domain_for(layer, get_device("v100"))
    >>> dom.tile_params, dom.values["x"], dom.reuse, dom.max_threads
    (('x', 'y', 'z', 'alpha'), (1, 2, 4), 1, 1024)
    """

    layer: ConvLayer
    algorithm: str
    params: tuple[str, ...]
    values: dict
    tile_pairs: dict
    reuse: int
    s_b_words: int
    shared_limit_bytes: int
    prune_shared_bytes: int
    max_threads: int
    max_regs: int
    regs_per_sm: int
    reg_overhead: int

    @property
    def tile_params(self) -> tuple[str, ...]:
        return self.params[:-3]


def domain_for(layer: ConvLayer, device, algorithm: str = "direct",
               winograd_e: tuple[int, ...] | None = None,
               max_regs_per_thread: int = MAX_REGS_PER_THREAD) -> Domain:
    """The knob value lists and limits of ``layer`` on ``device`` (see module doc);
    ``winograd_e``: Winograd's output tiles (None: the offered ones; refused for direct).

    >>> from iobound.devices import get_device
    >>> layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
    >>> dom = domain_for(layer, get_device("v100"), "winograd", winograd_e=(2,))
    >>> dom.params, dom.tile_pairs  # e = 2: x and y are 2 or 6 (1 or 3 tiles)
    (('e', 'x', 'y', 'z', 'tx', 'ty', 'tz'), {2: ((2, 6), (2, 6))})
    """
    algorithm = algorithm_name(algorithm)
    prune_bytes = min(device.shared_mem_per_sm_bytes // 2, device.shared_mem_per_block_bytes)
    common = dict(layer=layer, algorithm=algorithm, reuse=int(layer.reuse_max),
                  s_b_words=prune_bytes // WORD_BYTES,
                  shared_limit_bytes=device.shared_mem_per_block_bytes,
                  prune_shared_bytes=prune_bytes, max_threads=device.max_threads_per_block,
                  max_regs=int(max_regs_per_thread), regs_per_sm=device.registers_per_sm,
                  reg_overhead=REGISTER_OVERHEAD[algorithm])
    params, values, pairs = domain_family(algorithm).knob_values(layer, winograd_e)
    return Domain(params=params, values=values, tile_pairs=pairs, **common)


def _var(model: cp_model.CpModel, vals, name: str) -> cp_model.IntVar:
    return model.NewIntVarFromDomain(cp_model.Domain.FromValues(list(vals)), name)


class _TileModel:
    """CP-SAT variables and constraints over the tile knobs (no threads)."""

    def __init__(self, dom: Domain, pruned_only: bool = False):
        L, m = dom.layer, cp_model.CpModel()
        self.model, self.dom = m, dom
        big = 1 << 40
        xy_ub = max(dom.values["x"]) * max(dom.values["y"])
        self.vars = {p: _var(m, dom.values[p], p) for p in dom.tile_params}
        x, y, z = self.vars["x"], self.vars["y"], self.vars["z"]
        shared_words, reg_words, xy, xyz = domain_family(dom.algorithm).tile_exprs(
            m, L, self.vars, dom.tile_pairs)
        self.shared_words, self.reg_words = shared_words, reg_words
        # hardware: shared bytes per block; some thread count <= max gives <= max regs.
        m.Add(shared_words * WORD_BYTES <= dom.shared_limit_bytes)
        m.Add(reg_words <= dom.max_regs * dom.max_threads)
        m.Add(x * (GRID_X_LIMIT // L.n) >= L.w_out)  # grid x = n * ceil(w_out / x)
        m.Add(y * GRID_YZ_LIMIT >= L.h_out)  # grid y = ceil(h_out / y)
        m.Add(z * GRID_YZ_LIMIT >= L.c_out)  # grid z = ceil(c_out / z)
        # Table 1, reified into one flag.
        S, R = dom.s_b_words, dom.reuse
        conds = [(shared_words * WORD_BYTES, dom.prune_shared_bytes), (xyz, S),
                 (cp_product(m, z, z, "zz", big) * R, S), (cp_product(m, xy, xy, "xyxy", xy_ub * xy_ub), S * R)]
        flags = []
        for k, (expr, bound) in enumerate(conds):
            b = m.NewBoolVar(f"table1_{k}")
            m.Add(expr <= bound).OnlyEnforceIf(b)
            m.Add(expr >= bound + 1).OnlyEnforceIf(b.Not())
            flags.append(b)
        self.table1 = m.NewBoolVar("table1")
        m.AddBoolAnd(flags).OnlyEnforceIf(self.table1)
        m.AddBoolOr([f.Not() for f in flags]).OnlyEnforceIf(self.table1.Not())
        if pruned_only:
            m.Add(self.table1 == 1)


@dataclass(frozen=True)
class TileSolutions:
    """All tile-knob assignments of the unpruned space, sorted lexicographically.

    Attributes
    ----------
    params : tuple of str
        Tile knob names (the columns of ``rows``).
    rows : numpy.ndarray
        ``(n, len(params))`` int64 matrix, one tile combination per row.
    table1 : numpy.ndarray
        Bool per row: whether the Table 1 pruning constraints hold.
    reg_words : numpy.ndarray
        Register words of the block (accumulators or Winograd temporaries).

    Examples
    --------
    >>> from iobound.devices import get_device
    >>> layer = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=2, k_h=1, k_w=1)
    >>> tiles = enumerate_tiles(domain_for(layer, get_device("v100")))
    >>> len(tiles.rows), tiles.rows[-1].tolist(), int(tiles.reg_words[-1]), bool(tiles.table1.all())
    (36, [4, 4, 2, 2], 32, True)
    """

    params: tuple[str, ...]
    rows: np.ndarray
    table1: np.ndarray
    reg_words: np.ndarray


class _Collector(cp_model.CpSolverSolutionCallback):
    def __init__(self, variables, extra):
        super().__init__()
        self._vars, self._extra, self.rows = variables, extra, []

    def on_solution_callback(self) -> None:
        self.rows.append([self.Value(v) for v in self._vars] + [self.Value(v) for v in self._extra])


def _solve_all(model: cp_model.CpModel, variables, extra=()) -> list[list[int]]:
    # Branch on the knobs in order, smallest value first: about 10x faster enumeration
    # than the default portfolio search for these models.
    model.AddDecisionStrategy(list(variables), cp_model.CHOOSE_FIRST, cp_model.SELECT_MIN_VALUE)
    solver = cp_model.CpSolver()
    solver.parameters.enumerate_all_solutions = True
    solver.parameters.num_workers = 1
    solver.parameters.search_branching = cp_model.FIXED_SEARCH
    solver.parameters.linearization_level = 0
    cb = _Collector(list(variables), list(extra))
    status = solve_stoppable(solver, model, cb)  # SIGINT/SIGTERM stop it (search.interrupts)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.INFEASIBLE):
        raise SolverError(f"CP-SAT enumeration did not finish: {solver.StatusName(status)}")
    return cb.rows


def enumerate_tiles(dom: Domain) -> TileSolutions:
    """Enumerate every tile combination of the unpruned space with CP-SAT.

    >>> from iobound.devices import get_device
    >>> layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
    >>> tiles = enumerate_tiles(domain_for(layer, get_device("v100"), "winograd", (2,)))
    >>> tiles.params, len(tiles.rows)  # e=2; x, y in (2, 6); z in (1, 2)
    (('e', 'x', 'y', 'z'), 8)
    """
    tm = _TileModel(dom)
    params = dom.tile_params
    rows = _solve_all(tm.model, [tm.vars[p] for p in params], [tm.table1, tm.reg_words])
    arr = np.array(rows, dtype=np.int64).reshape(-1, len(params) + 2)
    order = np.lexsort(arr[:, : len(params)].T[::-1])
    arr = arr[order]
    return TileSolutions(params=params, rows=arr[:, : len(params)].copy(),
                         table1=arr[:, len(params)].astype(bool),
                         reg_words=arr[:, len(params) + 1].copy())


def full_model(dom: Domain, pruned: bool) -> tuple[cp_model.CpModel, list[cp_model.IntVar]]:
    """The whole space (tile and thread knobs) as one CP-SAT model, for cross-checks.

    Returns the model and its knob variables in ``dom.params`` order. Enumerating
    it is exact but slow for big layers; :class:`search.conv_space.ConvSpace`
    counts threads per tile instead.

    >>> from iobound.devices import get_device
    >>> layer = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=2, k_h=1, k_w=1)
    >>> model, knobs = full_model(domain_for(layer, get_device("v100")), pruned=True)
    >>> [v.Name() for v in knobs]
    ['x', 'y', 'z', 'alpha', 'tx', 'ty', 'tz']
    """
    tm = _TileModel(dom, pruned_only=pruned)
    m, v = tm.model, dict(tm.vars)
    big = 1 << 40
    parents = domain_family(dom.algorithm).thread_parents(m, v)
    axis_caps = dict(zip(("tx", "ty", "tz"), MAX_BLOCK_DIM))
    for t, parent in parents.items():
        v[t] = _var(m, dom.values[t], t)
        m.Add(v[t] <= axis_caps[t])  # CUDA's per-axis block limit
        q = m.NewIntVar(1, big, f"{t}_q")
        m.AddMultiplicationEquality(parent, [v[t], q])  # t divides its tile
    txy = cp_product(m, v["tx"], v["ty"], "txy", big)
    threads = cp_product(m, txy, v["tz"], "threads", big)
    m.Add(threads <= dom.max_threads)
    m.Add(tm.reg_words <= threads * dom.max_regs)
    acc = m.NewIntVar(0, dom.max_regs, "regs_per_thread")  # ceil(reg_words / threads)
    acc_t = cp_product(m, acc, threads, "acc_threads", big)
    m.Add(acc_t >= tm.reg_words)
    m.Add(acc_t - threads < tm.reg_words)
    m.Add(acc_t + threads * dom.reg_overhead <= dom.regs_per_sm)
    return m, [v[p] for p in dom.params]


def count_full_model(dom: Domain, pruned: bool) -> int:
    """Number of solutions of :func:`full_model` (enumerated; small layers only).

    >>> from iobound.devices import get_device
    >>> from search.conv_space import ConvSpace
    >>> layer = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=2, k_h=1, k_w=1)
    >>> count_full_model(domain_for(layer, get_device("v100")), pruned=True)
    216
    >>> ConvSpace(layer, "v100").pruned_size  # the space counts the same configurations
    216
    """
    m, variables = full_model(dom, pruned)
    return len(_solve_all(m, variables))
