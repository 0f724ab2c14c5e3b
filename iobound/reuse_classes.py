"""Per-class reuse: the residue classes of inputs under the stride, and the weighted MACs W.

Along one axis, kernel tap ``i`` reads the input rows ``h = oh mu + i d - p``, so every
tap reads one residue class ``h mod mu`` (``(i d - p) mod mu``) and the taps fall into
classes by that residue. An input of a class is read by the ``T`` taps of its class
only, and a tap reads one class only. In 2-D a class is a pair of axis classes and
``T_c = T_h T_w``; ``max_c T_c = R_max`` (:attr:`iobound.layer.ConvLayer.reuse_max`).

The convolution Loomis-Whitney inequality, per class (proofs/test_x_partition_chain.py):
products with operands in A, B and output in C satisfy
``sum_c N_c / sqrt(T_c) <= sqrt(|A| |B| |C|)``. So the bounds can charge each product
``1 / sqrt(T_c)`` of its class instead of ``1 / sqrt(R_max)``; the total is

    W = sum over product vertices of 1 / sqrt(T_c(p))  >=  MACs / sqrt(R_max),

and ``R_eff = (MACs / W)^2`` is the effective reuse (2.38 instead of 4 for an unpadded
stride-2 3x3 layer, 7.67 instead of 9 for AlexNet conv1; ``R_max`` for stride 1).

Examples
--------
>>> from iobound.networks import get_layer
>>> round(effective_reuse(get_layer("alexnet.conv1")), 2)
7.67
>>> axis_tap_classes(k=3, stride=2, dilation=1)
(2, 1, 2)
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import limits
from .layer import ConvLayer, takes_layer
from .vertex_counts import direct_counts

__all__ = ["axis_tap_classes", "axis_tap_products", "weighted_products", "effective_reuse"]


def axis_tap_classes(k: int, stride: int, dilation: int) -> tuple[int, ...]:
    """Per tap of one axis, the number of taps in its residue class (``T`` of the tap).

    Examples
    --------
    >>> axis_tap_classes(k=11, stride=4, dilation=1)
    (3, 3, 3, 2, 3, 3, 3, 2, 3, 3, 3)
    >>> axis_tap_classes(k=3, stride=1, dilation=1)
    (3, 3, 3)
    """
    k = limits.check_int("k", k, limits.KERNEL)
    stride = limits.check_int("stride", stride, limits.STRIDE)
    dilation = limits.check_int("dilation", dilation, limits.DILATION)
    res = [(i * dilation) % stride for i in range(k)]
    return tuple(res.count(r) for r in res)


def axis_tap_products(size: int, out: int, k: int, stride: int, pad: int, dil: int) -> tuple[int, ...]:
    """Per tap of one axis, the number of output positions whose input under it is in bounds.

    Examples
    --------
    >>> axis_tap_products(size=5, out=5, k=3, stride=1, pad=1, dil=1)
    (4, 5, 4)
    """
    size, out = (limits.check_int(n, v, limits.AXIS) for n, v in (("size", size), ("out", out)))
    k = limits.check_int("k", k, limits.KERNEL)
    stride = limits.check_int("stride", stride, limits.STRIDE)
    pad = limits.check_int("pad", pad, limits.PADDING)
    dil = limits.check_int("dil", dil, limits.DILATION)
    o = np.arange(out)[:, None]
    pos = o * stride - pad + np.arange(k)[None, :] * dil
    return tuple(int(c) for c in ((pos >= 0) & (pos < size)).sum(axis=0))


@takes_layer
@lru_cache(maxsize=4096)
def weighted_products(layer: ConvLayer) -> float:
    """``W = sum_p 1 / sqrt(T_c(p))`` over the product vertices of the direct DAG.

    With groups, an output channel has ``c_in / groups`` input channels (the products
    of the grouped DAG; proofs/test_grouped_bounds.py).

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(1, 1, 4, 4, 1, 2, 2, stride=(2, 2))   # T = 1: W = MACs
    >>> weighted_products(layer), layer.macs
    (16.0, 16)
    """
    (mh, mw), (ph, pw), (dh, dw) = layer.stride, layer.padding, layer.dilation
    ch = np.array(axis_tap_products(layer.h_in, layer.h_out, layer.k_h, mh, ph, dh), float)
    cw = np.array(axis_tap_products(layer.w_in, layer.w_out, layer.k_w, mw, pw, dw), float)
    th = np.array(axis_tap_classes(layer.k_h, mh, dh), float)
    tw = np.array(axis_tap_classes(layer.k_w, mw, dw), float)
    per_tap = (ch / np.sqrt(th))[:, None] * (cw / np.sqrt(tw))[None, :]
    return float(layer.n * layer.c_in_per_group * layer.c_out * per_tap.sum())


@takes_layer
def effective_reuse(layer: ConvLayer) -> float:
    """``R_eff = (MACs / W)^2`` (real products only); ``<= R_max``, equal for stride 1 without padding.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> round(effective_reuse(ConvLayer(1, 1, 9, 9, 1, 3, 3)), 9)
    9.0
    """
    w = weighted_products(layer)
    return (direct_counts(layer).products / w) ** 2 if w > 0 else float(layer.reuse_max)
