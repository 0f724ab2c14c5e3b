"""Charge routing of transformed values to their raw ancestors (the Winograd chain bound's caps).

A transformed entry ``P[i, j] = (B^T d B)[i, j]`` that a segment of a pebble game uses was
red at its start, loaded, or computed in it from red predecessors. Route one unit of
charge from every ``P`` entry to its predecessors ``(B^T d)[i, l]`` (shares over the
``l`` of row ``j``'s support) and on to the raw inputs ``d[k, l]`` (shares over the ``k``
of row ``i``'s support); a value red at the start or loaded absorbs what reaches it. So
the ``P`` entries a segment uses number at most the sum of the loads routed to its
start-budget vertices. The routing is separable (row shares times column shares), so a
raw input's load is ``row_load(p) * col_load(q)``: one linear program per axis chooses
shares that keep the largest load small. Kernels alike with ``G``.

Caps (proofs/test_winograd_chain.py):

* ``cap_in``: all frequencies together, ``max(1, Lrow * Lcol)``;
* ``cap_in1``: one frequency ``(i, j)`` at a time, ``max(1, max_i Lrow_i * max_j Lcol_j)``;
* ``cap_w``: all frequencies of a kernel, ``max(1, Lg^2)``; one frequency: 1 (one
  ``J_nu`` entry per kernel);
* ``cross``: for an input-side ``v`` and kernel-side ``w``, ``sum_nu load_nu(v)
  kload_nu(w)`` with one joint routing per axis (:func:`cross_routing`), a product of
  one factor per axis.

Examples
--------
>>> c = winograd_caps(2, 3, (1, 1), (56, 56), (28, 28))
>>> round(c.cap_in, 6), round(c.cap_in1, 6), round(c.cap_w, 6), round(c.cross, 6), round(c.kappa, 6)
(4.0, 1.0, 1.777778, 1.0, 1.0)
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from . import limits
from .errors import InvalidInputError
from .winograd_transforms import check_winograd_tile, winograd_transforms

__all__ = ["AxisRouting", "axis_routing", "kernel_routing", "CrossRouting", "cross_routing",
           "WinogradCaps", "winograd_caps"]

#: Slack added to float loads so that rounding never makes a cap too small.
_EPS = 1e-9


@dataclass(frozen=True)
class AxisRouting:
    """Shares ``share[(t, i)] = {position: w}`` (summing to 1) and the loads they cause.

    ``load``: the largest total load of a position (all rows ``i`` routed);
    ``row_share[i]``, ``row_load[i]``: the routing of row ``i`` alone and its largest load.

    >>> a = axis_routing(2, 3, 1, 6, 3)   # F(2, 3): 6 positions, padding 1, 3 tiles
    >>> len(a.share), len(a.row_share), [round(x, 6) for x in a.row_load]
    (12, 4, [1.0, 0.5, 0.5, 1.0])
    >>> a.share[(0, 0)]   # tile 0's row 0 reads position -1 (padding, no vertex) and 1
    {1: 1.0}
    """

    share: dict
    load: float
    row_share: tuple[dict, ...]
    row_load: tuple[float, ...]


def _supports(m) -> list[list[int]]:
    return [[c for c in range(m.cols) if m[row, c] != 0] for row in range(m.rows)]


def _min_max_lp(demands: list[tuple], a_ub_rows) -> dict:
    """Shares (each demand's summing to 1) minimising ``lambda`` subject to ``A_ub x <= lambda``.

    ``demands`` are ``(key, [positions])``; ``a_ub_rows(var)`` gives the (sparse)
    inequality matrix over the share variables ``var = [(key, position), ...]``. Returns
    key -> {position: w}, renormalised so that every demand's shares sum to exactly 1.
    Both matrices are sparse (a few entries per variable), so memory is linear in the size.
    """
    var = [(key, p) for key, ps in demands for p in ps]
    nv = len(var)
    c = np.zeros(nv + 1)
    c[-1] = 1.0                                                  # minimise the largest load
    eq_rows = np.repeat(np.arange(len(demands)), [len(ps) for _, ps in demands])
    a_eq = sparse.csr_matrix((np.ones(nv), (eq_rows, np.arange(nv))),
                             shape=(len(demands), nv + 1))
    a_ub = sparse.csr_matrix(a_ub_rows(var))
    a_ub = sparse.hstack([a_ub, sparse.csr_matrix(-np.ones((a_ub.shape[0], 1)))], format="csr")
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(a_ub.shape[0]), A_eq=a_eq, b_eq=np.ones(len(demands)),
                  bounds=[(0, None)] * (nv + 1), method="highs")
    if res.status != 0:                                          # pragma: no cover - LP is feasible
        raise RuntimeError(f"routing LP failed: {res.message}")
    out: dict = {}
    for v, (key, p) in enumerate(var):
        out.setdefault(key, {})[p] = max(float(res.x[v]), 0.0)
    return {key: {p: x / sum(w.values()) for p, x in w.items()} for key, w in out.items()}


def _solve(demands: list[tuple], n_pos: int) -> dict:
    """Min-max-load fractional routing: ``demands`` are ``(key, [positions])``; -> key -> {pos: w}."""
    if not demands:
        return {}

    def rows(var):
        pos = np.fromiter((p for _, p in var), dtype=np.int64, count=len(var))
        return sparse.csr_matrix((np.ones(len(var)), (pos, np.arange(len(var)))),
                                 shape=(n_pos, len(var)))
    return _min_max_lp(demands, rows)


def _loads(share: dict, n_pos: int, rows=None) -> float:
    load = np.zeros(n_pos)
    for (t, i), w in share.items():
        if rows is None or i in rows:
            for p, x in w.items():
                load[p] += x
    return float(load.max()) + _EPS if n_pos else 0.0


def _pair(name: str, value) -> tuple:
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        raise InvalidInputError(f"{name} must be a pair (rows, columns), got {value!r:.60}")
    return tuple(value)


def _axis_args(e, r, pad, size, tiles) -> tuple[int, ...]:
    """The arguments of one axis' routing as ints, each checked (the caches below compare
    keys by equality: True would be answered as 1)."""
    e, r = check_winograd_tile(e, r)
    return (e, r, limits.check_int("pad", pad, limits.PADDING),
            limits.check_int("size", size, limits.AXIS),
            limits.check_int("tiles", tiles, limits.AXIS))


def axis_routing(e: int, r: int, pad: int, size: int, tiles: int) -> AxisRouting:
    """Routing of the input transform's rows along one axis (``size`` positions, ``tiles`` tiles).

    Tile ``t``'s row ``i`` may route to position ``t e + k - pad`` for ``k`` in the
    support of ``B^T``'s row ``i`` when that position is in bounds (padding is no
    vertex). The all-rows routing and the one-row routings are separate programs.

    Examples
    --------
    >>> round(axis_routing(2, 3, 1, 56, 28).load, 6)   # F(2, 3), padding 1: every position 2
    2.0
    """
    return _axis_routing(*_axis_args(e, r, pad, size, tiles))


@lru_cache(maxsize=512)
def _axis_routing(e: int, r: int, pad: int, size: int, tiles: int) -> AxisRouting:
    sup = _supports(winograd_transforms(e, r).BT)
    demands = [((t, i), [t * e + k - pad for k in ks if 0 <= t * e + k - pad < size])
               for t in range(tiles) for i, ks in enumerate(sup)]
    demands = [d for d in demands if d[1]]
    share = _solve(demands, size)
    row_share = tuple(_solve([d for d in demands if d[0][1] == i], size) for i in range(len(sup)))
    return AxisRouting(share, _loads(share, size), row_share,
                       tuple(_loads(rs, size) for rs in row_share))


def kernel_routing(e: int, r: int) -> AxisRouting:
    """Routing of ``G``'s rows to the ``r`` kernel positions of one axis.

    Examples
    --------
    >>> round(kernel_routing(2, 3).load, 6)   # 4/3: rows {0}, {2} and two rows over {0, 1, 2}
    1.333333
    """
    return _kernel_routing(*check_winograd_tile(e, r))


@lru_cache(maxsize=64)
def _kernel_routing(e: int, r: int) -> AxisRouting:
    sup = _supports(winograd_transforms(e, r).G)
    demands = [((0, i), list(ks)) for i, ks in enumerate(sup) if ks]
    share = _solve(demands, r)
    return AxisRouting(share, _loads(share, r), (), ())


@dataclass(frozen=True)
class CrossRouting:
    """One axis's joint routing of inputs (``share``) and kernels (``kernel[i] = {k: w}``).

    ``cross``: ``max(1, max_(p,k) sum_i Lr_i(p) g_i(k), max_(i,p) Lr_i(p))``, with
    ``Lr_i(p)`` the load row ``i`` (alone) puts on input position ``p`` and ``g_i(k)`` the
    share of kernel row ``i`` on kernel position ``k``: the largest ``sum_nu
    load_nu(v) kload_nu(w)`` factor of an input-side ``v`` and kernel-side ``w`` on this axis.

    >>> c = cross_routing(2, 3, 1, 6, 3)
    >>> round(c.cross, 6), c.kernel   # kernel row i -> its one kernel position
    (1.0, ({0: 1.0}, {1: 1.0}, {1: 1.0}, {2: 1.0}))
    """

    share: dict
    kernel: tuple[dict, ...]
    cross: float


#: Integral kernel routings tried per axis: the diagonal one (row i of G to the support
#: position nearest i (r - 1)/(n - 1)) and the first few others.
MAX_KERNEL_CHOICES = 6


def _kernel_choices(sup_g: list[list[int]], r: int):
    n = len(sup_g)
    diag = tuple(min(ks, key=lambda k: abs(k - i * (r - 1) / max(n - 1, 1))) for i, ks in enumerate(sup_g))
    yield diag
    yield from (p for p in itertools.islice(itertools.product(*sup_g), MAX_KERNEL_CHOICES) if p != diag)


def _cross_lp(demands: list[tuple], size: int, g: np.ndarray) -> tuple[float, dict]:
    """Input shares minimising ``max(sum_i Lr_i(p) g[i, k], Lr_i(p))`` for kernel shares ``g``."""
    n, r = g.shape

    def rows(var):
        ri, ci, vals = [], [], []
        for v, ((_, i), p) in enumerate(var):
            for kk in np.flatnonzero(g[i]):                      # sum_i Lr_i(p) g_i(k)
                ri.append(p * r + kk)
                ci.append(v)
                vals.append(g[i, kk])
            ri.append(size * r + p * n + i)                      # Lr_i(p)
            ci.append(v)
            vals.append(1.0)
        return sparse.csr_matrix((vals, (ri, ci)), shape=(size * (r + n), len(var)))
    share = _min_max_lp(demands, rows)
    lr = np.zeros((size, n))
    for (t, i), w in share.items():
        for p, x in w.items():
            lr[p, i] += x
    return max(1.0, float((lr @ g).max()), float(lr.max())) + _EPS, share


#: The least ``cross`` any routing has (every load is clamped at 1 from below).
_FLOOR = 1.0 + _EPS


def _unit_routing(demands: list[tuple], size: int, r: int, pick: list[int]) -> dict | None:
    """An integral routing of ``demands`` in which every (position, kernel position) and every
    (position, row) carries at most one unit, or None when there is none.

    Such a routing has ``cross`` = :data:`_FLOOR`, the least any routing (the LP's included)
    has; a maximum bipartite matching (demand -> position and its row's kernel position)
    finds one in a fraction of the LP's time. Each bin ``(p, pick[i])`` takes one unit, so
    each ``(p, i)`` does too.
    """
    from scipy.sparse.csgraph import maximum_bipartite_matching

    rows, cols = [], []
    for d, ((_, i), ps) in enumerate(demands):
        rows += [d] * len(ps)
        cols += [p * r + pick[i] for p in ps]
    graph = sparse.csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)),
                              shape=(len(demands), size * r))
    match = maximum_bipartite_matching(graph, perm_type="column")
    if (match < 0).any():
        return None
    return {key: {int(match[d]) // r: 1.0} for d, (key, _) in enumerate(demands)}


def cross_routing(e: int, r: int, pad: int, size: int, tiles: int) -> CrossRouting:
    """The joint routing of least ``cross`` over a few integral kernel routings (one axis).

    Any routing gives a valid cap; trying more only tightens it.

    Examples
    --------
    >>> round(cross_routing(2, 3, 1, 56, 28).cross, 6)   # F(2, 3): one charge per (input, weight) pair
    1.0
    """
    return _cross_routing(*_axis_args(e, r, pad, size, tiles))


@lru_cache(maxsize=512)
def _cross_routing(e: int, r: int, pad: int, size: int, tiles: int) -> CrossRouting:
    t = winograd_transforms(e, r)
    sup_bt, sup_g = _supports(t.BT), _supports(t.G)
    demands = [((tt, i), [tt * e + k - pad for k in ks if 0 <= tt * e + k - pad < size])
               for tt in range(tiles) for i, ks in enumerate(sup_bt)]
    demands = [d for d in demands if d[1]]
    if not demands:                                              # no input: nothing to route
        return CrossRouting({}, (), 1.0)
    best = None
    for pick in _kernel_choices(sup_g, r):
        g = np.zeros((len(sup_g), r))
        g[np.arange(len(sup_g)), list(pick)] = 1.0
        found = _unit_routing(demands, size, r, list(pick))
        cross, share = (_FLOOR, found) if found is not None else _cross_lp(demands, size, g)
        if best is None or cross < best[0] - 1e-12:
            best = (cross, share, tuple({k: 1.0} for k in pick))
        if best[0] == _FLOOR:    # cross is never below max(1, ...) + _EPS: no pick can do better
            break
    return CrossRouting(best[1], best[2], best[0])


@dataclass(frozen=True)
class WinogradCaps:
    """Largest routed loads of one layer's Winograd DAG (module docstring).

    >>> caps = WinogradCaps(cap_in=4.0, cap_in1=1.0, cap_w=16 / 9, cross=2.0)
    >>> round(caps.kappa, 4)   # sqrt(min(2, 1 * 16/9, 4))
    1.3333
    """

    cap_in: float
    cap_in1: float
    cap_w: float
    cross: float

    @property
    def kappa(self) -> float:
        """``sqrt(min(cross, cap_in1 cap_w, cap_in))``: products <= kappa sqrt(|D_in| |D_w| chains)."""
        return math.sqrt(min(self.cross, self.cap_in1 * self.cap_w, self.cap_in))


def winograd_caps(e: int, r: int, padding: tuple[int, int], size: tuple[int, int],
                  tiles: tuple[int, int]) -> WinogradCaps:
    """Caps of F(e x e, r x r) on an input of ``size = (h_in, w_in)`` with ``tiles = (th, tw)``
    (``padding`` too is one number per axis, ``(rows, columns)``).

    >>> c = winograd_caps(4, 3, (1, 1), (8, 8), (2, 2))   # F(4x4, 3x3) on an 8 x 8 input
    >>> round(c.cap_w, 6), round(c.kappa, 6)
    (4.0, 1.0)
    >>> winograd_caps(2, 3, 1, (6, 6), (3, 3))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: padding must be a pair (rows, columns), got 1
    """
    padding, size, tiles = (_pair(n, v) for n, v in (("padding", padding), ("size", size),
                                                       ("tiles", tiles)))
    rows = axis_routing(e, r, padding[0], size[0], tiles[0])
    cols = axis_routing(e, r, padding[1], size[1], tiles[1])
    lg = kernel_routing(e, r).load
    return WinogradCaps(cap_in=max(1.0, rows.load * cols.load),
                        cap_in1=max(1.0, max(rows.row_load) * max(cols.row_load)),
                        cap_w=max(1.0, lg * lg),
                        cross=(cross_routing(e, r, padding[0], size[0], tiles[0]).cross
                               * cross_routing(e, r, padding[1], size[1], tiles[1]).cross))
