"""Direct dataflows by which operand stays on chip: output-, weight- or input-stationary.

All three compute ``x * y * z`` output tiles (width, height, output channels), keep the
tile's accumulators on chip and stream the input channels in chunks of ``alpha``
(:mod:`dataflow.direct`); they differ in what a block keeps between tiles:

* ``"output"``: nothing; a block is one tile (:func:`dataflow.direct.direct_io`):
  inputs ``n_z`` times (halos included), all weights once per spatial tile.
* ``"weight"``: a block owns ``z`` output channels and keeps their weights for all input
  channels (``z c_in k_h k_w`` words) while it walks over every image and spatial tile:
  weights once in all, inputs ``n_z`` times as for ``"output"``.
* ``"input"``: a block owns one spatial tile of one image and keeps its input rectangle for
  all input channels (``c_in`` rows x cols) while it walks over the output channels in
  chunks of ``z``: inputs once per spatial tile, weights once per spatial tile.

Exact I/O follows the conventions of :func:`dataflow.direct.direct_io` (used in-bounds
inputs once per block; all of a block's weights; every output once). The footprint is
what a block holds at once; the choice per layer is by least exact I/O
(:func:`best_direct_dataflow`). ``"weight"`` trades parallelism for traffic: only
``ceil(c_out / z)`` blocks (the bound compares traffic, not time).

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=64, h_in=56, w_in=56, c_out=64, k_h=1, k_w=1)
>>> t = DirectTiling(x=1, y=8, z=64)
>>> [stationary_io(layer, t, o).total for o in ORDERS]
[2007040, 405504, 2007040]
>>> best = best_direct_dataflow(layer, 12288)
>>> best.order, best.io.total   # all weights fit: compulsory I/O
('weight', 405504)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iobound import limits
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer, takes_layer

from .direct import DirectTiling, check_dense, check_direct_tiling, direct_footprint, direct_io
from .io_volume import DataflowIO, Footprint, least_size_per_count, used_totals

__all__ = ["ORDERS", "StationaryChoice", "stationary_io", "stationary_footprint",
           "best_direct_dataflow", "stationary_schedule"]

#: Which operand a block keeps on chip between tiles.
ORDERS = ("output", "weight", "input")


def _check_order(order: str) -> None:
    if order not in ORDERS:
        raise InvalidInputError(f"unknown dataflow order {order!r}; choose one of {', '.join(ORDERS)}")


def _tile_in(layer: ConvLayer, x, y):
    return (((y - 1) * layer.stride[0] + layer.extent_h)
            * ((x - 1) * layer.stride[1] + layer.extent_w))


@takes_layer
def stationary_io(layer: ConvLayer, tiling: DirectTiling, order: str = "output") -> DataflowIO:
    """Exact global loads and stores (words) of the dataflow ``order`` with ``tiling``.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=(1, 1))
    >>> stationary_io(layer, DirectTiling(4, 4, 4), "input")
    DataflowIO(input_loads=400, weight_loads=1152, output_stores=512, total=2064)
    """
    _check_order(order)
    base = direct_io(layer, tiling)
    if order == "output":
        return base
    check_dense(layer, f"the {order}-stationary dataflow")
    if order == "weight":
        return DataflowIO.of(base.input_loads, layer.weight_size, base.output_stores)
    n_z = -(-layer.c_out // tiling.z)
    return DataflowIO.of(base.input_loads // n_z, base.weight_loads, base.output_stores)


@takes_layer
def stationary_footprint(layer: ConvLayer, tiling: DirectTiling, order: str = "output") -> Footprint:
    """On-chip words of one block: staged or resident operands plus the tile's accumulators.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=(1, 1))
    >>> stationary_footprint(layer, DirectTiling(4, 4, 4), "weight")
    Footprint(shared_words=180, register_words=64, total=244)
    """
    _check_order(order)
    check_direct_tiling(layer, tiling)
    t, kk = tiling, layer.k_h * layer.k_w
    if order == "output":
        return direct_footprint(layer, t)
    check_dense(layer, f"the {order}-stationary dataflow")
    if order == "weight":
        shared = t.z * layer.c_in * kk + t.alpha * _tile_in(layer, t.x, t.y)
    else:
        shared = layer.c_in * _tile_in(layer, t.x, t.y) + t.z * t.alpha * kk
    return Footprint.of(shared, t.x * t.y * t.z)


@dataclass(frozen=True)
class StationaryChoice:
    """The dataflow of least exact I/O: its order, tiling, I/O and footprint.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> c = best_direct_dataflow(ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=1), 300)
    >>> c.order, c.tiling, c.divisible
    ('input', DirectTiling(x=4, y=8, z=1, alpha=1), True)
    >>> c.io.total, c.footprint.total
    (1408, 281)
    """

    order: str
    tiling: DirectTiling
    io: DataflowIO
    footprint: Footprint
    divisible: bool


def _z_values(c_out: int, divisors: bool) -> np.ndarray:
    if divisors:
        return np.array([d for d in range(1, c_out + 1) if c_out % d == 0], dtype=np.int64)
    return least_size_per_count(c_out)


def _fewest_reads_per_count(n: int, used: np.ndarray) -> np.ndarray:
    """Whether each size ``1 .. n`` reads fewer inputs (``used``, entry ``size - 1``) than
    every smaller size of its tile count ``ceil(n / size)``.

    The only sizes a search of any size needs: another size of the same count makes the
    same tiles along the axis (the same weight reloads) with a larger footprint, so it can
    only do better by reading fewer inputs.

    Examples
    --------
    >>> _fewest_reads_per_count(5, np.array([10, 10, 9, 8, 7])).tolist()   # 4 reads less than 3
    [True, True, True, True, True]
    >>> _fewest_reads_per_count(5, np.array([5, 5, 5, 5, 5])).tolist()      # counts 5, 3, 2, 2, 1
    [True, True, True, False, True]
    """
    sizes = np.arange(1, n + 1, dtype=np.int64)
    counts = -(-n // sizes)                       # non-increasing: each count's sizes are a run
    keep = np.zeros(n, dtype=bool)
    starts = np.flatnonzero(np.diff(counts, prepend=n + 1))
    for a, b in zip(starts, np.append(starts[1:], n)):
        run = used[a:b]
        keep[a:b] = run < np.minimum.accumulate(np.concatenate([[run[0] + 1], run[:-1]]))
    return keep


def _axis(layer: ConvLayer, i: int, divisors: bool, s: int) -> tuple[np.ndarray, np.ndarray]:
    """(candidate tile sizes of axis ``i`` (0: rows, 1: columns), the inputs each reads per
    channel, :func:`dataflow.io_volume.used_total`), none above ``s`` (a block holds
    ``x y z <= s``): the divisors of the axis, or for any size, per tile count the sizes
    that read fewer inputs than every smaller size of that count (exact:
    :func:`_fewest_reads_per_count`)."""
    n_out, n_in, k = ((layer.h_out, layer.h_in, layer.k_h) if i == 0
                      else (layer.w_out, layer.w_in, layer.k_w))
    used = used_totals(n_out, layer.stride[i], layer.dilation[i], k, layer.padding[i], n_in)
    sizes = np.arange(1, n_out + 1, dtype=np.int64)
    keep = (n_out % sizes == 0) if divisors else _fewest_reads_per_count(n_out, used)
    keep &= sizes <= s
    return sizes[keep], used[keep]


def _pairs(layer: ConvLayer, s: int, divisors: bool):
    """(x, y, used inputs of all blocks per channel pass) for the spatial tiles with x y <= s."""
    (xs, ux), (ys, uy) = _axis(layer, 1, divisors, s), _axis(layer, 0, divisors, s)
    counts = np.searchsorted(ys, s // xs, side="right")
    if counts.sum() == 0:
        return None
    x = np.repeat(xs, counts)
    y = np.concatenate([ys[:c] for c in counts])
    used = np.repeat(ux, counts) * np.concatenate([uy[:c] for c in counts])
    return x, y, used


def _search(layer: ConvLayer, s: int, order: str, divisors: bool, alpha: int, pairs):
    """Search over (x, y, z) (every candidate of ``pairs``, the :func:`_pairs` of the same s and
    divisors); returns (io, footprint, x, y, z) or None."""
    X, Y, used = pairs
    inputs = layer.n * layer.c_in * used
    n_xy = -(-layer.w_out // X) * -(-layer.h_out // Y)
    kk, tile_in = layer.k_h * layer.k_w, _tile_in(layer, X, Y)
    best = None
    for z in _z_values(layer.c_out, divisors):
        n_z = -(-layer.c_out // z)
        if order == "output":
            io = n_z * inputs + layer.n * n_xy * layer.weight_size
            foot = alpha * tile_in + z * alpha * kk + X * Y * z
        elif order == "weight":
            io = n_z * inputs + layer.weight_size
            foot = z * layer.c_in * kk + alpha * tile_in + X * Y * z
        else:
            io = inputs + layer.n * n_xy * layer.weight_size
            foot = layer.c_in * tile_in + z * alpha * kk + X * Y * z
        fits = np.flatnonzero(foot <= s)
        if fits.size == 0:
            continue
        k = fits[np.lexsort((foot[fits], io[fits]))[0]]   # least I/O, then footprint, then first
        hit = (int(io[k]), int(foot[k]), int(X[k]), int(Y[k]), int(z))
        if best is None or hit[:2] < best[:2]:
            best = hit
    return best


@takes_layer
def best_direct_dataflow(layer: ConvLayer, fast_memory: int, divisors: bool = True,
                         orders: tuple[str, ...] = ORDERS, alpha: int = 1) -> StationaryChoice:
    """The order and tiling of least exact I/O within ``fast_memory`` words (ties: smaller footprint).

    Parameters
    ----------
    layer : ConvLayer
    fast_memory : int
        Words one block may hold.
    divisors : bool
        Only tiles that divide w_out, h_out, c_out (the search domain's rule). ``False``:
        tiles of any size, exactly (per axis and tile count, every size that reads fewer
        inputs than each smaller size of that count; the others cannot do better).
    orders : tuple of str
        The orders to consider (default all of :data:`ORDERS`).
    alpha : int
        Input channels streamed per step.

    Raises
    ------
    ValueError
        For an unknown order, or when no block fits.

    Examples
    --------
    With a third of the weights on chip, weight-stationary still wins; without it, input:

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=64, h_in=56, w_in=56, c_out=64, k_h=1, k_w=1)
    >>> best = best_direct_dataflow(layer, 4096)
    >>> best.order, best.tiling.z, best.io.total
    ('weight', 32, 606208)
    >>> best_direct_dataflow(layer, 4096, orders=("output", "input")).order
    'input'
    """
    for o in orders:
        _check_order(o)
    check_dense(layer, "best_direct_dataflow")
    if not orders:
        raise InvalidInputError(f"orders must name at least one of {', '.join(ORDERS)}")
    fast_memory = limits.check_int("fast_memory", fast_memory, limits.FAST_MEMORY_WORDS)
    divisors = limits.check_flag("divisors", divisors)
    found = []
    pairs = _pairs(layer, fast_memory, divisors)
    for o in orders if pairs is not None else ():
        hit = _search(layer, fast_memory, o, divisors, alpha, pairs)
        if hit is not None:
            found.append((hit[:2], ORDERS.index(o), o, hit[2:]))
    if not found:
        raise InvalidInputError(f"fast memory of {fast_memory} words is too small for any block of "
                         f"the orders {', '.join(orders)}")
    _, _, order, (x, y, z) = min(found)
    t = DirectTiling(x, y, z, alpha)
    return StationaryChoice(order, t, stationary_io(layer, t, order),
                            stationary_footprint(layer, t, order),
                            layer.w_out % x == 0 and layer.h_out % y == 0 and layer.c_out % z == 0)


def stationary_schedule(dag, layer: ConvLayer, tiling: DirectTiling, order: str = "output"):
    """The computation order of the dataflow ``order`` (a :class:`dataflow.schedules.TiledSchedule`).

    ``"output"`` is :func:`dataflow.schedules.tiled_schedule`. ``"weight"``: a block per
    chunk of ``z`` output channels, visiting every image and spatial tile. ``"input"``: a
    block per image and spatial tile, visiting the output channels in chunks of ``z``.
    ``block_starts`` marks the blocks (``play(..., flush_at=...)`` empties fast memory there).

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> from dataflow.dag_direct import direct_conv_dag
    >>> layer = ConvLayer(1, 2, 4, 4, 4, 3, 3)
    >>> stationary_schedule(direct_conv_dag(layer), layer, DirectTiling(1, 2, 2), "weight").block_starts
    (0, 280)
    """
    from .schedules import TiledSchedule, direct_tile_order, tiled_schedule

    _check_order(order)
    check_direct_tiling(layer, tiling)
    if order == "output":
        return tiled_schedule(dag, layer, tiling)
    check_dense(layer, f"the {order}-stationary schedule")
    t = tiling
    spatial = [(b, range(oy, min(oy + t.y, layer.h_out)), range(ox, min(ox + t.x, layer.w_out)))
               for b in range(layer.n) for oy in range(0, layer.h_out, t.y)
               for ox in range(0, layer.w_out, t.x)]
    chunks = [range(c, min(c + t.z, layer.c_out)) for c in range(0, layer.c_out, t.z)]
    outer, inner = (chunks, spatial) if order == "weight" else (spatial, chunks)
    seq, starts = [], []
    for blk in outer:
        starts.append(len(seq))
        for part in inner:
            (b, rows, cols), cos = (part, blk) if order == "weight" else (blk, part)
            seq += direct_tile_order(layer, b, rows, cols, cos, t.alpha)
    return TiledSchedule(order=tuple(seq), block_starts=tuple(starts), algorithm="direct", tiling=t)
