"""Analytic features of kernel configurations, vectorised over many configs.

For a layer, a device preset and a matrix of knob values (one config per row, in
the ``ConvSpace.params`` order) :func:`analytic_features` returns the columns of
:data:`FEATURE_NAMES`:

- ``io_words``: exact global traffic of the dataflow (``dataflow.direct.direct_io``
  or ``winograd_io``; a grouped layer's is ``groups`` times one group's,
  :func:`kernels.grouping.kernel_io`), cached per tile since threads and ``alpha`` do
  not change it;
- ``io_over_compulsory``: ``io_words`` over the compulsory traffic (every input,
  weight and output once);
- ``io_over_bound``: ``io_words`` over the best valid lower bound
  (``iobound.report.best_lower_bound``) at S = the block's on-chip words
  (``kernels.config.onchip_words``: shared plus register words; a feature, so the S is
  the words themselves, while the bounds the commands report are at those + 2); Winograd
  with the config's ``e`` (a Winograd block's words depend on its threads: each holds its
  own transformed kernels and tiles, so the S is the config's own, threads included);
- ``footprint_words``: shared plus register words of a block (``onchip_words``);
- ``shared_bytes``, ``threads``, ``regs_per_thread`` (ptxas' registers estimated from
  the register words per thread and, for Winograd, the tile, capped by the launch bounds:
  :func:`kernels.limits.compiled_registers`), ``ilp`` (register words per thread: independent
  accumulations a thread has in flight);
- ``blocks``: thread blocks in the grid;
- ``blocks_per_sm``: resident blocks per SM by the Occupancy Calculator's rules
  (:func:`kernels.limits.resident_blocks_per_sm`);
- ``occupancy``: resident warps over the SM's maximum warps;
- ``waves``: ``blocks / (sm_count * blocks_per_sm)``;
- ``flops``: floating-point operations the kernel executes (:mod:`kernels.kernel_flops`:
  the dataflow's, with the whole tiles of the blocks the output's edge clips);
- ``intensity``: ``flops`` per byte of global traffic.

Examples
--------
>>> import numpy as np
>>> from iobound.layer import ConvLayer
>>> from iobound.devices import get_device
>>> layer = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3)
>>> f = analytic_features(layer, get_device("v100"), "direct", np.array([[6, 6, 8, 4, 6, 6, 2]]))
>>> feats = dict(zip(FEATURE_NAMES, f[0]))
>>> int(feats["io_words"]), int(feats["threads"]), int(feats["blocks"]), int(feats["ilp"])
(832, 72, 1, 4)
"""

from __future__ import annotations

import functools
import logging

import numpy as np

from dataflow.families import dataflow_family
from iobound import limits
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer, check_layer, takes_layer
from iobound.units import WORD_BYTES

from .config import _device, config_from_dict, onchip_words, register_words, shared_memory_bytes
from .families import kernel_family
from .grouping import kernel_io
from .kernel_flops import tile_flops
from .limits import compiled_registers, register_kind, resident_blocks_per_sm

__all__ = ["FEATURE_NAMES", "analytic_features", "knob_matrix", "io_words", "flops"]

log = logging.getLogger(__name__)

FEATURE_NAMES = (
    "io_words", "io_over_compulsory", "io_over_bound", "footprint_words", "shared_bytes",
    "threads", "regs_per_thread", "ilp", "blocks", "blocks_per_sm", "occupancy", "waves",
    "flops", "intensity",
)


# io_words and flops check their arguments before the caches see them (a list tile is
# unhashable; a tile of floats or strings must be refused, not cached as a key).

@takes_layer
def io_words(layer: ConvLayer, algorithm: str, tile: tuple[int, ...]) -> int:
    """Exact kernel traffic (words) of one tile: a tuple ``(x, y, z, alpha)`` or
    ``(e, x, y, z)`` of integers; InvalidInputError when it does not fit the layer.

    Examples
    --------
    >>> io_words(ConvLayer(1, 1, 6, 6, 2, 3, 3), "winograd", (2, 4, 4, 2))
    86
    """
    fam = dataflow_family(algorithm)
    return _io_words(layer, fam.name, fam.tiling_from(tile))


@functools.lru_cache(maxsize=1 << 16)
def _io_words(layer: ConvLayer, algorithm: str, tiling) -> int:
    return kernel_io(layer, algorithm, tiling).total


@takes_layer
def flops(layer: ConvLayer, algorithm: str, tile: tuple[int, ...]) -> int:
    """Floating-point operations the kernel of ``tile`` executes (FMA = 2), whatever its
    threads: :func:`kernels.kernel_flops.tile_flops` (which refuses the tiles
    :func:`io_words` refuses).

    Examples
    --------
    >>> flops(ConvLayer(1, 1, 6, 6, 2, 3, 3), "direct", (4, 4, 2, 1)) == 2 * 2 * 16 * 9
    True
    """
    fam = dataflow_family(algorithm)
    fam.tiling_from(tile)  # the tile's shape and values, before the cache hashes it
    return _flops(layer, fam.name, tile)


@functools.lru_cache(maxsize=1 << 16)
def _flops(layer: ConvLayer, algorithm: str, tile: tuple[int, ...]) -> int:
    return tile_flops(layer, algorithm, tile)


io_words.cache_clear, flops.cache_clear = _io_words.cache_clear, _flops.cache_clear


@functools.lru_cache(maxsize=1 << 14)
def _bound_cached(layer: ConvLayer, algorithm: str, fast_words: int, e: int | None) -> float:
    from iobound.report import best_lower_bound
    return float(best_lower_bound(layer, fast_words, algorithm, e))


# Walkers and annealing chains score the same tiles and configs round after round, and
# a network's layers share tiles: building a config and its footprint for each distinct
# tile (and config) on every call cost the explorer more than its cost model did, so the
# per-tile and per-config values are remembered (keyed on the layer, like io_words).

@functools.lru_cache(maxsize=1 << 16)
def _tile_sizes(layer: ConvLayer, algorithm: str, params: tuple[str, ...],
                tile: tuple[int, ...]) -> tuple[int, int, int, int]:
    """io words, flops, shared bytes and register words of one tile (``params`` order)."""
    cfg = config_from_dict({**dict(zip(params, tile)), "tx": 1, "ty": 1, "tz": 1}, algorithm)
    return (io_words(layer, algorithm, tile), flops(layer, algorithm, tile),
            shared_memory_bytes(layer, cfg), register_words(layer, cfg))


def _per_tile(layer: ConvLayer, algorithm: str, params: tuple[str, ...],
              tiles: np.ndarray) -> np.ndarray:
    """For each distinct tile (a row of ``tiles``, in ``params`` order) the rows io words,
    flops, shared bytes and register words: the features threads do not change, computed
    once per tile (:func:`_tile_sizes`)."""
    params = tuple(params)
    table = np.empty((4, len(tiles)))
    for k, row in enumerate(tiles.tolist()):
        table[:, k] = _tile_sizes(layer, algorithm, params, tuple(int(v) for v in row))
    return table


@functools.lru_cache(maxsize=1 << 16)
def _onchip_bound(layer: ConvLayer, algorithm: str, params: tuple[str, ...],
                  vals: tuple[int, ...]) -> tuple[int, float]:
    """The on-chip words of the config ``vals`` (``params`` order) and the best lower
    bound at S = those words."""
    words = onchip_words(layer, config_from_dict(dict(zip(params, vals)), algorithm))
    e = vals[params.index("e")] if "e" in params else None
    return words, _bound_cached(layer, algorithm, words, e)


def _onchip_and_bound(layer: ConvLayer, algorithm: str, config_type: type,
                      knobs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row of ``knobs`` the block's on-chip words (:func:`kernels.config.onchip_words`
    of the config itself: a Winograd block's depend on its threads) and the best lower
    bound at S = those words (a feature of the model; the bounds the commands report are
    at those words + 2), each computed once per distinct config (per tile when the words
    do not depend on the threads; :func:`_onchip_bound`)."""
    params = tuple(config_type.params)
    n_tile = len(params) - 3
    key = knobs if config_type.onchip_uses_threads else knobs[:, :n_tile]
    rows, inverse = np.unique(key, axis=0, return_inverse=True)
    table = np.empty((2, len(rows)))
    for k, row in enumerate(rows.tolist()):
        vals = tuple(int(v) for v in row) + (1, 1, 1)[:len(params) - len(row)]
        table[:, k] = _onchip_bound(layer, algorithm, params, vals)
    return table[:, inverse.reshape(-1)]


def _grid_blocks(layer: ConvLayer, fam, knobs: np.ndarray) -> np.ndarray:
    """Thread blocks in the grid of each row of ``knobs`` (ceil of the output over the tile)."""
    x_col, y_col, z_col = fam.tile_columns()
    return (layer.n * np.ceil(layer.w_out / knobs[:, x_col]) * np.ceil(layer.h_out / knobs[:, y_col])
            * np.ceil(layer.c_out / knobs[:, z_col]))


def knob_matrix(knobs, params: tuple[str, ...] = ("x", "y", "z", "alpha", "tx", "ty", "tz")) -> np.ndarray:
    """``knobs`` as an ``(n, 7)`` int64 matrix, one config a row (a 1-D array is read as
    its rows one after another); InvalidInputError naming the first bad knob when a value
    is no integer in :data:`iobound.limits.TILE` (floats must be whole: 2.5 is refused,
    never truncated; a thread count of 0 or -1 never reaches the model).

    >>> knob_matrix([4, 4, 2, 1, 2, 2, 1.0]).tolist()
    [[4, 4, 2, 1, 2, 2, 1]]
    >>> knob_matrix([[4, 4, 2, 1, 2, 2, 2.5]])
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: knob tz of config 0 must be an integer in 1..65536, got 2.5
    """
    try:
        arr = np.asarray(knobs)
    except ValueError as exc:  # ragged rows
        raise InvalidInputError(f"knobs must be an (n, 7) array of integers: {exc}") from None
    if limits.holds_bool(knobs):  # numpy reads [True, 4, ...] as integers
        raise InvalidInputError(f"knobs must be an (n, 7) array of integers, got a bool in "
                                f"{knobs!r:.60}")
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise InvalidInputError(f"knobs must be an (n, 7) array of integers, got dtype {arr.dtype}")
    if arr.ndim > 2 or (arr.ndim == 2 and arr.shape[1] != 7) or arr.size % 7:
        raise InvalidInputError(f"knobs must be an (n, 7) array of integers (one config a row), "
                                f"got shape {arr.shape}")
    rows = arr.reshape(-1, 7)
    with np.errstate(invalid="ignore"):
        bad = ~((rows >= limits.TILE.low) & (rows <= limits.TILE.high))
        if np.issubdtype(rows.dtype, np.floating):
            bad |= rows != np.floor(rows)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InvalidInputError(f"knob {params[j]} of config {i} must be an integer in "
                                f"{limits.TILE}, got {rows[i, j].item()!r}")
    return rows.astype(np.int64)


def analytic_features(layer: ConvLayer, device, algorithm: str, knobs: np.ndarray) -> np.ndarray:
    """The :data:`FEATURE_NAMES` columns for each row of ``knobs`` (see module doc).

    Parameters
    ----------
    layer : ConvLayer
    device : Device
        A device preset (``iobound.devices.get_device``).
    algorithm : {"direct", "winograd"}
    knobs : numpy.ndarray
        ``(n, 7)`` integers in the order ``x, y, z, alpha, tx, ty, tz`` (direct) or
        ``e, x, y, z, tx, ty, tz`` (Winograd).

    Returns
    -------
    numpy.ndarray
        ``(n, len(FEATURE_NAMES))`` floats.

    Examples
    --------
    One block covering the 4 x 4 x 2 output (compulsory I/O only), then 2 x 2 tiles:

    >>> layer = ConvLayer(n=1, c_in=1, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3)
    >>> knobs = np.array([[4, 4, 2, 1, 2, 2, 1], [2, 2, 2, 1, 2, 2, 1]])
    >>> f = analytic_features(layer, "v100", "direct", knobs)
    >>> f.shape == (2, len(FEATURE_NAMES))
    True
    >>> [f[:, FEATURE_NAMES.index(c)].tolist() for c in ("io_words", "blocks", "threads")]
    [[86.0, 168.0], [1.0, 4.0], [4.0, 4.0]]
    """
    check_layer(layer)
    device = _device(device)
    if device is None:
        raise InvalidInputError("analytic features need a device (a Device or a preset name)")
    fam = kernel_family(algorithm)
    algorithm = fam.name  # an Algorithm object or a config names its family too
    knobs = knob_matrix(knobs, fam.config_type.params)
    out = np.empty((len(knobs), len(FEATURE_NAMES)), dtype=float)
    if len(knobs) == 0:
        return out
    tiles, inverse = np.unique(knobs[:, :4], axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    per_tile = _per_tile(layer, algorithm, fam.algorithm.tile_params, tiles)
    io, fl, shared, regw = per_tile[:, inverse]
    onchip, bound = _onchip_and_bound(layer, algorithm, fam.config_type, knobs)
    threads = knobs[:, 4:].prod(axis=1).astype(float)
    ilp = np.ceil(regw / threads)
    regs = compiled_registers(ilp, register_kind(layer, algorithm), device, threads,
                              fam.transform_tile(layer, knobs)).astype(float)
    warp = device.warp_size
    warps = np.ceil(threads / warp)
    bps = resident_blocks_per_sm(device, threads, shared, regs)
    blocks = _grid_blocks(layer, fam, knobs)
    compulsory = layer.input_size + layer.weight_size + layer.output_size
    with np.errstate(divide="ignore"):  # a bound of 0 (every output in the padding): inf
        over_bound = io / bound
    cols = {
        "io_words": io, "io_over_compulsory": io / compulsory,
        "io_over_bound": over_bound, "footprint_words": onchip,
        "shared_bytes": shared, "threads": threads, "regs_per_thread": regs, "ilp": ilp,
        "blocks": blocks, "blocks_per_sm": bps,
        "occupancy": bps * warps / (device.max_threads_per_sm / warp),
        "waves": blocks / (device.sm_count * np.maximum(bps, 1.0)),
        "flops": fl, "intensity": fl / (io * WORD_BYTES),
    }
    for c, name in enumerate(FEATURE_NAMES):
        out[:, c] = cols[name]
    return out

