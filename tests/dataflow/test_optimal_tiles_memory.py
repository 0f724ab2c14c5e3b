"""The tile searches (dataflow/optimal_tiles.py) list only the tiles that fit.

Reference: tracemalloc's peak. A fast memory that admits only small tiles must not cost
a grid over every tile size of the output (w_out x h_out int64 arrays: about 100 MiB at
1024 x 1024, several GiB at the 8192 x 8192 the limits allow).
"""

from __future__ import annotations

import tracemalloc

from dataflow.optimal_tiles import optimal_direct_tiles, optimal_winograd_tiles
from iobound.layer import ConvLayer


def _peak_mib(fn) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def test_tile_searches_build_no_grid_of_every_tile_size():
    """A 1024 x 1024 output and 4096 words: only tiles of a few hundred outputs a side fit,
    yet the searches allocated w_out x h_out int64 grids (about 100 MiB; 8192 x 8192 layers,
    within the limits, need several GiB and fail with MemoryError)."""
    layer = ConvLayer(1, 1, 1024, 1024, 1, 3, 3, padding=1)
    optimal_direct_tiles(ConvLayer(1, 1, 8, 8, 1, 3, 3), 64)        # warm the SymPy cache
    optimal_winograd_tiles(ConvLayer(1, 1, 8, 8, 1, 3, 3), 256, 1)
    assert _peak_mib(lambda: optimal_winograd_tiles(layer, 4096, 1, divisors=False)) < 24
    assert _peak_mib(lambda: optimal_direct_tiles(layer, 4096, divisors=False)) < 24
