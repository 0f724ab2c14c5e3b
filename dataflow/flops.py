"""Floating-point operations the dataflows execute (an FMA counts 2).

Direct convolution performs ``2 * MACs``. The Winograd dataflow performs the element-wise
products plus the input, weight and output transforms as it executes them: the input
transform of a tile is repeated for every output-channel block (``z``), the weight
transform for every spatial block (``x * y``), as in :mod:`dataflow.winograd`. A transform
``L S L^T`` runs as straight-line code from the exact matrices (zero coefficients skipped,
+-1 written as signs, :mod:`kernels.codegen_winograd`): a row with ``m`` non-zero
coefficients, ``u`` of them not +-1, costs ``m - 1`` additions and ``u`` multiplications.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> from dataflow.winograd import WinogradTiling
>>> layer = ConvLayer(1, 1, 6, 6, 2, 3, 3)
>>> direct_flops(layer) == 2 * 2 * 16 * 9
True
>>> winograd_flops(layer, WinogradTiling(2, 4, 4, 2))
716
"""

from __future__ import annotations

import functools
import math

from iobound import limits
from iobound.layer import ConvLayer, takes_layer
from iobound.winograd_transforms import winograd_transforms

from .winograd import WinogradTiling, check_winograd_tiling

__all__ = ["direct_flops", "winograd_flops", "winograd_product_flops", "transform_flops"]


@takes_layer
def direct_flops(layer: ConvLayer) -> int:
    """``2 * MACs`` of the direct convolution.

    Examples
    --------
    >>> from iobound import get_layer
    >>> f"{direct_flops(get_layer('vgg16.conv3_2')) / 1e9:.4g} GFLOP"
    '3.699 GFLOP'
    """
    return 2 * layer.macs


def _sandwich_flops(mat, src_cols: int) -> int:
    """Flops of ``L S L^T`` (``L`` is ``p x q``, ``S`` is ``q x src_cols``) as executed:
    ``t = L S`` (``p * src_cols`` combinations of a row of ``L``), then ``t L^T`` (``p * p``)."""
    per_row = 0
    for i in range(mat.shape[0]):
        nz = [c for c in mat.row(i) if c != 0]
        per_row += max(len(nz) - 1, 0) + sum(1 for c in nz if abs(c) != 1)
    return per_row * (src_cols + mat.shape[0])


@functools.lru_cache(maxsize=None)
def transform_flops(e: int, r: int) -> tuple[int, int, int]:
    """Flops of one input, kernel and output transform of F(e x e, r x r), as the straight-line
    code of :func:`kernels.codegen_winograd.transform_functions` runs them.

    >>> transform_flops(2, 3)   # input (additions only), kernel, output
    (32, 70, 24)
    """
    tf = winograd_transforms(e, r)
    return _sandwich_flops(tf.BT, tf.n), _sandwich_flops(tf.G, r), _sandwich_flops(tf.AT, tf.n)


@takes_layer
def winograd_product_flops(layer: ConvLayer, e: int) -> int:
    """Flops of F(e x e, r x r)'s element-wise products over the layer (``u * v``, then
    ``acc +=``): every output tile, clipped or not, times every channel pair; no transforms.

    >>> winograd_product_flops(ConvLayer(1, 2, 6, 6, 4, 3, 3), 2)
    1024
    """
    layer.check_winograd()
    e = limits.check_winograd_e(e)
    n = e + layer.k_h - 1
    tiles = math.prod(layer.winograd_tiles(e))
    return 2 * layer.n * layer.c_out * layer.c_in * tiles * n * n


@takes_layer
def winograd_flops(layer: ConvLayer, tiling: WinogradTiling) -> int:
    """Products and transforms of the Winograd dataflow with ``tiling`` (see module doc;
    InvalidInputError when the tiling does not fit the layer, as for its I/O).

    Examples
    --------
    Larger blocks repeat fewer transforms; with one output channel per block, a tiny layer
    executes more flops than the direct convolution:

    >>> layer = ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=1)
    >>> [winograd_flops(layer, WinogradTiling(2, s, s, z)) for s, z in ((8, 8), (4, 1))]
    [23744, 44800]
    >>> direct_flops(layer)
    36864
    """
    check_winograd_tiling(layer, tiling)
    e, x, y, z = tiling.e, tiling.x, tiling.y, tiling.z
    f_in, f_ker, f_out = transform_flops(e, layer.k_h)
    tiles = math.prod(layer.winograd_tiles(e))
    z_blocks = -(-layer.c_out // z)
    xy_blocks = -(-layer.h_out // y) * -(-layer.w_out // x)
    products = winograd_product_flops(layer, e)   # u * v, then acc +=
    input_tf = layer.n * z_blocks * layer.c_in * tiles * f_in     # B^T d B
    weight_tf = layer.n * xy_blocks * layer.c_out * layer.c_in * f_ker
    output_tf = layer.n * layer.c_out * tiles * f_out    # A^T M A
    return products + input_tf + weight_tf + output_tf
