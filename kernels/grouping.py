"""Grouped convolution in the kernels: one group's layer and the kernel's exact traffic.

A grouped layer (``ConvLayer.groups = G``) is ``G`` independent convolutions of
``c_in / G`` input onto ``c_out / G`` output channels. The direct kernel keeps a block's
``z`` output channels inside one group (``z`` divides ``c_out / G``), so a block reads
only its group's input channels and weights, and the kernel's global traffic is exactly
``G`` times the dataflow's traffic for one group (:func:`per_group_layer`): every block
of the grouped launch is a block of one group's launch.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> from dataflow.direct import DirectTiling
>>> dw = ConvLayer(n=1, c_in=8, h_in=6, w_in=6, c_out=16, k_h=3, k_w=3, padding=1, groups=8)
>>> per_group_layer(dw).short()
'n1 1x6x6 -> 2x6x6 k3x3 s1x1 p1x1'
>>> io = kernel_io(dw, "direct", DirectTiling(3, 3, 2, 1))
>>> io.input_loads, io.weight_loads, io.output_stores
(512, 576, 576)
"""

from __future__ import annotations

from dataflow.families import dataflow_family
from dataflow.io_volume import DataflowIO
from iobound.layer import ConvLayer

__all__ = ["per_group_layer", "kernel_io"]


def per_group_layer(layer: ConvLayer) -> ConvLayer:
    """The convolution one group computes: ``c_in / G`` onto ``c_out / G`` channels.

    ``layer`` itself when ``groups == 1``.
    """
    if layer.groups == 1:
        return layer
    return layer.replace(c_in=layer.c_in_per_group, c_out=layer.c_out_per_group, groups=1,
                         name=f"{layer.name or 'layer'} (one group)")


def kernel_io(layer: ConvLayer, algorithm, tiling) -> DataflowIO:
    """Exact global traffic of the kernel implementing ``tiling``: the dataflow's, and for
    a grouped layer ``groups`` times one group's (see the module doc).

    ``algorithm`` is a name, an :class:`~iobound.algorithms.Algorithm` or a config.
    """
    fam = dataflow_family(getattr(algorithm, "algorithm", algorithm))
    if layer.groups == 1:
        return fam.io(layer, tiling)
    one = fam.io(per_group_layer(layer), tiling)
    g = layer.groups
    return DataflowIO.of(g * one.input_loads, g * one.weight_loads, g * one.output_stores)
