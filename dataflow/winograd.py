"""The near I/O-optimal dataflow of Winograd convolution F(e x e, r x r).

A thread block computes an ``x * y * z`` output tile of one image as ``(x/e) * (y/e)``
Winograd tiles for ``z`` output channels (paper Sec. 5.3, Fig. 6). It streams the input
channels one at a time (``alpha = 1``, the paper's choice): per channel it stages the
raw input rectangle and the ``z`` raw ``r x r`` kernels, transforms them on chip and
accumulates into two ``(e+r-1)^2`` temporary arrays per Winograd tile and output
channel. Stride and dilation are 1 and the kernel is square.

The exact I/O is the direct dataflow's count with ``mu = d = 1`` and ``k = r``: each
used in-bounds input once per block (whatever lies outside is zero-filled on chip), the
block's raw weights once, each output once.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=(1, 1))
>>> t = WinogradTiling(e=2, x=4, y=4, z=4)
>>> winograd_io(layer, t)
DataflowIO(input_loads=800, weight_loads=1152, output_stores=512, total=2464)
>>> winograd_footprint(layer, t)
Footprint(shared_words=72, register_words=512, total=584)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from iobound import limits
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer, takes_layer

from .direct import DirectTiling, _positive_ints, _shown_tiling, _tile_ints, direct_io, relative_gap
from .io_volume import DataflowIO, Footprint, check_block_memory

__all__ = [
    "WinogradTiling",
    "check_winograd_tiling",
    "winograd_io",
    "winograd_footprint",
    "winograd_block_words",
    "winograd_paper_io",
    "winograd_paper_total",
    "winograd_optimality_gap",
    "winograd_satisfies_optimality",
]


@dataclass(frozen=True)
class WinogradTiling:
    """F(e x e, r x r) tiles; output tile ``x * y * z`` with ``x`` and ``y`` multiples of ``e``.

    Examples
    --------
    >>> WinogradTiling(2, 4, 6, 16).tiles_per_block
    6
    >>> WinogradTiling(2, 3, 4, 1)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: tile x=3 must be a multiple of e=2
    """

    e: int
    x: int
    y: int
    z: int

    def __post_init__(self) -> None:
        _positive_ints(self, ("e",), limits.WINOGRAD_E)
        _positive_ints(self, ("x", "y", "z"))
        for name in ("x", "y"):
            if getattr(self, name) % self.e:
                raise InvalidInputError(f"tile {name}={getattr(self, name)} must be a multiple of e={self.e}")

    @property
    def alpha(self) -> int:
        """Input channels per stage: always 1 (the paper's choice)."""
        return 1

    @property
    def tiles_per_block(self) -> int:
        """Winograd tiles ``(x/e) * (y/e)`` in one block's output tile."""
        return (self.x // self.e) * (self.y // self.e)

    def to_dict(self) -> dict:
        return {"e": self.e, "x": self.x, "y": self.y, "z": self.z}

    @classmethod
    def from_dict(cls, d: dict) -> "WinogradTiling":
        """The tiling of :meth:`to_dict`; a missing key is named (InvalidInputError)."""
        if not isinstance(d, Mapping) or any(k not in d for k in ("e", "x", "y", "z")):
            raise InvalidInputError(f"Winograd tiling dict must be a mapping with e, x, y, z; "
                                    f"got {d!r:.80}")
        return cls(e=d["e"], x=d["x"], y=d["y"], z=d["z"])


@takes_layer
def check_winograd_tiling(layer: ConvLayer, tiling: WinogradTiling) -> None:
    """InvalidInputError unless ``tiling`` is a :class:`WinogradTiling`, Winograd applies to
    the layer and no tile exceeds its dimension.

    A tile may exceed the output by less than ``e`` (one partial Winograd tile).

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> check_winograd_tiling(ConvLayer(1, 2, 9, 9, 4, 3, 3, stride=(2, 2)), WinogradTiling(2, 2, 2, 1))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: Winograd needs stride 1, got stride=(2, 2)
    """
    if not isinstance(tiling, WinogradTiling):
        raise InvalidInputError(f"tiling must be a WinogradTiling (e, x, y, z), got "
                                f"{_shown_tiling(tiling)}")
    layer.check_winograd()
    for name, dim, dim_name in (("x", layer.w_out, "w_out"), ("y", layer.h_out, "h_out")):
        v = getattr(tiling, name)
        if v >= dim + tiling.e:
            raise InvalidInputError(f"tile {name}={v} is larger than {dim_name}={dim} rounded up to e={tiling.e}")
    if tiling.z > layer.c_out:
        raise InvalidInputError(f"tile z={tiling.z} is larger than c_out={layer.c_out}")


def _as_direct(layer: ConvLayer, tiling: WinogradTiling) -> DirectTiling:
    return DirectTiling(min(tiling.x, layer.w_out), min(tiling.y, layer.h_out), tiling.z, 1)


@takes_layer
def winograd_io(layer: ConvLayer, tiling: WinogradTiling) -> DataflowIO:
    """Exact global loads and stores (words) of the Winograd dataflow, all images.

    Blocks load raw inputs and raw ``r x r`` weights, so the count equals the direct
    dataflow's with the same ``x, y, z`` (a tile that overhangs the output by a partial
    Winograd tile covers the same outputs as the clipped tile).

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> winograd_io(ConvLayer(1, 1, 6, 6, 2, 3, 3), WinogradTiling(2, 4, 4, 2)).input_loads
    36
    """
    check_winograd_tiling(layer, tiling)
    return direct_io(layer, _as_direct(layer, tiling))


@takes_layer
def winograd_footprint(layer: ConvLayer, tiling: WinogradTiling) -> Footprint:
    """On-chip words of one block (one input channel staged at a time).

    shared = (y + r - 1) * (x + r - 1) raw inputs + z * r * r raw weights;
    registers = 2 * (x/e) * (y/e) * z * (e + r - 1)^2 temporary arrays (paper Sec. 5.3).

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> winograd_footprint(ConvLayer(1, 1, 6, 6, 2, 3, 3), WinogradTiling(2, 4, 4, 2)).register_words
    256
    """
    check_winograd_tiling(layer, tiling)
    return winograd_block_words(layer, tiling.e, tiling.x, tiling.y, tiling.z)


@takes_layer
def winograd_block_words(layer: ConvLayer, e: int, x: int, y: int, z: int) -> Footprint:
    """The formula of :func:`winograd_footprint` without its checks.

    For callers that must size points which are not valid tilings (``x`` not a multiple
    of ``e``: ``(x // e) * (y // e)`` whole Winograd tiles are counted), such as
    ``kernels.config`` for a search that keeps invalid configurations.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> winograd_block_words(ConvLayer(1, 1, 6, 6, 2, 3, 3), 2, 4, 4, 2)
    Footprint(shared_words=54, register_words=256, total=310)
    """
    e = limits.check_winograd_e(e)
    x, y, z = _tile_ints(x=x, y=y, z=z)
    r, n = layer.k_h, e + layer.k_h - 1
    shared = (y + r - 1) * (x + r - 1) + z * layer.k_h * layer.k_w  # z * r * r when square
    return Footprint.of(shared, 2 * (x // e) * (y // e) * z * n * n)


@takes_layer
def winograd_paper_io(layer: ConvLayer, tiling: WinogradTiling) -> float:
    """The paper's estimate of the dataflow's I/O for a tiling (Sec. 5.3, Eq. 14 first line).

    ``n H_out W_out C_out / (x y z) * (x y C_in + z r^2 C_in) + n H_out W_out C_out``:
    reads as in Eq. 14 (``x' = x``, ``y' = y``) plus the output writes stated after it,
    times the batch ``n``. The exact count differs by the halo (``x + r - 1`` staged
    columns, larger), by padding (never loaded, smaller) and by the clipped border tiles
    (the paper uses the fractional tile count).

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> winograd_paper_io(ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=(1, 1)), WinogradTiling(2, 4, 4, 4))
    2176.0
    """
    check_winograd_tiling(layer, tiling)
    x, y, z, r = tiling.x, tiling.y, tiling.z, layer.k_h
    hwc = layer.n * layer.h_out * layer.w_out * layer.c_out
    return float(hwc / (x * y * z) * (x * y * layer.c_in + z * r * r * layer.c_in) + hwc)


@takes_layer
def winograd_paper_total(layer: ConvLayer, e: int, fast_memory: int, processors: int = 1) -> float:
    """The paper's closed-form I/O of the tuned Winograd dataflow (the total after Eq. 14).

    ``2 n H_out W_out C_out C_in r (e + r - 1) / (e sqrt(S / N_p)) + n H_out W_out C_out``,
    as printed. Note: substituting the paper's own choices ``2 (e+r-1)^2 x y z / e^2 = S/N_p``
    and ``x y = r^2 z`` into Eq. 14 gives a read term ``sqrt(2)`` times larger than the
    printed one; this function returns the printed form.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> round(winograd_paper_total(ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=(1, 1)), 2, 1024))
    1280
    """
    layer.check_winograd()
    e = limits.check_winograd_e(e)
    fast_memory = limits.check_int("fast_memory", fast_memory, limits.FAST_MEMORY_WORDS)
    processors = limits.check_int("processors", processors, limits.PROCESSORS)
    check_block_memory(fast_memory, processors)
    r = layer.k_h
    hwc = layer.n * layer.h_out * layer.w_out * layer.c_out
    return float(2 * hwc * layer.c_in * r * (e + r - 1) / (e * math.sqrt(fast_memory / processors)) + hwc)


@takes_layer
def winograd_optimality_gap(layer: ConvLayer, tiling: WinogradTiling) -> float:
    """Signed relative gap of ``x y = r^2 z`` (paper Sec. 5.3; R = r^2 for stride 1).

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> winograd_optimality_gap(ConvLayer(1, 4, 8, 8, 8, 3, 3), WinogradTiling(2, 6, 6, 4))
    0.0
    """
    check_winograd_tiling(layer, tiling)
    return relative_gap(tiling.x * tiling.y, float(layer.k_h * layer.k_w) * tiling.z)


@takes_layer
def winograd_satisfies_optimality(layer: ConvLayer, tiling: WinogradTiling, tol: float = 0.25) -> bool:
    """Whether ``|winograd_optimality_gap| <= tol``.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> winograd_satisfies_optimality(ConvLayer(1, 4, 8, 8, 8, 3, 3), WinogradTiling(2, 2, 2, 4))
    False
    """
    limits.check_number("tol", tol, 0)
    return abs(winograd_optimality_gap(layer, tiling)) <= tol
