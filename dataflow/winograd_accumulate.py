"""The Winograd dataflow with one accumulator array: the paper's order, a quarter of its words.

The paper's Winograd dataflow (:mod:`dataflow.winograd`) budgets two ``(e+r-1)^2``
temporary arrays per Winograd tile and output channel, plus staged raw kernels. Its
computation order (:func:`dataflow.schedules.tiled_schedule`) needs only one of them
live across the input channels: the accumulators ``M`` of the channel sums. Per input
channel the rest is transient or small: the ``z`` transformed kernels ``J`` of the
channel (``z n^2`` words, computed kernel by kernel, so one raw kernel and its ``G g``,
``r^2 + n r`` words, at a time), the channel's raw input rectangle, one tile's input
transform (``2 n^2`` with its intermediate) and, at the end, one output transform row
(``e n``). So a block holds ``rect + r^2 + n r + 2 n^2 + e n + z n^2 (1 + t)`` words,
``t = (x/e)(y/e)`` tiles. Same I/O formula as the paper's dataflow
(:func:`dataflow.winograd.winograd_io`), a smaller footprint, hence larger tiles.

The number ``z`` of output channels per block is chosen by exact I/O and need not divide
``c_out`` (the last channel block is smaller; ``x`` and ``y`` still divide the output when
such tiles fit): for VGG-16 and ResNet-50 at 48 KiB this alone moves 10-30% less than
the best dividing ``z``.

Played in the pebble game with this footprint (+2 for the multiply-accumulate in flight,
:func:`iobound.multi_block.bound_fast_memory`), the tiled schedule moves at most the
formula's words (tests/dataflow/test_winograd_accumulate.py).

Examples
--------
>>> from iobound.layer import ConvLayer
>>> from dataflow.winograd import WinogradTiling, winograd_footprint
>>> layer = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=(1, 1))
>>> t = WinogradTiling(e=2, x=4, y=4, z=4)
>>> winograd_accumulate_footprint(layer, t).total, winograd_footprint(layer, t).total
(417, 584)
"""

from __future__ import annotations

from iobound import limits
from iobound.algorithms import DEFAULT_WINOGRAD_E
from iobound.layer import ConvLayer

from .io_volume import Footprint
from .optimal_tiles import (TileChoice, _check_layer, _divisible, winograd_continuous_optimum,
                            winograd_search)
from .winograd import WinogradTiling, check_winograd_tiling, winograd_io

__all__ = ["winograd_accumulate_footprint", "optimal_winograd_accumulate_tiles"]


def _parts(layer: ConvLayer, e: int):
    """``(fixed(X, Y), per_z(X, Y))`` of the footprint, linear in z."""
    r, n = layer.k_h, e + layer.k_h - 1

    def fixed(x, y):
        return (y + r - 1) * (x + r - 1) + r * r + n * r + 2 * n * n + e * n

    def per_z(x, y):
        return n * n + (x // e) * (y // e) * n * n
    return fixed, per_z


def winograd_accumulate_footprint(layer: ConvLayer, tiling: WinogradTiling) -> Footprint:
    """On-chip words: the raw input rectangle and one raw kernel (shared), accumulators,
    transformed kernels and transient transforms (registers).

    Examples
    --------
    One block for the whole output and all channels: the accumulators dominate.

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
    >>> winograd_accumulate_footprint(layer, WinogradTiling(e=2, x=8, y=8, z=8))
    Footprint(shared_words=109, register_words=2228, total=2337)
    """
    check_winograd_tiling(layer, tiling)
    t, r = tiling, layer.k_h
    shared = (t.y + r - 1) * (t.x + r - 1) + r * r
    fixed, per_z = _parts(layer, t.e)
    return Footprint.of(shared, fixed(t.x, t.y) + per_z(t.x, t.y) * t.z - shared)


def optimal_winograd_accumulate_tiles(layer: ConvLayer, fast_memory: int, e: int = DEFAULT_WINOGRAD_E,
                                      divisors: bool = True) -> TileChoice | None:
    """The tiling of least exact I/O within ``fast_memory`` words, or None when none fits.

    As :func:`dataflow.optimal_tiles.optimal_winograd_tiles` (``x``, ``y`` multiples of
    ``e``, dividing the output when such tiles fit), with this module's footprint and any
    ``z`` (module docstring).

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> best = optimal_winograd_accumulate_tiles(ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=1), 400)
    >>> best.tiling, best.io.total, best.footprint.total
    (WinogradTiling(e=2, x=4, y=4, z=3), 2864, 337)
    """
    _check_layer(layer)
    layer.check_winograd()
    e = limits.check_int("winograd e", e, limits.WINOGRAD_E)
    fast_memory = limits.check_int("fast_memory", fast_memory, limits.FAST_MEMORY_WORDS)
    divisors = limits.check_flag("divisors", divisors)
    found = winograd_search(layer, fast_memory, e, divisors, *_parts(layer, e), free_z=True)
    if found is None:
        return None
    t = WinogradTiling(e, *found)
    return TileChoice("winograd", t, winograd_io(layer, t), winograd_accumulate_footprint(layer, t),
                      fast_memory, _divisible(layer, *found),
                      winograd_continuous_optimum(layer, e, fast_memory))
