"""Features of a (layer, device) pair for the algorithm selectors.

Raw, readable quantities (a tree is invariant to monotone transforms, and its
printed rules then read as ``c_in <= 96``): the layer's shape, its work and data
sizes, and the device preset's SM count, bandwidth, peak and machine balance, so
that one model can be trained across devices. ``tile_waste_e<e>`` is the output area
that Winograd F(e) tiles cover over the real output area (``ceil(h/e) e ceil(w/e) e /
(h w)``): 13 x 13 outputs in 4 x 4 tiles compute 16 x 16, a waste of 1.51.

Examples
--------
>>> from iobound.networks import get_layer
>>> row = dict(zip(FEATURE_NAMES, layer_features(get_layer("vgg16.conv3_1"), "v100")))
>>> float(row["c_in"]), float(row["sm_count"]), round(float(row["tile_waste_e3"]), 3)
(128.0, 80.0, 1.036)
>>> feature_matrix([(get_layer("vgg16.conv3_1"), "v100")]).shape == (1, len(FEATURE_NAMES))
True
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer, check_layer

from .dataset import WINOGRAD_ES, check_device

__all__ = ["FEATURE_NAMES", "layer_features", "feature_matrix"]

FEATURE_NAMES = (
    "c_in", "c_out", "h_out", "w_out", "k", "padding", "macs", "input_size", "weight_size",
    "output_size", "macs_per_word", "outputs_per_sm", "sm_count", "dram_gbs", "peak_gflops",
    "flop_per_byte", *(f"tile_waste_e{e}" for e in WINOGRAD_ES),
)


def layer_features(layer: ConvLayer, device) -> np.ndarray:
    """The :data:`FEATURE_NAMES` values of ``layer`` on ``device`` (a preset or its name);
    InvalidInputError naming an argument of another kind.

    >>> layer_features("vgg16.conv3_1", "v100")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: layer must be a ConvLayer, got ...
    """
    check_layer(layer)
    dev = check_device(device)
    words = layer.input_size + layer.weight_size + layer.output_size
    vals = {
        "c_in": layer.c_in, "c_out": layer.c_out, "h_out": layer.h_out, "w_out": layer.w_out,
        "k": layer.k_h, "padding": layer.padding[0], "macs": layer.macs,
        "input_size": layer.input_size, "weight_size": layer.weight_size,
        "output_size": layer.output_size, "macs_per_word": layer.macs / words,
        "outputs_per_sm": layer.output_size / dev.sm_count, "sm_count": dev.sm_count,
        "dram_gbs": dev.dram_bandwidth_gbs, "peak_gflops": dev.fp32_peak_gflops,
        "flop_per_byte": dev.machine_balance_flop_per_byte,
    }
    for e in WINOGRAD_ES:
        covered = math.prod(layer.winograd_tiles(e)) * e * e
        vals[f"tile_waste_e{e}"] = covered / (layer.h_out * layer.w_out)
    return np.array([float(vals[n]) for n in FEATURE_NAMES])


def feature_matrix(pairs: Iterable[tuple[ConvLayer, object]]) -> np.ndarray:
    """One :func:`layer_features` row per ``(layer, device)`` pair.

    >>> from iobound.networks import get_layer
    >>> layer = get_layer("alexnet.conv3")
    >>> m = feature_matrix([(layer, "v100"), (layer, "a100")])
    >>> m[:, FEATURE_NAMES.index("sm_count")].tolist(), feature_matrix([]).shape
    ([80.0, 108.0], (0, 19))
    """
    from ..option_checks import shown
    if isinstance(pairs, (str, bytes)) or not hasattr(pairs, "__iter__"):
        raise InvalidInputError(f"pairs must be a list of (layer, device), got {shown(pairs)}")
    rows = []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise InvalidInputError(f"pairs[{i}] must be a (layer, device) pair, "
                                    f"got {shown(pair)}")
        rows.append(layer_features(*pair))
    return np.array(rows).reshape(len(rows), len(FEATURE_NAMES))
