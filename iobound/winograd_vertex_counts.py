"""Exact vertex counts of the Winograd F(e x e, r x r) DAG the Winograd bounds are stated for.

The DAG is the one :func:`dataflow.dag_winograd.winograd_conv_dag` builds (its docstring
gives the conventions); the direct DAG's counts are in :mod:`iobound.vertex_counts`.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=3, k_h=3, k_w=3)
>>> winograd_vertex_count(layer, 2)   # 32+54 sources, 6*28 + 2*32 transforms, 96+48, 24+12
498
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .layer import ConvLayer, takes_layer
from .limits import check_winograd_e
from .winograd_transforms import winograd_transforms

__all__ = ["WinogradCounts", "winograd_counts", "winograd_vertex_count", "winograd_vertex_count_lower",
           "winograd_products_lower", "winograd_gamma", "winograd_chain_count"]


@dataclass(frozen=True)
class WinogradCounts:
    """Vertex classes of the Winograd F(e x e, r x r) DAG of one layer.

    >>> tiny = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> c = winograd_counts(tiny, 2)
    >>> c.e, c.r, c.tiles, c.products, c.vertices
    (2, 3, 9, 2304, 5296)
    """

    e: int
    r: int
    tiles: int                 #: (b, tile) pairs whose input window has an in-bounds element
    used_inputs: int
    weights: int
    transformed_weights: int
    transformed_inputs: int
    products: int              #: element products (b, tile, co, ci, nu)
    sums: int                  #: channel-sum vertices, roots Pi included (c_in - 1 per tree)
    outputs: int

    @property
    def vertices(self) -> int:
        return (self.used_inputs + self.weights + self.transformed_weights
                + self.transformed_inputs + self.products + self.sums + self.outputs)


def _tiles_axis(size: int, out: int, e: int, n: int, pad: int, full_only: bool):
    """(tiles, used input positions, outputs covered) along one axis."""
    t = np.arange(-(-out // e))
    lo, hi = t * e - pad, t * e - pad + n          # input window [lo, hi)
    if full_only:
        keep = (lo >= 0) & (hi <= size) & (t * e + e <= out)
    else:
        keep = (hi > 0) & (lo < size)
    used = np.zeros(size, bool)
    for a, b in zip(lo[keep], hi[keep]):
        used[max(a, 0):min(b, size)] = True
    outs = np.minimum(t[keep] * e + e, out) - t[keep] * e
    return int(keep.sum()), int(used.sum()), int(outs.sum())


def _winograd(layer: ConvLayer, e: int, full_only: bool) -> WinogradCounts:
    layer.check_winograd()
    e = check_winograd_e(e)
    r = layer.k_h
    n = e + r - 1
    th, uh, oh = _tiles_axis(layer.h_in, layer.h_out, e, n, layer.padding[0], full_only)
    tw, uw, ow = _tiles_axis(layer.w_in, layer.w_out, e, n, layer.padding[1], full_only)
    nb, ci, co = layer.n, layer.c_in, layer.c_out
    tiles = nb * th * tw
    products = tiles * co * ci * n * n
    roots = tiles * co * n * n  # one channel-sum tree (root Pi) per (b, tile, c_out, nu)
    # Without a full tile nothing guarantees that every transformed weight is needed (the
    # builder drops those with no path to an output), so a lower count claims none.
    kernels = co * ci if tiles or not full_only else 0
    return WinogradCounts(
        e=e, r=r, tiles=tiles,
        used_inputs=nb * ci * uh * uw,
        weights=kernels * r * r,
        transformed_weights=kernels * n * n,
        transformed_inputs=tiles * ci * n * n,
        products=products,
        sums=roots * (ci - 1),
        outputs=nb * co * oh * ow,
    )


@takes_layer
@lru_cache(maxsize=4096, typed=True)  # typed: True or 2.0 is checked, not answered as 1 or 2
def winograd_counts(layer: ConvLayer, e: int) -> WinogradCounts:
    """Main vertex classes of the Winograd DAG, tile by tile (a simplified count).

    Every output tile whose ``n x n`` input window (from ``e t - pad``) holds an
    in-bounds input counts ``n^2`` transformed inputs per channel, ``n^2`` element
    products per (c_out, c_in), ``n^2 (c_in - 1)`` channel sums per c_out, and its
    outputs inside ``h_out x w_out``; plus ``c_out c_in`` kernels of ``r^2`` raw and
    ``n^2`` transformed weights. It leaves out the builder's intermediate transform
    passes (``B^T d``, ``G g``, ``A^T Pi``) and its border zero-dropping: the exact
    |V| is :func:`winograd_vertex_count`. Its counts include the padding's: an output
    tile whose window holds one input counts all its products and outputs, so its sums
    are no lower bound (:func:`winograd_products_lower` is; the bounds take only ``r``
    from here).

    >>> small = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=3, k_h=3, k_w=3)
    >>> c = winograd_counts(small, 2)   # one tile; the exact |V| (module example) is 498
    >>> c.tiles, c.products, c.vertices
    (1, 96, 370)
    >>> winograd_counts(ConvLayer(1, 4, 8, 8, 4, 3, 3, stride=2), 2)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: Winograd needs stride 1, got stride=(2, 2)
    """
    return _winograd(layer, e, full_only=False)


def _supports(m) -> tuple[tuple[int, ...], ...]:
    """Columns with a nonzero coefficient, per row of a SymPy matrix."""
    return tuple(tuple(c for c in range(m.cols) if m[i, c] != 0) for i in range(m.rows))


@dataclass(frozen=True)
class _WinogradAxis:
    """Per-axis sums over the tiles of one spatial axis (see :func:`winograd_vertex_count`)."""

    outputs: int       # sum over tiles of |need_y|
    pi: int            # sum over tiles of |need_pi|
    reads: int         # sum over tiles of |need_d|
    used_inputs: int   # |union over tiles of the needed input positions|
    kernel_pi: int     # |union over tiles of need_pi| (transformed-kernel rows needed)
    kernel_mid: int    # rows of G g needed by those (second-pass support)
    kernel_raw: int    # raw kernel rows needed by those


def _winograd_axis(size: int, out: int, e: int, r: int, pad: int, sup_at, sup_g, sup_bt) -> _WinogradAxis:
    n = e + r - 1
    s_y = s_pi = s_d = 0
    used: set[int] = set()
    jset: set[int] = set()
    for t in range(-(-out // e)):
        vin = [0 <= t * e + k - pad < size for k in range(n)]
        nz_t = [any(vin[k] for k in sup_bt[i]) for i in range(n)]
        need_y = [t * e + a < out and any(nz_t[i] for i in sup_at[a]) for a in range(e)]
        need_pi = [nz_t[i] and any(need_y[a] and i in sup_at[a] for a in range(e)) for i in range(n)]
        need_d = [vin[k] and any(need_pi[i] and k in sup_bt[i] for i in range(n)) for k in range(n)]
        s_y, s_pi, s_d = s_y + sum(need_y), s_pi + sum(need_pi), s_d + sum(need_d)
        used |= {t * e + k - pad for k in range(n) if need_d[k]}
        jset |= {i for i in range(n) if need_pi[i]}
    return _WinogradAxis(
        outputs=s_y, pi=s_pi, reads=s_d, used_inputs=len(used), kernel_pi=len(jset),
        kernel_mid=sum(any(l in sup_g[j] for j in jset) for l in range(r)),
        kernel_raw=sum(any(k in sup_g[i] for i in jset) for k in range(r)))


@takes_layer
def winograd_vertex_count(layer: ConvLayer, e: int) -> int:
    """|V| of the Winograd F(e x e, r x r) DAG that :func:`dataflow.winograd_conv_dag` builds.

    Exact for every layer (r = k_h = k_w, stride 1, dilation 1, any padding and shape);
    tested against the builder. The builder's convention (dataflow/dag_winograd.py):
    transforms are separable and done rows first (``T1 = B^T d``, ``P = T1 B``;
    ``U1 = G g``, ``J = U1 G^T``; ``Z = A^T Pi``, ``Y = Z A``), every entry of a transform
    pass is one vertex whose predecessors are the entries with a nonzero coefficient,
    zeros (padding, positions beyond the input, entries whose terms are all zero) are no
    vertices, outputs beyond ``h_out x w_out`` are not computed, vertices with no path to
    an output are dropped, and ``Pi[i, j]`` is a chain of ``c_in`` products and
    ``c_in - 1`` sums.

    Per axis and output tile ``t`` (input window from ``t e - pad``): ``vin[k]`` says
    whether window position k is in bounds, ``nz_t[i]`` whether row i of ``B^T d`` can be
    nonzero, ``need_y[a]`` whether output a is computed, ``need_pi[i]`` whether row i of
    ``Pi`` is needed, and ``need_d[k]`` whether input k is read. All structure is a
    product of a row-axis and a column-axis factor, so sums over tile pairs factorise:

    - outputs ``n c_out Y_h Y_w`` and ``A^T Pi`` entries ``n c_out Y_h PI_w``;
    - products and channel sums ``n c_out (2 c_in - 1) PI_h PI_w``;
    - ``P`` entries ``n c_in PI_h PI_w`` and ``B^T d`` entries ``n c_in PI_h D_w``;
    - inputs ``n c_in U_h U_w`` (positions read by some tile);
    - kernel transforms ``c_out c_in (K_h K_w + K_h M_w)`` and raw weights
      ``c_out c_in W_h M_w`` (K: transformed rows any tile needs, M and W: the rows of
      ``G g`` and of ``g`` those need).

    Raises
    ------
    ValueError
        When Winograd does not apply to the layer, or ``e < 1``.

    Examples
    --------
    Also for layers whose DAG is far too large to build (F(4x4, 3x3) here; the module
    example is a small one):

    >>> from iobound.networks import get_layer
    >>> f"{winograd_vertex_count(get_layer('vgg16.conv3_2'), 4):,}"
    '933,545,984'
    """
    # checked on every call, not behind the cache (which would answer e=True with e=1)
    layer.check_winograd()
    return _vertex_count(layer, check_winograd_e(e))


@lru_cache(maxsize=4096)
def _vertex_count(layer: ConvLayer, e: int) -> int:
    """:func:`winograd_vertex_count` of a checked layer and ``e``."""
    r = layer.k_h
    t = winograd_transforms(e, r)
    sups = (_supports(t.AT), _supports(t.G), _supports(t.BT))
    h = _winograd_axis(layer.h_in, layer.h_out, e, r, layer.padding[0], *sups)
    w = _winograd_axis(layer.w_in, layer.w_out, e, r, layer.padding[1], *sups)
    nb, ci, co = layer.n, layer.c_in, layer.c_out
    return (nb * co * (h.outputs * w.outputs + h.outputs * w.pi + (2 * ci - 1) * h.pi * w.pi)
            + nb * ci * (h.pi * w.pi + h.pi * w.reads + h.used_inputs * w.used_inputs)
            + co * ci * (h.kernel_pi * w.kernel_pi + h.kernel_pi * w.kernel_mid
                         + h.kernel_raw * w.kernel_mid))


@takes_layer
@lru_cache(maxsize=4096, typed=True)  # typed: True or 2.0 is checked, not answered as 1 or 2
def winograd_chain_count(layer: ConvLayer, e: int) -> int:
    """Channel-sum chains (``Pi`` vertices) of the builder's Winograd DAG, exactly.

    Every chain has ``c_in`` element products (all transformed weights are nonzero), so
    the DAG's product count is ``c_in`` times this.

    Examples
    --------
    >>> winograd_chain_count(ConvLayer(1, 2, 6, 6, 3, 3, 3), 2)   # 4 tiles, 16 Pi each, 3 c_out
    192
    """
    layer.check_winograd()
    e = check_winograd_e(e)
    t = winograd_transforms(e, layer.k_h)
    sups = (_supports(t.AT), _supports(t.G), _supports(t.BT))
    h = _winograd_axis(layer.h_in, layer.h_out, e, layer.k_h, layer.padding[0], *sups)
    w = _winograd_axis(layer.w_in, layer.w_out, e, layer.k_h, layer.padding[1], *sups)
    return layer.n * layer.c_out * h.pi * w.pi


@takes_layer
@lru_cache(maxsize=4096, typed=True)  # typed: True or 2.0 is checked, not answered as 1 or 2
def winograd_vertex_count_lower(layer: ConvLayer, e: int) -> int:
    """A lower count of |V| of the Winograd DAG, independent of border conventions.

    The classes of :func:`winograd_counts` for *full* tiles only (window entirely in
    bounds, all ``e^2`` outputs inside the output), which every border convention
    contains; at most :func:`winograd_vertex_count` (tested).

    >>> tiny = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> winograd_vertex_count_lower(tiny, 2), winograd_vertex_count(tiny, 2)   # 1 full tile of 9
    (992, 6256)
    """
    return _winograd(layer, e, full_only=True).vertices


@takes_layer
@lru_cache(maxsize=4096, typed=True)  # typed: True or 2.0 is checked, not answered as 1 or 2
def winograd_products_lower(layer: ConvLayer, e: int) -> int:
    """Element products of full tiles: a lower count of the DAG's products.

    In a full tile every output is computed and every column of ``A^T`` is nonzero,
    so all ``n^2`` frequencies are needed for every (c_out, c_in).

    >>> tiny = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> winograd_products_lower(tiny, 2), tiny.c_in * winograd_chain_count(tiny, 2)   # vs exact
    (256, 2304)
    """
    return _winograd(layer, e, full_only=True).products


@takes_layer
def winograd_gamma(layer: ConvLayer, e: int) -> int:
    """``n^2 ceil(n/e)^2``: most transformed entries (P or J) one raw value feeds.

    An input lies in at most ``ceil(n/e)^2`` tile windows (windows of width n
    stepped by e); in each, the rows-first transform ``B^T d`` gives it at most
    ``n`` successors, each with at most ``n`` successors in ``P = (B^T d) B``. A raw
    weight feeds at most ``n`` entries of ``G g`` and ``n^2`` of ``J``.

    >>> tiny = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> winograd_gamma(tiny, 2), winograd_gamma(tiny, 4)   # n = 4: 16 * 2^2; n = 6: 36 * 2^2
    (64, 144)
    """
    layer.check_winograd()
    e = check_winograd_e(e)
    n = e + layer.k_h - 1
    return n * n * math.ceil(n / e) ** 2
