"""One entry point from (layer, config) to CUDA source, whatever the algorithm.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> from kernels.config import WinogradConfig
>>> layer = ConvLayer(n=1, c_in=1, h_in=6, w_in=6, c_out=1, k_h=3, k_w=3)
>>> generate(layer, WinogradConfig(e=2, x=4, y=4, z=1, tx=2, ty=2, tz=1)).name
'iobound_winograd'
"""

from __future__ import annotations

from iobound.layer import ConvLayer

from .config import KernelConfig, check_operands
from .families import kernel_family
from .source import KernelSource

__all__ = ["generate"]


def generate(layer: ConvLayer, config: KernelConfig, device=None) -> KernelSource:
    """CUDA source for ``config`` (a DirectConfig or WinogradConfig); see the generators.

    Raises
    ------
    InvalidConfigError
        (a ValueError) listing why the config cannot run.
    InvalidInputError
        ``layer`` is no ConvLayer or ``config`` no kernel config (a dict, say).

    Examples
    --------
    >>> from kernels.config import DirectConfig
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> src = generate(layer, DirectConfig(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1))
    >>> src.name, "__global__" in src.code, src.grid, src.block  # 2 x 2 tiles, 2 channel blocks
    ('iobound_direct', True, (2, 2, 2), (3, 3, 1))
    """
    check_operands(layer, config)
    return kernel_family(config).generate(layer, config, device)
