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
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer, check_layer

from .config_types import CONFIG_TYPES

__all__ = ["kernel_io", "check_kernel_tiling"]


def check_kernel_tiling(layer: ConvLayer, algorithm, tiling) -> None:
    """InvalidInputError unless the kernel of ``tiling`` computes ``layer``: the algorithm
    applies (Winograd: dense layers only), the tiling is the algorithm's and fits one
    group's layer, and a block stays in one group (the config's
    :meth:`~kernels.config.DirectConfig.group_reasons`, the rule ``check_config`` applies).
    :func:`kernel_io` and the flops of :mod:`kernels.kernel_flops` refuse the same tiles.

    >>> from dataflow.direct import DirectTiling
    >>> check_kernel_tiling(ConvLayer(1, 4, 8, 8, 8, 3, 3, groups=2), "direct",
    ...                     DirectTiling(2, 2, 3, 2))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: z=3 must divide c_out/groups=4 (a block's output channels lie in one of the 2 groups)
    """
    check_layer(layer)
    fam = dataflow_family(getattr(algorithm, "algorithm", algorithm))
    fam.algorithm.check(layer)
    fam.check_tiling(group_sublayer(layer), tiling)
    knobs = dict(zip(fam.algorithm.tile_params,
                     (getattr(tiling, p) for p in fam.algorithm.tile_params)))
    reasons = CONFIG_TYPES[fam.name](**knobs, tx=1, ty=1, tz=1).group_reasons(layer)
    if reasons:
        raise InvalidInputError(reasons[0])


def kernel_io(layer: ConvLayer, algorithm, tiling) -> DataflowIO:
    """Exact global traffic of the kernel implementing ``tiling``: the dataflow's, and for
    a grouped layer ``groups`` times one group's (see the module doc).

    ``algorithm`` is a name, an :class:`~iobound.algorithms.Algorithm` or a config;
    InvalidInputError for a tiling no kernel implements (:func:`check_kernel_tiling`).

    >>> from dataflow.direct import DirectTiling, direct_io
    >>> from dataflow.winograd import WinogradTiling
    >>> layer, tiling = ConvLayer(1, 4, 6, 6, 4, 3, 3, padding=1), DirectTiling(3, 3, 2, 2)
    >>> kernel_io(layer, "direct", tiling) == direct_io(layer, tiling)  # dense: the dataflow's
    True
    >>> grouped = layer.replace(groups=2)
    >>> kernel_io(grouped, "winograd", WinogradTiling(2, 2, 2, 2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: Winograd is implemented for dense layers only (groups=1), ...
    """
    check_kernel_tiling(layer, algorithm, tiling)
    fam = dataflow_family(getattr(algorithm, "algorithm", algorithm))
    return fam.io(group_sublayer(layer), tiling).times(layer.groups)
