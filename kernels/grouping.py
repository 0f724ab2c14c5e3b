"""Grouped convolution in the kernels: the kernel's exact traffic.

A grouped layer (``ConvLayer.groups = G``) is ``G`` independent convolutions of
``c_in / G`` input onto ``c_out / G`` output channels. The direct kernel keeps a block's
``z`` output channels inside one group (``z`` divides ``c_out / G``), so a block reads
only its group's input channels and weights, and the kernel's global traffic is exactly
``G`` times the dataflow's traffic for one group
(:func:`dataflow.grouped.group_sublayer`): every block of the grouped launch is a block of
one group's launch.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> from dataflow.direct import DirectTiling
>>> dw = ConvLayer(n=1, c_in=8, h_in=6, w_in=6, c_out=16, k_h=3, k_w=3, padding=1, groups=8)
>>> io = kernel_io(dw, "direct", DirectTiling(3, 3, 2, 1))
>>> io.input_loads, io.weight_loads, io.output_stores
(512, 576, 576)
"""

from __future__ import annotations

from dataflow.families import dataflow_family
from dataflow.grouped import group_sublayer
from dataflow.io_volume import DataflowIO
from iobound.layer import ConvLayer

__all__ = ["kernel_io"]


def kernel_io(layer: ConvLayer, algorithm, tiling) -> DataflowIO:
    """Exact global traffic of the kernel implementing ``tiling``: the dataflow's, and for
    a grouped layer ``groups`` times one group's (see the module doc).

    ``algorithm`` is a name, an :class:`~iobound.algorithms.Algorithm` or a config.
    """
    fam = dataflow_family(getattr(algorithm, "algorithm", algorithm))
    return fam.io(group_sublayer(layer), tiling).times(layer.groups)
