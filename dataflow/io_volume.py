"""Shared result types and the per-axis used-set counting of the dataflow I/O.

The exact global traffic of a tiled convolution dataflow (conventions.md) factorises
per axis: a block whose output rows are ``[oy0, oy1)`` loads the input rows
``{oy * mu + i * d - p : oy0 <= oy < oy1, 0 <= i < k} & [0, n_in)`` of every input
channel, and likewise for columns. Counting the used rows of every row tile and the
used columns of every column tile is enough; the loads of a block are
``c_in * rows * cols``. This module counts those sets with vectorised numpy (the distinct
``(tile, input)`` pairs of one axis), without per-element loops.

Examples
--------
>>> used_per_tile(n_out=5, tile=2, stride=1, dilation=1, k=3, pad=1, n_in=5).tolist()
[3, 4, 2]
>>> tile_extents(5, 2).tolist()
[2, 2, 1]
>>> used_totals(n_out=5, stride=1, dilation=1, k=3, pad=1, n_in=5).tolist()   # sizes 1..5
[13, 9, 7, 7, 5]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from iobound import limits
from iobound.errors import InvalidInputError

__all__ = [
    "DataflowIO",
    "Footprint",
    "least_size_per_count",
    "tile_extents",
    "used_per_tile",
    "used_total",
    "used_totals",
    "channel_group_spans",
    "check_block_memory",
]


@dataclass(frozen=True)
class DataflowIO:
    """Exact global traffic of a dataflow, in words.

    Attributes
    ----------
    input_loads, weight_loads, output_stores : int
        Loads of input elements (each used in-bounds element once per block), loads of
        weights (all of a block's weights once per block) and stores of final outputs.
    total : int
        Their sum.

    Examples
    --------
    >>> from iobound import ConvLayer
    >>> from dataflow import DirectTiling, direct_footprint, direct_io
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> direct_io(layer, DirectTiling(x=3, y=3, z=2, alpha=1))
    DataflowIO(input_loads=512, weight_loads=576, output_stores=144, total=1232)
    """

    input_loads: int
    weight_loads: int
    output_stores: int
    total: int

    @classmethod
    def of(cls, input_loads: int, weight_loads: int, output_stores: int) -> "DataflowIO":
        """Build from the three parts, with ``total`` their sum.

        Examples
        --------
        >>> DataflowIO.of(3, 4, 5).total
        12
        """
        i, w, o = int(input_loads), int(weight_loads), int(output_stores)
        return cls(input_loads=i, weight_loads=w, output_stores=o, total=i + w + o)

    def times(self, count: int) -> "DataflowIO":
        """The traffic of ``count`` copies of this dataflow (every part times ``count``): a
        grouped layer's per-group dataflow runs once per group.

        >>> DataflowIO.of(3, 4, 5).times(2)
        DataflowIO(input_loads=6, weight_loads=8, output_stores=10, total=24)
        """
        return DataflowIO.of(count * self.input_loads, count * self.weight_loads,
                             count * self.output_stores)

    def to_dict(self) -> dict:
        return {"input_loads": self.input_loads, "weight_loads": self.weight_loads,
                "output_stores": self.output_stores, "total": self.total}


@dataclass(frozen=True)
class Footprint:
    """On-chip words of one block: staged shared memory plus register storage.

    Attributes
    ----------
    shared_words : int
        Staged inputs and weights (shared memory).
    register_words : int
        Accumulators (direct) or Winograd temporary arrays (registers).
    total : int
        Their sum; this is what must fit in the fast memory of one block.

    Examples
    --------
    >>> from iobound import ConvLayer
    >>> from dataflow import DirectTiling, direct_footprint, direct_io
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> direct_footprint(layer, DirectTiling(x=3, y=3, z=2, alpha=1))  # 5x5 inputs, 18 weights
    Footprint(shared_words=43, register_words=18, total=61)
    """

    shared_words: int
    register_words: int
    total: int

    @classmethod
    def of(cls, shared_words: int, register_words: int) -> "Footprint":
        """Build from the two parts, with ``total`` their sum.

        Examples
        --------
        >>> Footprint.of(10, 6).total
        16
        """
        s, r = int(shared_words), int(register_words)
        return cls(shared_words=s, register_words=r, total=s + r)

    def to_dict(self) -> dict:
        return {"shared_words": self.shared_words, "register_words": self.register_words,
                "total": self.total}


def _axis_size(name: str, value) -> int:
    return limits.check_int(name, value, limits.AXIS)


def _axis_args(n_out, tile, stride, dilation, k, pad, n_in) -> tuple[int, ...]:
    """The arguments of one axis' count as ints, each checked against its limit."""
    return (_axis_size("n_out", n_out), limits.check_int("tile", tile, limits.TILE),
            limits.check_int("stride", stride, limits.STRIDE),
            limits.check_int("dilation", dilation, limits.DILATION),
            limits.check_int("k", k, limits.KERNEL), limits.check_int("pad", pad, limits.PADDING),
            _axis_size("n_in", n_in))


def tile_extents(n_out: int, tile: int) -> np.ndarray:
    """Sizes of the tiles that cover ``[0, n_out)`` from 0 in steps of ``tile``.

    The last tile is clipped (``min(tile, n_out - start)``).

    Examples
    --------
    >>> tile_extents(7, 3).tolist()
    [3, 3, 1]
    """
    n_out, tile = _axis_size("n_out", n_out), limits.check_int("tile", tile, limits.TILE)
    starts = np.arange(0, n_out, tile, dtype=np.int64)
    return np.minimum(tile, n_out - starts)


def least_size_per_count(n: int) -> np.ndarray:
    """The least tile size of every distinct tile count ``ceil(n / size)``, increasing.

    Computed from the ``O(sqrt n)`` distinct counts, without enumerating every size.

    Examples
    --------
    >>> least_size_per_count(10).tolist()
    [1, 2, 3, 4, 5, 10]
    """
    n = limits.check_int("n", n, limits.AXIS_PRODUCT)
    root = int(np.sqrt(n)) + 1
    small = np.arange(1, min(n, root) + 1, dtype=np.int64)          # sizes up to sqrt(n)
    counts = np.unique(np.concatenate([-(-n // small), np.arange(1, min(n, root) + 1)]))
    return np.unique(-(-n // counts))                                # least size of each count


def used_per_tile(n_out: int, tile: int, stride: int, dilation: int, k: int, pad: int,
                  n_in: int) -> np.ndarray:
    """Number of distinct in-bounds input indices each output tile of one axis reads.

    Parameters
    ----------
    n_out : int
        Output size along the axis.
    tile : int
        Tile size; tiles start at multiples of ``tile`` and the last one is clipped.
    stride, dilation, k, pad : int
        Stride, dilation, kernel size and (leading) zero padding along the axis.
    n_in : int
        Input size along the axis; indices outside ``[0, n_in)`` are padding and not
        counted.

    Returns
    -------
    numpy.ndarray
        One count per tile (int64).

    Examples
    --------
    Stride 3 with a 1-wide kernel skips two of every three input rows:

    >>> used_per_tile(n_out=4, tile=4, stride=3, dilation=1, k=1, pad=0, n_in=10).tolist()
    [4]
    """
    return _used_per_tile(*_axis_args(n_out, tile, stride, dilation, k, pad, n_in))


def _used_per_tile(n_out: int, tile: int, stride: int, dilation: int, k: int, pad: int,
                   n_in: int) -> np.ndarray:
    """:func:`used_per_tile` of arguments already checked (the dataflow counts')."""
    n_tiles = -(-n_out // tile)
    if dilation == 1 and stride <= k:   # a tile's windows overlap or touch: one interval
        starts = np.arange(n_tiles, dtype=np.int64) * tile
        stops = np.minimum(starts + tile, n_out) - 1
        lo = np.maximum(starts * stride - pad, 0)
        hi = np.minimum(stops * stride + k - 1 - pad, n_in - 1)
        return np.maximum(hi - lo + 1, 0)
    oy = np.arange(n_out, dtype=np.int64)
    taps = np.arange(k, dtype=np.int64) * dilation
    idx = oy[:, None] * stride + taps[None, :] - pad          # (n_out, k) input indices
    owner = np.broadcast_to((oy // tile)[:, None], idx.shape)   # tile of each output index
    keep = (idx >= 0) & (idx < n_in)
    if (k - 1) * dilation + 1 <= stride:   # windows never share an input: count taps
        return np.bincount(oy // tile, weights=keep.sum(axis=1), minlength=n_tiles).astype(np.int64)
    # distinct (tile, input) pairs; memory O(n_out k), not a tiles x n_in matrix
    pairs = np.unique(owner[keep] * np.int64(n_in) + idx[keep])
    return np.bincount(pairs // n_in, minlength=n_tiles).astype(np.int64)


def used_total(n_out: int, tile: int, stride: int, dilation: int, k: int, pad: int,
               n_in: int) -> int:
    """Sum over the tiles of one axis of their used input counts.

    Examples
    --------
    >>> used_total(n_out=5, tile=2, stride=1, dilation=1, k=3, pad=1, n_in=5)
    9
    """
    return int(_used_per_tile(*_axis_args(n_out, tile, stride, dilation, k, pad, n_in)).sum())


def _used_total(n_out: int, tile: int, stride: int, dilation: int, k: int, pad: int,
                n_in: int) -> int:
    """:func:`used_total` of arguments already checked: a checked layer's and tiling's, by
    the dataflow counts, which call it per tile."""
    return int(_used_per_tile(n_out, tile, stride, dilation, k, pad, n_in).sum())


def _taps_in_bounds(base: np.ndarray, taps: int, dilation: int, n_in: int) -> np.ndarray:
    """``#{t in [0, taps) : 0 <= base + t * dilation < n_in}`` for each ``base``."""
    lo = np.maximum(0, -(base // dilation))                    # ceil(-base / dilation)
    hi = np.minimum(taps - 1, (n_in - 1 - base) // dilation)
    return np.maximum(hi - lo + 1, 0)


def used_totals(n_out: int, stride: int, dilation: int, k: int, pad: int, n_in: int) -> np.ndarray:
    """:func:`used_total` of every tile size ``1 .. n_out`` of one axis at once (entry
    ``size - 1``), in ``O(n_out log n_out)`` time and ``O(n_out)`` memory.

    The outputs that read one input are ``g0 = d / gcd(mu, d)`` apart (taps ``r = mu /
    gcd(mu, d)`` apart), a contiguous run: so a tiling reads each input once per tile its
    run meets, ``T - G`` distinct inputs plus one per pair ``(o, o + g0)`` of outputs sharing
    an input that a tile boundary splits (``T`` the in-bounds taps of all outputs, ``G`` the
    sharing pairs, ``cnt[o]`` of them at ``o``: the in-bounds taps ``t < k - r`` of
    ``o + g0``). Tiles of ``size <= g0`` split every pair; a larger size has at most one
    boundary ``m * size`` in ``(o, o + g0]``, which splits the pairs at ``o`` in
    ``[b - g0, b)``: a prefix-sum difference per boundary, ``n_out / size`` boundaries.

    Examples
    --------
    Dilation 2, two taps, 5 outputs: sizes 3 and 4 both make two tiles, but 3 + 2 outputs
    read 5 + 4 inputs and 4 + 1 read 6 + 2:

    >>> used_totals(n_out=5, stride=1, dilation=2, k=2, pad=0, n_in=7).tolist()
    [10, 10, 9, 8, 7]
    >>> [used_total(5, s, 1, 2, 2, 0, 7) for s in range(1, 6)]
    [10, 10, 9, 8, 7]
    """
    n_out, _, stride, dilation, k, pad, n_in = _axis_args(n_out, 1, stride, dilation, k, pad,
                                                          n_in)
    g = math.gcd(stride, dilation)
    r, g0 = stride // g, dilation // g
    o = np.arange(n_out, dtype=np.int64)
    total = int(_taps_in_bounds(o * stride - pad, k, dilation, n_in).sum())
    cnt = np.zeros(n_out, dtype=np.int64)                       # pairs (o, o + g0) sharing an input
    if k > r and n_out > g0:
        cnt[:n_out - g0] = _taps_in_bounds((o[:n_out - g0] + g0) * stride - pad, k - r, dilation, n_in)
    shared = int(cnt.sum())
    out = np.full(n_out, total, dtype=np.int64)                 # size <= g0: every pair split
    big = np.arange(g0 + 1, n_out + 1, dtype=np.int64)
    if shared and big.size:
        prefix = np.concatenate([[0], np.cumsum(cnt)])
        q = (n_out - 1) // big                                  # boundaries m * size < n_out
        b = np.repeat(big, q) * (np.arange(q.sum()) - np.repeat(np.cumsum(q) - q, q) + 1)
        cover = np.concatenate([[0], np.cumsum(prefix[b] - prefix[np.maximum(b - g0, 0)])])
        ends = np.cumsum(q)
        out[big - 1] = total - shared + cover[ends] - cover[ends - q]
    return out


def channel_group_spans(c_out: int, per_group: int, z: int) -> int:
    """Sum over the output-channel tiles ``[c, c + z)`` of the channel groups each touches.

    A block whose ``z`` output channels span ``m`` groups of ``per_group`` channels reads
    the input channels of those ``m`` groups (grouped convolution); dense layers
    (``per_group == c_out``) touch one group per tile.

    Examples
    --------
    >>> channel_group_spans(c_out=8, per_group=8, z=3)     # dense: the tile count
    3
    >>> channel_group_spans(c_out=8, per_group=2, z=3)     # [0,3) [3,6) [6,8): 2 + 2 + 1
    5
    """
    c_out, per_group = _axis_size("c_out", c_out), _axis_size("per_group", per_group)
    z = limits.check_int("z", z, limits.TILE)
    if c_out % per_group:
        raise InvalidInputError(f"per_group={per_group} does not divide c_out={c_out}")
    return _channel_group_spans(c_out, per_group, z)


def _channel_group_spans(c_out: int, per_group: int, z: int) -> int:
    """:func:`channel_group_spans` of arguments already checked."""
    starts = np.arange(0, c_out, z, dtype=np.int64)
    ends = np.minimum(starts + z, c_out) - 1
    return int((ends // per_group - starts // per_group + 1).sum())


def shown_tiling(tiling) -> str:
    """A tiling (or whatever was given instead) for an error message: its short repr,
    after its type unless the repr names it.

    >>> shown_tiling((7, 7, 16))
    'tuple (7, 7, 16)'
    """
    text, kind = f"{tiling!r:.80}", type(tiling).__name__
    return text if text.startswith(kind) else f"{kind} {text}"


def check_block_memory(fast_memory: int, processors: int) -> int:
    """``fast_memory // processors``, the words one of ``processors`` blocks sharing
    ``fast_memory`` may use (each checked against its limit); InvalidInputError when that
    is not one word (a block of no word has no dataflow and no bound).

    >>> check_block_memory(12288, 4)
    3072
    >>> check_block_memory(12288, 10**6)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: fast memory of 12288 words leaves no word for each of 1000000 processors
    """
    fast_memory = limits.check_int("fast_memory", fast_memory, limits.FAST_MEMORY_WORDS)
    processors = limits.check_int("processors", processors, limits.PROCESSORS)
    if fast_memory // processors < 1:
        raise InvalidInputError(f"fast memory of {fast_memory} words leaves no word for each of "
                                f"{processors} processors")
    return fast_memory // processors
