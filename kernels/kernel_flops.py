"""Floating-point operations a generated kernel executes (FMA = 2).

The dataflow's count (:mod:`dataflow.flops`) is the arithmetic of the schedule: each
transform once per block that needs it, each Winograd tile once. The kernels execute the
same, except at the output's edge: a block clipped by it still computes its whole tile
(the stores are masked, the arithmetic is not). So

- the direct kernel computes every output of its ``x * y * z`` tile: the dataflow's
  ``2 * MACs`` when the tiles divide the output, more when they do not;
- the Winograd kernel (``kernels/templates/winograd.cu``) transforms, per block and input
  channel, each of its ``z`` kernels and ``(x/e) * (y/e)`` tiles once (its threads share
  them in shared memory), multiplies and accumulates every (tile, output channel) pair,
  and output-transforms every pair once.

No count depends on the thread block. :func:`tile_flops` is the count of one tile
(computed once per tile by :func:`kernels.analytic.analytic_features`).

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(1, 1, 6, 6, 2, 3, 3)
>>> from dataflow.flops import winograd_flops
>>> from dataflow.winograd import WinogradTiling
>>> tile_flops(layer, "winograd", (2, 4, 4, 2))  # one block of 4 tiles, 2 channels
716
>>> winograd_flops(layer, WinogradTiling(2, 4, 4, 2))  # the dataflow's: the tile divides the output
716
"""

from __future__ import annotations

import math

from dataflow.flops import transform_flops
from iobound.layer import ConvLayer, takes_layer

from .config import check_operands, grid_of
from .grouping import check_kernel_tiling  # the one rule of kernel tiles (io and flops)

__all__ = ["tile_flops", "kernel_flops", "direct_tile_flops", "winograd_tile_flops",
           "check_kernel_tiling"]


def _blocks(layer: ConvLayer, tiling) -> int:
    """Thread blocks of the kernel's grid (:func:`kernels.config.grid_shape`; a tiling has
    the config's ``x``, ``y``, ``z``)."""
    return math.prod(grid_of(layer, tiling.x, tiling.y, tiling.z))


@takes_layer
def direct_tile_flops(layer: ConvLayer, tiling) -> int:
    """Flops of the direct kernel of ``tiling``: every block computes its whole ``x * y * z``
    tile, one FMA per channel of its group and kernel tap.

    >>> from dataflow.direct import DirectTiling
    >>> from dataflow.flops import direct_flops
    >>> layer = ConvLayer(n=1, c_in=2, h_in=5, w_in=5, c_out=2, k_h=3, k_w=3)  # 3x3 output
    >>> direct_tile_flops(layer, DirectTiling(2, 2, 2, 1)), direct_flops(layer)  # 2x2 clipped
    (1152, 648)
    """
    check_kernel_tiling(layer, "direct", tiling)
    x, y, z = tiling.x, tiling.y, tiling.z
    return 2 * _blocks(layer, tiling) * x * y * z * layer.c_in_per_group * layer.k_h * layer.k_w


@takes_layer
def winograd_tile_flops(layer: ConvLayer, tiling) -> int:
    """Flops of the Winograd kernel of ``tiling``: per block and input channel each of its
    tiles and kernels transformed once and every (tile, channel) product accumulated, then
    every pair output-transformed once.

    >>> from dataflow.flops import winograd_flops
    >>> from dataflow.winograd import WinogradTiling
    >>> layer = ConvLayer(1, 1, 8, 8, 2, 3, 3)  # a 6x6 output: 4x4 tiles overhang its edge
    >>> tiling = WinogradTiling(2, 4, 4, 2)
    >>> winograd_tile_flops(layer, tiling), winograd_flops(layer, tiling)
    (2864, 1856)
    """
    check_kernel_tiling(layer, "winograd", tiling)
    e, x, y, z = tiling.e, tiling.x, tiling.y, tiling.z
    n = e + layer.k_h - 1
    f_in, f_ker, f_out = transform_flops(e, layer.k_h)
    tiles = (x // e) * (y // e)  # Winograd tiles of one block, clipped or not
    per_channel = tiles * f_in + z * f_ker + 2 * n * n * tiles * z  # V, U, then acc += U * V
    return _blocks(layer, tiling) * (layer.c_in * per_channel + tiles * z * f_out)


@takes_layer
def tile_flops(layer: ConvLayer, algorithm: str, tile: tuple[int, ...]) -> int:
    """Flops the kernel of ``tile`` (a tuple ``(x, y, z, alpha)`` or ``(e, x, y, z)`` of
    integers fitting the layer) executes, whatever its threads (the algorithm's
    :attr:`kernels.families.KernelFamily.tile_flops`).

    >>> layer = ConvLayer(n=1, c_in=2, h_in=5, w_in=5, c_out=2, k_h=3, k_w=3)
    >>> tile_flops(layer, "direct", (3, 3, 2, 1)) == 2 * layer.macs  # the tile divides the output
    True
    """
    from .families import kernel_family  # families imports this module's counts

    fam = kernel_family(algorithm)
    return fam.tile_flops(layer, fam.dataflow.tiling_from(tile))


def kernel_flops(layer: ConvLayer, config) -> int:
    """Flops the kernel of ``config`` (a DirectConfig or WinogradConfig) executes.

    >>> from kernels.config import WinogradConfig
    >>> layer = ConvLayer(1, 1, 6, 6, 2, 3, 3)
    >>> one, four = (kernel_flops(layer, WinogradConfig(e=2, x=4, y=4, z=2, tx=t, ty=t, tz=1))
    ...              for t in (1, 2))
    >>> one == four == tile_flops(layer, "winograd", (2, 4, 4, 2))  # threads share transforms
    True
    """
    from .families import kernel_family

    check_operands(layer, config)
    fam = kernel_family(config)
    return fam.tile_flops(layer, config.tiling)
