"""The kernel part of each algorithm family: config type, code generator, tolerance, flops.

One :class:`KernelFamily` per algorithm, registered in :data:`KERNELS` under its name
(the dataflow part is :data:`dataflow.families.DATAFLOWS`, the theory's
:mod:`iobound.algorithms`). :func:`kernel_family` takes a name, an
:class:`~iobound.algorithms.Algorithm` or a config (its ``algorithm``).

Examples
--------
>>> from kernels.config import WinogradConfig
>>> fam = kernel_family(WinogradConfig(e=2, x=4, y=4, z=1, tx=2, ty=2, tz=1))
>>> fam.name, fam.config_type.__name__, fam.dataflow.tiling_type.__name__
('winograd', 'WinogradConfig', 'WinogradTiling')
>>> kernel_family("direct").chunk_param, fam.chunk_param
('alpha', None)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from dataflow.families import DataflowFamily, dataflow_family
from iobound.arg_checks import check_choice
from iobound.algorithms import Algorithm, Registry
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer, check_layer

from .codegen_direct import generate_direct
from .codegen_winograd import generate_winograd
from .config import DirectConfig, WinogradConfig
from .kernel_flops import direct_tile_flops, winograd_tile_flops
from .reference import direct_tolerance, winograd_tolerance

__all__ = ["KernelFamily", "KERNELS", "kernel_family"]


@dataclass(frozen=True)
class KernelFamily:
    """What the kernels layer knows of one algorithm.

    Attributes
    ----------
    dataflow : DataflowFamily
        The dataflow the kernel implements (tiling, exact I/O, footprint, flops).
    config_type : type
        :class:`~kernels.config.DirectConfig` or :class:`~kernels.config.WinogradConfig`.
    generate : callable
        ``(layer, config, device) -> KernelSource``.
    tolerance : callable
        ``(x, w, layer, config) -> array``: the elementwise error the check accepts.
    chunk_param : str or None
        The knob of input channels one loop step stages (None: one channel a step).
    tile_flops : callable
        ``(layer, tiling) -> int``: the flops the kernel of a tiling executes, whatever
        its threads (:mod:`kernels.kernel_flops`).
    transform_tile : callable
        ``(layer, knobs) -> array``: per knob row, the elements of the input tile a thread
        transforms (Winograd's ``(e + k_h - 1)(e + k_w - 1)``; 0 for direct), an input of
        the register estimate (:func:`kernels.limits.compiled_registers`).

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> knobs = np.array([[2, 4, 4, 1, 1, 1, 1], [4, 4, 4, 1, 1, 1, 1]])  # e, x, y, z, tx, ty, tz
    >>> kernel_family("winograd").transform_tile(layer, knobs).tolist()  # (e + 2) ** 2
    [16, 36]
    """

    dataflow: DataflowFamily
    config_type: type
    generate: Callable
    tolerance: Callable
    chunk_param: str | None
    tile_flops: Callable
    transform_tile: Callable

    def problem(self, layer: ConvLayer) -> str | None:
        """Why this family's kernel cannot compute ``layer`` (None: it can): the
        algorithm's reason (:meth:`iobound.algorithms.Algorithm.problem`, which also says
        which algorithms take grouped layers).

        >>> from iobound.layer import ConvLayer
        >>> dw = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, groups=4)
        >>> kernel_family("direct").problem(dw) is None, kernel_family("winograd").problem(dw)[:28]
        (True, 'Winograd is implemented for ')
        """
        check_layer(layer)
        return self.algorithm.problem(layer)

    @property
    def algorithm(self) -> Algorithm:
        return self.dataflow.algorithm

    @property
    def name(self) -> str:
        return self.dataflow.name

    def tile_columns(self, names=("x", "y", "z")) -> tuple[int, ...]:
        """Columns of ``names`` in a knob row (:attr:`config_type.params` order); a name
        that is no knob of the family is an InvalidInputError.

        >>> kernel_family("winograd").tile_columns(("e", "z"))
        (0, 3)
        """

        if isinstance(names, str) or not isinstance(names, (tuple, list)):
            raise InvalidInputError(f"names must be a tuple of knob names, got {names!r:.60}")
        params = self.config_type.params
        return tuple(params.index(check_choice("knob name", n, params)) for n in names)


def _direct_tolerance(x: np.ndarray, w: np.ndarray, layer: ConvLayer, config) -> np.ndarray:
    return direct_tolerance(x, w, layer)


def _winograd_tolerance(x: np.ndarray, w: np.ndarray, layer: ConvLayer, config) -> np.ndarray:
    return winograd_tolerance(x, w, layer, config.e)


def _no_transform_tile(layer: ConvLayer, knobs: np.ndarray) -> np.ndarray:
    return np.zeros(len(knobs))


def _winograd_transform_tile(layer: ConvLayer, knobs: np.ndarray) -> np.ndarray:
    e = np.asarray(knobs)[:, WinogradConfig.params.index("e")]
    return (e + layer.k_h - 1) * (e + layer.k_w - 1)


#: The kernel families, keyed by algorithm name.
KERNELS: Registry[KernelFamily] = Registry("algorithm")
for _fam in (KernelFamily(dataflow_family("direct"), DirectConfig, generate_direct, _direct_tolerance,
                          "alpha", direct_tile_flops, _no_transform_tile),
             KernelFamily(dataflow_family("winograd"), WinogradConfig, generate_winograd,
                          _winograd_tolerance, None, winograd_tile_flops, _winograd_transform_tile)):
    KERNELS.register(_fam.name, _fam)


def kernel_family(key) -> KernelFamily:
    """The :class:`KernelFamily` of a name, an Algorithm or a config (unknown: InvalidInputError).

    >>> from iobound.algorithms import get_algorithm
    >>> kernel_family(get_algorithm("direct")).config_type.__name__
    'DirectConfig'
    >>> kernel_family("fft")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: unknown algorithm 'fft'; choose one of direct, winograd
    """
    return KERNELS.get(getattr(key, "algorithm", key))
