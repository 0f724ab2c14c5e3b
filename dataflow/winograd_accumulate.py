"""The Winograd dataflow with one accumulator array: the paper's order, half its registers.

The paper's Winograd dataflow (:mod:`dataflow.winograd`) budgets two ``(e+r-1)^2``
temporary arrays per Winograd tile and output channel. Its computation order
(:func:`dataflow.schedules.tiled_schedule`) needs only one of them live across the input
channels: the accumulators ``M`` of the channel sums. Per input channel the rest is
transient: the channel's ``z`` kernel transforms (``z (n r + n^2)`` words with their
intermediates; the raw ``z r^2`` weights are staged), one tile's input transform
(``2 n^2`` with its intermediate) and, at the end, one output transform row (``e n``).
Same I/O as the paper's dataflow (:func:`dataflow.winograd.winograd_io`), a smaller
footprint, hence larger tiles for the same fast memory.

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
(480, 584)
"""

from __future__ import annotations

from iobound.layer import ConvLayer

from .io_volume import Footprint
from .optimal_tiles import TileChoice, _divisible, winograd_continuous_optimum, winograd_search
from .winograd import WinogradTiling, check_winograd_tiling, winograd_io

__all__ = ["winograd_accumulate_footprint", "optimal_winograd_accumulate_tiles"]


def _parts(layer: ConvLayer, e: int):
    """``(fixed(X, Y), per_z(X, Y))`` of the footprint, linear in z."""
    r, n = layer.k_h, e + layer.k_h - 1

    def fixed(x, y):
        return (y + r - 1) * (x + r - 1) + 2 * n * n + e * n

    def per_z(x, y):
        return r * r + n * r + n * n + (x // e) * (y // e) * n * n
    return fixed, per_z


def winograd_accumulate_footprint(layer: ConvLayer, tiling: WinogradTiling) -> Footprint:
    """On-chip words: staged raw input rectangle and raw kernels (shared), accumulators and
    transient transforms (registers)."""
    check_winograd_tiling(layer, tiling)
    t, r = tiling, layer.k_h
    shared = (t.y + r - 1) * (t.x + r - 1) + t.z * r * r
    fixed, per_z = _parts(layer, t.e)
    return Footprint.of(shared, fixed(t.x, t.y) + per_z(t.x, t.y) * t.z - shared)


def optimal_winograd_accumulate_tiles(layer: ConvLayer, fast_memory: int, e: int = 2,
                                      divisors: bool = True) -> TileChoice | None:
    """The tiling of least exact I/O within ``fast_memory`` words, or None when none fits.

    As :func:`dataflow.optimal_tiles.optimal_winograd_tiles` (multiples of ``e``, dividing
    the output when such tiles fit), with this module's footprint.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> best = optimal_winograd_accumulate_tiles(ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=1), 400)
    >>> best.tiling, best.io.total, best.footprint.total
    (WinogradTiling(e=2, x=4, y=4, z=2), 3264, 278)
    """
    layer.check_winograd()
    found = winograd_search(layer, fast_memory, e, divisors, *_parts(layer, e))
    if found is None:
        return None
    t = WinogradTiling(e, *found)
    return TileChoice("winograd", t, winograd_io(layer, t), winograd_accumulate_footprint(layer, t),
                      fast_memory, _divisible(layer, *found),
                      winograd_continuous_optimum(layer, e, fast_memory))
