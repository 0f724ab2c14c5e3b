"""Floating-point operations a generated kernel executes (FMA = 2), threads included.

The dataflow's count (:mod:`dataflow.flops`) is the arithmetic of the schedule: each
transform once per block that needs it, each Winograd tile once. The Winograd kernel
(``kernels/templates/winograd.cu``) executes more:

- every thread along z transforms the input tiles of its (x, y) position: an input
  transform runs ``tz`` times;
- every thread along x and y transforms the kernels of its z channels: a kernel
  transform runs ``tx * ty`` times;
- a block clipped by the output's edge still computes all its ``(x/e) * (y/e)`` tiles
  and ``z`` channels (the stores are masked, the arithmetic is not).

The direct kernel computes every output of its ``x * y * z`` tile (a block clipped by
the output's edge too: its stores are masked, its arithmetic is not), so its count is
the dataflow's ``2 * MACs`` when the tiles divide the output and more when they do not.
:func:`kernel_flop_parts` gives the count as ``base + per_tz * tz + per_txty * tx * ty``,
the thread-independent parts of a tile (computed once per tile by
:func:`kernels.analytic.analytic_features`).

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(1, 1, 6, 6, 2, 3, 3)
>>> kernel_flop_parts(layer, "winograd", (2, 4, 4, 2))  # one block of 4 tiles, 2 channels
(448, 128, 140)
"""

from __future__ import annotations

from dataflow.families import dataflow_family
from dataflow.flops import transform_flops
from iobound.layer import ConvLayer

__all__ = ["kernel_flop_parts", "kernel_flops"]


def kernel_flop_parts(layer: ConvLayer, algorithm: str, tile: tuple[int, ...]) -> tuple[int, int, int]:
    """``(base, per_tz, per_txty)`` of the kernel of ``tile`` (``(x, y, z, alpha)`` or
    ``(e, x, y, z)``): it executes ``base + per_tz * tz + per_txty * tx * ty`` flops."""
    fam = dataflow_family(algorithm)
    tiling = fam.tiling_from(tile)
    if fam.name != "winograd":  # direct: every block computes its whole x * y * z tile
        x, y, z = tiling.x, tiling.y, tiling.z
        blocks = layer.n * -(-layer.w_out // x) * -(-layer.h_out // y) * -(-layer.c_out // z)
        return 2 * blocks * x * y * z * layer.c_in_per_group * layer.k_h * layer.k_w, 0, 0
    e, x, y, z = tiling.e, tiling.x, tiling.y, tiling.z
    n = e + layer.k_h - 1
    f_in, f_ker, f_out = transform_flops(e, layer.k_h)
    blocks = layer.n * -(-layer.w_out // x) * -(-layer.h_out // y) * -(-layer.c_out // z)
    tiles = (x // e) * (y // e)  # Winograd tiles of one block, clipped or not
    products = 2 * n * n * tiles * z * layer.c_in  # u * v, then acc +=, per input channel
    base = blocks * (products + tiles * z * f_out)
    return base, blocks * layer.c_in * tiles * f_in, blocks * layer.c_in * z * f_ker


def kernel_flops(layer: ConvLayer, config) -> int:
    """Flops the kernel of ``config`` (a DirectConfig or WinogradConfig) executes.

    >>> from kernels.config import WinogradConfig
    >>> layer = ConvLayer(1, 1, 6, 6, 2, 3, 3)
    >>> one, four = (kernel_flops(layer, WinogradConfig(e=2, x=4, y=4, z=2, tx=t, ty=t, tz=1))
    ...              for t in (1, 2))
    >>> four - one == 3 * 2 * 70   # each of the 2 kernel transforms, 3 more times
    True
    """
    fam = dataflow_family(config.algorithm)
    tile = tuple(getattr(config, p) for p in fam.algorithm.tile_params)
    base, per_tz, per_txty = kernel_flop_parts(layer, fam.name, tile)
    return base + per_tz * config.tz + per_txty * config.tx * config.ty
