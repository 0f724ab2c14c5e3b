"""The near I/O-optimal dataflow of direct convolution: tiling, exact I/O, footprint.

A thread block computes an ``x * y * z`` output tile (width, height, output channels)
of one image, keeping the partial sums on chip, and streams the input channels in
chunks of ``alpha``: per chunk it stages the input rectangle that the tile's windows
read and the chunk's weights of the ``z`` kernels (paper Sec. 5.2, Fig. 5). Tiles
start at multiples of ``x``, ``y``, ``z``; border tiles are clipped.

The exact I/O follows conventions.md: each used in-bounds input element is loaded once
per block (padding and rows/columns skipped by a large stride are never loaded), every
weight of the block's ``z`` kernels once per block, every output once. Grouped layers:
a block reads the input channels of the groups its ``z`` output channels touch (tiles
over the global channel index may span groups); :mod:`dataflow.grouped` runs the dense
dataflow of one group per group instead.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=(1, 1))
>>> t = DirectTiling(x=4, y=4, z=4, alpha=1)
>>> direct_io(layer, t)
DataflowIO(input_loads=800, weight_loads=1152, output_stores=512, total=2464)
>>> direct_footprint(layer, t).total
136
>>> round(direct_optimality_gap(layer, t), 4)
-0.5556
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from iobound import limits
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer, takes_layer

from .io_volume import DataflowIO, Footprint, check_block_memory
from .io_volume import _channel_group_spans, _used_total
from .io_volume import shown_tiling as _shown_tiling
from .runs import RunTiling, check_run_tiling

__all__ = [
    "DirectTiling",
    "check_dense",
    "check_direct_tiling",
    "direct_io",
    "direct_footprint",
    "direct_block_words",
    "direct_paper_io",
    "direct_paper_total",
    "direct_optimality_gap",
    "relative_gap",
    "satisfies_optimality",
]


def _positive_ints(obj, names, limit: limits.Limit = limits.TILE) -> None:
    """Check the fields ``names`` of the frozen ``obj`` against ``limit`` (numpy integers
    are stored as ``int``)."""
    for name in names:
        object.__setattr__(obj, name, limits.check_int(f"tile {name}", getattr(obj, name), limit))


def _tile_ints(**tiles) -> list[int]:
    """The tile edges ``tiles`` as ints, each checked against :data:`~iobound.limits.TILE`."""
    return [limits.check_int(f"tile {name}", v, limits.TILE) for name, v in tiles.items()]


@dataclass(frozen=True)
class DirectTiling:
    """Output tile ``x`` (width) * ``y`` (height) * ``z`` (channels), input chunk ``alpha``.

    Examples
    --------
    >>> DirectTiling(7, 7, 32).to_dict()
    {'x': 7, 'y': 7, 'z': 32, 'alpha': 1}
    """

    x: int
    y: int
    z: int
    alpha: int = 1

    def __post_init__(self) -> None:
        _positive_ints(self, ("x", "y", "z", "alpha"))

    def to_dict(self) -> dict:
        return {"x": self.x, "y": self.y, "z": self.z, "alpha": self.alpha}

    @classmethod
    def from_dict(cls, d: dict) -> "DirectTiling":
        """The tiling of :meth:`to_dict` (``alpha`` 1 when absent); a missing key is named.

        >>> DirectTiling.from_dict({"x": 4, "y": 4})
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: direct tiling dict must be a mapping with x, y, z; got {'x': 4, 'y': 4}
        """
        if not isinstance(d, Mapping) or any(k not in d for k in ("x", "y", "z")):
            raise InvalidInputError(f"direct tiling dict must be a mapping with x, y, z; "
                                    f"got {d!r:.80}")
        return cls(x=d["x"], y=d["y"], z=d["z"], alpha=d.get("alpha", 1))


@takes_layer
def check_direct_tiling(layer: ConvLayer, tiling: DirectTiling) -> None:
    """InvalidInputError unless ``tiling`` is a :class:`DirectTiling` whose tiles fit the
    layer (naming the field of a tile larger than its dimension).

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> check_direct_tiling(ConvLayer(1, 2, 5, 5, 3, 3, 3), DirectTiling(4, 3, 3))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: tile x=4 is larger than w_out=3
    """
    if not isinstance(tiling, DirectTiling):
        raise InvalidInputError(f"tiling must be a DirectTiling (x, y, z, alpha), got "
                                f"{_shown_tiling(tiling)}")
    for name, dim, dim_name in (("x", layer.w_out, "w_out"), ("y", layer.h_out, "h_out"),
                                ("z", layer.c_out, "c_out"), ("alpha", layer.c_in, "c_in")):
        v = getattr(tiling, name)
        if v > dim:
            raise InvalidInputError(f"tile {name}={v} is larger than {dim_name}={dim}")


@takes_layer
def check_dense(layer: ConvLayer, what: str) -> None:
    """InvalidInputError for a grouped layer where ``what`` models dense layers only.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> check_dense(ConvLayer(1, 4, 5, 5, 4, 3, 3, groups=2), "this search")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: this search takes dense layers (groups=1), got groups=2; grouped layers: dataflow.grouped (the dense dataflow of one group, run per group)
    """
    if layer.groups != 1:
        raise InvalidInputError(f"{what} takes dense layers (groups=1), got groups={layer.groups}; "
                                "grouped layers: dataflow.grouped (the dense dataflow of one "
                                "group, run per group)")


@takes_layer
def direct_io(layer: ConvLayer, tiling: DirectTiling) -> DataflowIO:
    """Exact global loads and stores (words) of the direct dataflow, all images.

    Parameters
    ----------
    layer : ConvLayer
    tiling : DirectTiling
        ``alpha`` does not change the traffic (only the footprint).

    Returns
    -------
    DataflowIO

    Examples
    --------
    A 1x1 kernel with stride 2 reads one input in four, once per output-channel tile:

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(1, 2, 8, 8, 4, 1, 1, stride=(2, 2))
    >>> direct_io(layer, DirectTiling(4, 4, 2)).input_loads
    64
    """
    check_direct_tiling(layer, tiling)
    (mu_h, mu_w), (d_h, d_w), (p_h, p_w) = layer.stride, layer.dilation, layer.padding
    rows = _used_total(layer.h_out, tiling.y, mu_h, d_h, layer.k_h, p_h, layer.h_in)
    cols = _used_total(layer.w_out, tiling.x, mu_w, d_w, layer.k_w, p_w, layer.w_in)
    n_x = -(-layer.w_out // tiling.x)
    n_y = -(-layer.h_out // tiling.y)
    spans = _channel_group_spans(layer.c_out, layer.c_out_per_group, tiling.z)  # n_z if dense
    inputs = layer.n * spans * layer.c_in_per_group * rows * cols
    weights = layer.n * n_x * n_y * layer.weight_size
    outputs = layer.output_size
    return DataflowIO.of(inputs, weights, outputs)


@takes_layer
def direct_footprint(layer: ConvLayer, tiling: DirectTiling) -> Footprint:
    """On-chip words of one block: staged input chunk and weights, plus accumulators.

    shared = alpha * in_rows(y) * in_cols(x) + z * alpha * k_h * k_w with
    in_rows(y) = (y - 1) * mu_h + extent_h (the full rectangle of a full tile);
    registers = x * y * z accumulators.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> direct_footprint(ConvLayer(1, 8, 9, 9, 8, 3, 3), DirectTiling(7, 7, 8, 2))
    Footprint(shared_words=306, register_words=392, total=698)
    """
    check_direct_tiling(layer, tiling)
    return direct_block_words(layer, tiling.x, tiling.y, tiling.z, tiling.alpha)


@takes_layer
def direct_block_words(layer: ConvLayer, x: int, y: int, z: int, alpha: int) -> Footprint:
    """The formula of :func:`direct_footprint` without its checks.

    For callers that must size points which are not valid tilings (tiles larger than the
    layer), such as ``kernels.config`` for a search that keeps invalid configurations.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> direct_block_words(ConvLayer(1, 8, 9, 9, 8, 3, 3), 70, 7, 8, 2).total  # x > w_out
    5360
    """
    x, y, z, alpha = _tile_ints(x=x, y=y, z=z, alpha=alpha)
    in_rows = (y - 1) * layer.stride[0] + layer.extent_h
    in_cols = (x - 1) * layer.stride[1] + layer.extent_w
    shared = alpha * in_rows * in_cols + z * alpha * layer.k_h * layer.k_w
    return Footprint.of(shared, x * y * z)


@takes_layer
def direct_paper_io(layer: ConvLayer, tiling: DirectTiling) -> float:
    """The paper's estimate of the dataflow's I/O for a tiling (Sec. 5.2, Eq. 12 first line).

    ``n * H_out W_out C_out / (x y z) * k_h k_w C_in (z + x y / R) + n * H_out W_out C_out``
    with the paper's R = k_h k_w / (mu_h mu_w) (reads as in Eq. 12, plus the output
    writes stated after it), times the batch ``n``.

    It differs from :func:`direct_io` because it takes the staged input tile as
    ``x' = mu x`` (no halo of ``extent - mu``; the exact count is larger for
    overlapping windows), counts padding as loaded and, when the stride exceeds the
    kernel extent, counts the skipped rows (the exact count is smaller then), and uses
    the fractional number of tiles ``H_out W_out C_out / (x y z)`` instead of clipped
    border tiles.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=(1, 1))
    >>> direct_paper_io(layer, DirectTiling(4, 4, 4))
    2176.0
    """
    if isinstance(tiling, RunTiling):   # a dataflow.runs.RunTiling has x y = m, alpha 1
        check_run_tiling(layer, tiling)
    else:
        check_direct_tiling(layer, tiling)
    x, y, z = tiling.x, tiling.y, tiling.z
    hwc = layer.n * layer.h_out * layer.w_out * layer.c_out
    reads = (hwc / (x * y * z) * layer.k_h * layer.k_w * layer.c_in_per_group
             * (z + x * y / layer.reuse_paper))
    return float(reads + hwc)


@takes_layer
def direct_paper_total(layer: ConvLayer, fast_memory: int, processors: int = 1) -> float:
    """The paper's closed-form I/O of the tuned dataflow (Sec. 5.2, Eq. 13).

    ``2 n H_out W_out C_out k_h k_w C_in / sqrt(R S / N_p) + n H_out W_out C_out`` with
    the paper's R; it assumes ``x y z = S / N_p`` and ``x y = R z`` exactly, which ignores
    that the staged inputs and weights also occupy the fast memory.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> round(direct_paper_total(ConvLayer(1, 4, 8, 8, 8, 3, 3, padding=(1, 1)), 64))
    2048
    """
    check_block_memory(limits.check_int("fast_memory", fast_memory, limits.FAST_MEMORY_WORDS),
                       limits.check_int("processors", processors, limits.PROCESSORS))
    hwc = layer.n * layer.h_out * layer.w_out * layer.c_out
    per_block = fast_memory / processors
    return float(2 * hwc * layer.k_h * layer.k_w * layer.c_in_per_group
                 / math.sqrt(layer.reuse_paper * per_block) + hwc)


@takes_layer
def direct_optimality_gap(layer: ConvLayer, tiling: DirectTiling, reuse: float | None = None) -> float:
    """Signed relative gap of the optimality condition ``x y = R z`` (paper Sec. 5.2).

    ``(x y - R z) / max(x y, R z)``: 0 when the condition holds, positive when the
    spatial tile is too large for ``z``, negative when too small; ``|gap| < 1``.
    ``R`` defaults to ``layer.reuse_max`` (the reuse the bounds use; DESIGN.md);
    pass ``reuse=layer.reuse_paper`` for the paper's R.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> direct_optimality_gap(ConvLayer(1, 4, 8, 8, 8, 3, 3), DirectTiling(6, 3, 2))
    0.0
    """
    check_direct_tiling(layer, tiling)
    r = float(layer.reuse_max if reuse is None else limits.check_number("reuse", reuse, 0, low_open=True))
    return relative_gap(tiling.x * tiling.y, r * tiling.z)


def relative_gap(xy: float, rz: float) -> float:
    """``(x y - R z) / max(x y, R z)`` of the two sides of ``x y = R z`` (positive numbers;
    no tiling or layer check: the public gaps check theirs and call this).

    Examples
    --------
    >>> relative_gap(18, 18.0), relative_gap(9, 18.0)
    (0.0, -0.5)
    """
    xy, rz = float(xy), float(rz)
    return (xy - rz) / max(xy, rz)


@takes_layer
def satisfies_optimality(layer: ConvLayer, tiling: DirectTiling, tol: float = 0.25,
                         reuse: float | None = None) -> bool:
    """Whether ``|direct_optimality_gap| <= tol`` (``x y = R z`` up to a relative ``tol``).

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> satisfies_optimality(ConvLayer(1, 4, 8, 8, 8, 3, 3), DirectTiling(6, 3, 2), tol=0.0)
    True
    """
    limits.check_number("tol", tol, 0)
    return abs(direct_optimality_gap(layer, tiling, reuse)) <= tol
