"""Floating-point operations the dataflows execute (an FMA counts 2).

Direct convolution performs ``2 * MACs``. The Winograd dataflow performs the element-wise
products plus the input, weight and output transforms as it executes them: the input
transform of a tile is repeated for every output-channel block (``z``), the weight
transform for every spatial block (``x * y``), as in :mod:`dataflow.winograd`.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> from dataflow.winograd import WinogradTiling
>>> layer = ConvLayer(1, 1, 6, 6, 2, 3, 3)
>>> direct_flops(layer) == 2 * 2 * 16 * 9
True
>>> winograd_flops(layer, WinogradTiling(2, 4, 4, 2))
2384
"""

from __future__ import annotations

from iobound.layer import ConvLayer

from .winograd import WinogradTiling

__all__ = ["direct_flops", "winograd_flops"]


def direct_flops(layer: ConvLayer) -> int:
    """``2 * MACs`` of the direct convolution."""
    return 2 * layer.macs


def winograd_flops(layer: ConvLayer, tiling: WinogradTiling) -> int:
    """Products and transforms of the Winograd dataflow with ``tiling`` (see module doc)."""
    e, x, y, z = tiling.e, tiling.x, tiling.y, tiling.z
    r = layer.k_h
    n = e + r - 1
    tiles = -(-layer.h_out // e) * -(-layer.w_out // e)
    z_blocks = -(-layer.c_out // z)
    xy_blocks = -(-layer.h_out // y) * -(-layer.w_out // x)
    products = layer.n * layer.c_out * layer.c_in * tiles * n * n
    input_tf = layer.n * z_blocks * layer.c_in * tiles * 2 * n ** 3        # B^T d B
    weight_tf = layer.n * xy_blocks * layer.c_out * layer.c_in * (n * r * r + n * n * r)
    output_tf = layer.n * layer.c_out * tiles * (e * n * n + e * e * n)     # A^T M A
    return 2 * (products + input_tf + weight_tf + output_tf)
