"""Raster-run tiles for layers whose windows do not overlap (1x1 kernels, patches with k = stride).

When no two outputs read the same input (``extent <= stride`` on both axes), a spatial tile
need not be a rectangle: any set of output positions reads exactly the in-bounds taps of
its own windows, so the inputs a pass over all tiles loads do not depend on the tiling.
A *run* tile is ``m`` consecutive output positions in raster order (``(oh, ow)``, rows
wrapping) times ``z`` output channels; there are ``ceil(h_out w_out / m)`` runs per image,
any ``m`` from 1 to ``h_out w_out`` (a rectangle grid only reaches ``ceil(w/x) ceil(h/y)``).

Per-block staging streams one operand a word at a time (the played schedule of
:func:`dataflow.runs_schedule.run_schedule`): with the channel's inputs of the run resident, each weight is
loaded, used by all the run's outputs and dropped (``"inputs"``); with the chunk's weights
resident, each input is loaded, used by the ``z`` channels and dropped (``"weights"``).
Footprints (words; +2 pebbles for the product and new partial sum, as for every block):

* ``"output-runs"``: ``m z + min(m, z) k_h k_w + 1``; the block is one run and chunk.
* ``"weight-runs"``: ``z c_in k_h k_w + m z + 1``; the block owns a chunk and walks every run.
* ``"input-runs"``: ``c_in m k_h k_w + m z + 1``; the block owns a run and walks every chunk.

Exact I/O (the conventions of :func:`dataflow.direct.direct_io`): ``U`` the used in-bounds
inputs of one image, ``W`` the weights, ``O`` the outputs, ``n_z = ceil(c_out / z)``,
``n_r`` the runs per image: output-runs ``n (n_z U + n_r W) + O``, weight-runs
``n n_z U + W + O``, input-runs ``n (U + n_r W) + O``.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=512, h_in=28, w_in=28, c_out=128, k_h=1, k_w=1)
>>> run_io(layer, RunTiling(88, 128), "output-runs").total
1091584
>>> run_footprint(layer, RunTiling(88, 128), "output-runs").total
11353
>>> best_run_dataflow(layer, 12288).order
'output-runs'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iobound import limits
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer, takes_layer

from .io_volume import DataflowIO, Footprint, least_size_per_count, shown_tiling, used_total

__all__ = ["RUN_ORDERS", "RUN_LENGTH", "RunTiling", "RunChoice", "runs_apply", "runs_refusal", "check_run_tiling",
           "run_io", "run_footprint", "best_run_dataflow"]

#: Run dataflows by the operand a block keeps between tiles (the stationary orders' names + "-runs").
RUN_ORDERS = ("output-runs", "weight-runs", "input-runs")

#: A run tile's m is at most h_out * w_out (the TILE limit is for one edge); an output edge
#: is at most the padded input, 3x the spatial limit (:data:`iobound.limits.PADDING`).
RUN_LENGTH = limits.Limit(1, (3 * limits.SPATIAL.high) ** 2, "run length: at most h_out*w_out")


@dataclass(frozen=True)
class RunTiling:
    """``m`` consecutive output positions (raster order) times ``z`` output channels.

    ``x``, ``y`` and ``alpha`` let it stand where a rectangle's are read: ``x y = m``
    spatial outputs, one channel a step. ``m`` is checked against :data:`RUN_LENGTH`, ``z``
    against :data:`iobound.limits.TILE`; numpy integers are stored as ``int``.

    Examples
    --------
    >>> t = RunTiling(88, 128)
    >>> t.to_dict(), t.x * t.y
    ({'m': 88, 'z': 128}, 88)
    >>> RunTiling(np.int64(4), 2).m.__class__.__name__
    'int'
    >>> RunTiling(0, 2)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: run tile m=0 is below the minimum 1
    """

    m: int
    z: int

    def __post_init__(self) -> None:
        for name, limit in (("m", RUN_LENGTH), ("z", limits.TILE)):
            object.__setattr__(self, name, limits.check_int(f"run tile {name}", getattr(self, name), limit))

    @property
    def x(self) -> int:
        return self.m

    @property
    def y(self) -> int:
        return 1

    @property
    def alpha(self) -> int:
        return 1

    def to_dict(self) -> dict:
        return {"m": self.m, "z": self.z}


@takes_layer
def runs_refusal(layer: ConvLayer) -> str | None:
    """Why run tiles do not apply to ``layer`` (what it has of overlapping windows and
    groups), or ``None`` when they do.

    Examples
    --------
    >>> runs_refusal(ConvLayer(1, 4, 8, 8, 4, 3, 3))
    'run tiles need windows that do not overlap (extent <= stride); n1 4x8x8 -> 4x6x6 k3x3 s1x1 p0x0 has overlapping windows'
    """
    parts = []  # (what run tiles need, what the layer has instead)
    if layer.extent_h > layer.stride[0] or layer.extent_w > layer.stride[1]:
        parts.append(("windows that do not overlap (extent <= stride)", "overlapping windows"))
    if layer.groups != 1:
        parts.append(("one group", f"{layer.groups} groups"))
    if not parts:
        return None
    need, has = (" and ".join(p) for p in zip(*parts))
    return f"run tiles need {need}; {layer.short()} has {has}"


@takes_layer
def runs_apply(layer: ConvLayer) -> bool:
    """Whether no two outputs share an input (``extent <= stride`` on both axes, one group).

    Examples
    --------
    >>> runs_apply(ConvLayer(1, 4, 8, 8, 4, 1, 1)), runs_apply(ConvLayer(1, 4, 8, 8, 4, 3, 3))
    (True, False)
    """
    return runs_refusal(layer) is None


@takes_layer
def check_run_tiling(layer: ConvLayer, tiling: RunTiling) -> None:
    """InvalidInputError unless ``tiling`` is a :class:`RunTiling`, runs apply to ``layer``
    and no tile exceeds its dimension.

    Examples
    --------
    >>> from dataflow.direct import DirectTiling
    >>> check_run_tiling(ConvLayer(1, 2, 4, 4, 2, 1, 1), DirectTiling(1, 1, 1))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: tiling must be a RunTiling (m, z), got DirectTiling(x=1, y=1, z=1, alpha=1)
    """
    if not isinstance(tiling, RunTiling):
        raise InvalidInputError(f"tiling must be a RunTiling (m, z), got {shown_tiling(tiling)}")
    refusal = runs_refusal(layer)
    if refusal:
        raise InvalidInputError(refusal)
    positions = layer.h_out * layer.w_out
    if tiling.m > positions:
        raise InvalidInputError(f"run m={tiling.m} is larger than h_out*w_out={positions}")
    if tiling.z > layer.c_out:
        raise InvalidInputError(f"run z={tiling.z} is larger than c_out={layer.c_out}")


def _check_order(order: str) -> None:
    if not isinstance(order, str) or order not in RUN_ORDERS:
        raise InvalidInputError(f"unknown run order {order!r}; choose one of {', '.join(RUN_ORDERS)}")


def _used_inputs(layer: ConvLayer) -> int:
    """Used in-bounds inputs of one image (any tiling: windows do not overlap)."""
    (mu_h, mu_w), (d_h, d_w), (p_h, p_w) = layer.stride, layer.dilation, layer.padding
    rows = used_total(layer.h_out, layer.h_out, mu_h, d_h, layer.k_h, p_h, layer.h_in)
    cols = used_total(layer.w_out, layer.w_out, mu_w, d_w, layer.k_w, p_w, layer.w_in)
    return layer.c_in * rows * cols


def _io(layer: ConvLayer, m, z, order: str):
    """Exact I/O for scalars or numpy arrays ``m``, ``z``."""
    n_r = -(-(layer.h_out * layer.w_out) // m)
    n_z = -(-layer.c_out // z)
    u, w = _used_inputs(layer), layer.weight_size
    if order == "output-runs":
        loads = layer.n * (n_z * u + n_r * w)
    elif order == "weight-runs":
        loads = layer.n * n_z * u + w
    else:
        loads = layer.n * (u + n_r * w)
    return loads + layer.output_size


def _footprint(layer: ConvLayer, m, z, order: str):
    """(resident or staged words, accumulators) for scalars or numpy arrays."""
    kk = layer.k_h * layer.k_w
    if order == "output-runs":
        return np.minimum(m, z) * kk + 1, m * z
    if order == "weight-runs":
        return z * layer.c_in * kk + 1, m * z
    return layer.c_in * m * kk + 1, m * z


@takes_layer
def run_io(layer: ConvLayer, tiling: RunTiling, order: str = "output-runs") -> DataflowIO:
    """Exact global loads and stores (words) of the run dataflow ``order``.

    Examples
    --------
    >>> layer = ConvLayer(2, 3, 4, 4, 5, 1, 1)
    >>> run_io(layer, RunTiling(16, 5), "output-runs")
    DataflowIO(input_loads=96, weight_loads=30, output_stores=160, total=286)
    """
    _check_order(order)
    check_run_tiling(layer, tiling)
    n_r = -(-(layer.h_out * layer.w_out) // tiling.m)
    n_z = -(-layer.c_out // tiling.z)
    u, w = _used_inputs(layer), layer.weight_size
    inputs = layer.n * u * (1 if order == "input-runs" else n_z)
    weights = w if order == "weight-runs" else layer.n * n_r * w
    return DataflowIO.of(inputs, weights, layer.output_size)


@takes_layer
def run_footprint(layer: ConvLayer, tiling: RunTiling, order: str = "output-runs") -> Footprint:
    """On-chip words of one block of the run dataflow ``order`` (module docstring).

    Examples
    --------
    >>> run_footprint(ConvLayer(1, 3, 4, 4, 5, 1, 1), RunTiling(4, 2), "weight-runs")
    Footprint(shared_words=7, register_words=8, total=15)
    """
    _check_order(order)
    check_run_tiling(layer, tiling)
    shared, regs = _footprint(layer, tiling.m, tiling.z, order)
    return Footprint.of(int(shared), int(regs))


@dataclass(frozen=True)
class RunChoice:
    """The run dataflow of least exact I/O: its order, tiling, I/O and footprint.

    Examples
    --------
    >>> c = best_run_dataflow(ConvLayer(1, 512, 28, 28, 128, 1, 1), 4096)
    >>> c.order, c.tiling, c.footprint.total
    ('output-runs', RunTiling(m=61, z=64), 3966)
    """

    order: str
    tiling: RunTiling
    io: DataflowIO
    footprint: Footprint


@takes_layer
def best_run_dataflow(layer: ConvLayer, fast_memory: int,
                      orders: tuple[str, ...] = RUN_ORDERS) -> RunChoice | None:
    """The run order and tiling of least exact I/O within ``fast_memory`` words (ties: smaller
    footprint, then order); None when runs do not apply or no block fits.

    Examples
    --------
    >>> best_run_dataflow(ConvLayer(1, 4, 8, 8, 4, 3, 3), 1000) is None   # windows overlap
    True
    >>> best_run_dataflow(ConvLayer(1, 64, 56, 56, 64, 1, 1), 12288).io.total   # compulsory
    405504
    """
    fast_memory = limits.check_int("fast_memory", fast_memory, limits.FAST_MEMORY_WORDS)
    if isinstance(orders, str) or not isinstance(orders, (tuple, list)) or not orders:
        raise InvalidInputError(f"orders must be a non-empty tuple of run orders "
                                f"({', '.join(RUN_ORDERS)}), got {orders!r:.60}")
    for o in orders:
        _check_order(o)
    if not runs_apply(layer):
        return None
    ms, zs = least_size_per_count(layer.h_out * layer.w_out), least_size_per_count(layer.c_out)
    m, z = np.meshgrid(ms, zs, indexing="ij")
    best = None
    for rank, order in enumerate(orders):
        shared, regs = _footprint(layer, m, z, order)
        foot = shared + regs
        io = _io(layer, m, z, order)
        fits = foot <= fast_memory
        if not fits.any():
            continue
        key = np.where(fits, io, np.iinfo(np.int64).max)
        cand = np.flatnonzero(key == key.min())
        k = cand[np.argmin(foot.ravel()[cand])]
        entry = (int(key.ravel()[k]), int(foot.ravel()[k]), rank, order,
                 int(m.ravel()[k]), int(z.ravel()[k]))
        best = entry if best is None or entry < best else best
    if best is None:
        return None
    order, t = best[3], RunTiling(best[4], best[5])
    return RunChoice(order, t, run_io(layer, t, order), run_footprint(layer, t, order))
