"""Exact vertex counts of the convolution DAGs the bounds are stated for.

Direct convolution (the DAG ``dataflow`` builds): an input vertex per in-bounds
input element ``(b, c, h, w)`` used by at least one product; a weight vertex per
``(co, ci, i, j)`` used by at least one product; a product vertex per
``(b, co, oh, ow, ci, i, j)`` whose input position is in bounds (taps on padding
are not products); per output with ``m >= 1`` products a binary summation tree of
``m - 1`` sum vertices whose root is the output (``m == 1``: the product is the
output); an output whose whole window lies in padding has no vertex. Hence

    |V| = used_inputs + used_weights + sum_outputs (2 m_o - 1).

Every quantity factorises over the two spatial axes, so the counts take
``O(h_out k_h + w_out k_w)`` work, whatever the channel counts.

Grouped layers (``groups = G``): the DAG is the disjoint union of G dense DAGs
``c_in / G -> c_out / G``; a product of output channel ``co`` reads only the input
channels of its group, so products and weights count ``c_in / G`` input channels
per output channel, while every input channel is used (by its group).

The Winograd DAG's counts are in :mod:`iobound.winograd_vertex_counts`.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=3, k_h=3, k_w=3)
>>> direct_vertex_count(layer)       # Lemma 4.7: (2*9*2-1)*4*3 + 32 + 54
506
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .layer import ConvLayer, takes_layer

__all__ = ["DirectCounts", "direct_counts", "direct_vertex_count", "iter_direct_products"]


@dataclass(frozen=True)
class _Axis:
    """Per-axis facts of a sliding window."""

    taps_per_output: tuple[int, ...]  # in-bounds taps of each output position
    used_taps: int                    # taps used by at least one output position
    used_positions: int               # input positions used by at least one tap
    max_reuse: int                    # most (output, tap) pairs reading one input position


def _axis(size: int, out: int, k: int, stride: int, pad: int, dil: int) -> _Axis:
    o = np.arange(out)[:, None]
    i = np.arange(k)[None, :]
    pos = o * stride - pad + i * dil
    ok = (pos >= 0) & (pos < size)
    reuse = np.bincount(pos[ok], minlength=size) if ok.any() else np.zeros(size, int)
    return _Axis(
        taps_per_output=tuple(int(c) for c in ok.sum(axis=1)),
        used_taps=int(ok.any(axis=0).sum()),
        used_positions=int((reuse > 0).sum()),
        max_reuse=int(reuse.max()) if size else 0,
    )


@dataclass(frozen=True)
class DirectCounts:
    """Vertex classes of the direct-convolution DAG of one layer.

    >>> c = direct_counts(ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1))
    >>> c.products, c.outputs, c.vertices, c.compulsory   # taps on padding are no products
    (4096, 144, 8336, 432)
    """

    used_inputs: int
    used_weights: int
    products: int       #: real MACs (product vertices)
    outputs: int        #: outputs with at least one product
    sums: int           #: sum vertices that are not outputs
    max_input_reuse: int  #: most products that read one input vertex / (c_out / groups)

    @property
    def vertices(self) -> int:
        """|V| = inputs + weights + sum over outputs of (2 m_o - 1)."""
        return self.used_inputs + self.used_weights + 2 * self.products - self.outputs

    @property
    def compulsory(self) -> int:
        """Inputs and weights that must be loaded once plus outputs stored once."""
        return self.used_inputs + self.used_weights + self.outputs


@takes_layer
@lru_cache(maxsize=4096)
def direct_counts(layer: ConvLayer) -> DirectCounts:
    """All vertex classes of the direct DAG (see the module docstring).

    >>> grouped = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1, groups=2)
    >>> c = direct_counts(grouped)   # each output channel reads the 2 input channels of its group
    >>> c.used_inputs, c.used_weights, c.products
    (144, 72, 2048)
    """
    ah = _axis(layer.h_in, layer.h_out, layer.k_h, layer.stride[0], layer.padding[0],
               layer.dilation[0])
    aw = _axis(layer.w_in, layer.w_out, layer.k_w, layer.stride[1], layer.padding[1],
               layer.dilation[1])
    taps_h, taps_w = sum(ah.taps_per_output), sum(aw.taps_per_output)
    live_h = sum(1 for c in ah.taps_per_output if c)
    live_w = sum(1 for c in aw.taps_per_output if c)
    nb, ci, co, cg = layer.n, layer.c_in, layer.c_out, layer.c_in_per_group
    products = nb * co * cg * taps_h * taps_w
    outputs = nb * co * live_h * live_w
    return DirectCounts(
        used_inputs=nb * ci * ah.used_positions * aw.used_positions,
        used_weights=co * cg * ah.used_taps * aw.used_taps,
        products=products,
        outputs=outputs,
        sums=products - outputs,
        max_input_reuse=ah.max_reuse * aw.max_reuse,
    )


@takes_layer
def iter_direct_products(layer: ConvLayer):
    """Yield every product vertex as ``((b, ci, h, w), (co, ci, i, j), (b, co, oh, ow))``.

    A reference enumeration (one Python step per product) for checking the counts
    and inequalities on small layers; the counts above never use it. With groups,
    output channel ``co`` reads the input channels ``ci`` of its group only.

    >>> small = ConvLayer(n=1, c_in=2, h_in=4, w_in=4, c_out=3, k_h=3, k_w=3, padding=1)
    >>> next(iter_direct_products(small))   # output (0, 0): taps (0, *) and (*, 0) are padding
    ((0, 0, 0, 0), (0, 0, 1, 1), (0, 0, 0, 0))
    >>> sum(1 for _ in iter_direct_products(small)) == direct_counts(small).products
    True
    """
    (sh, sw), (ph, pw), (dh, dw) = layer.stride, layer.padding, layer.dilation
    cg, og = layer.c_in_per_group, layer.c_out_per_group
    for b, co, oh, ow, cl, i, j in itertools.product(
            range(layer.n), range(layer.c_out), range(layer.h_out), range(layer.w_out),
            range(cg), range(layer.k_h), range(layer.k_w)):
        ci = co // og * cg + cl
        h, w = oh * sh - ph + i * dh, ow * sw - pw + j * dw
        if 0 <= h < layer.h_in and 0 <= w < layer.w_in:
            yield (b, ci, h, w), (co, ci, i, j), (b, co, oh, ow)


@takes_layer
def direct_vertex_count(layer: ConvLayer) -> int:
    """|V| of the direct-convolution DAG (exact; Lemma 4.7 without padding).

    Also for layers whose DAG is far too large to build (the module example is a small
    one, checked against the built DAG by the tests):

    >>> from iobound.networks import get_layer
    >>> f"{direct_vertex_count(get_layer('vgg16.conv3_2')):,}"
    '3,612,409,856'
    """
    return direct_counts(layer).vertices
