"""Features of our conv template that mean the same on every layer, so layers learn from layers.

A kernel configuration's raw knobs (``x = 14``) and absolute analytic features
(``io_words``, ``blocks``) mean different things on different layers: ``x = 14``
covers a whole 14-wide output but a quarter of a 56-wide one. A model trained on
one layer's measurements and asked about another's configurations needs columns
that keep their meaning across layers (and devices). :func:`cross_layer_features`
gives them, each computed on the configuration's *own* layer and device:

- I/O against the theory: ``io_over_bound`` (traffic over the best lower bound at
  the block's on-chip memory), ``io_over_compulsory``, ``intensity``;
- occupancy and parallelism: ``occupancy``, ``blocks_per_sm``, ``threads``,
  ``regs_per_thread``, ``ilp``, ``log2_waves`` and ``wave_fill`` (the last wave's
  share of a full one: the tail effect), ``shared_frac`` and ``footprint_frac``
  (a block's shared memory and on-chip words over the SM's);
- the tile shape relative to the layer: ``x_rel``, ``y_rel``, ``z_rel`` (tile over
  the output width, height, channels), ``x_fill``, ``y_fill``, ``z_fill`` (the share
  of the tiles' cover that is real output: padding waste), ``depth_rel`` (the
  direct kernel's channel chunk ``alpha`` over the input channels; Winograd's
  ``e``), and the outputs each thread computes along each axis (``x_per_thread``...).

:func:`measurement_layer` recovers a history record's layer, device and algorithm
from what the tuning database stores (the workload's problem is the layer's dict,
the device a preset name), so every record of our template gets its row.

Examples
--------
>>> import numpy as np
>>> from iobound.layer import ConvLayer
>>> from iobound.devices import get_device
>>> small = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
>>> big = ConvLayer(n=1, c_in=32, h_in=32, w_in=32, c_out=32, k_h=3, k_w=3, padding=1)
>>> v100 = get_device("v100")
>>> f = {n: cross_layer_features(layer, v100, "direct", np.array([[8, 8, 8, 4, 8, 8, 1]]))[0]
...      for n, layer in (("small", small), ("big", big))}
>>> col = CROSS_LAYER_FEATURES.index("x_rel")
>>> float(f["small"][col]), float(f["big"][col])
(1.0, 0.25)
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["CROSS_LAYER_FEATURES", "cross_layer_features", "measurement_layer"]

CROSS_LAYER_FEATURES = (
    "io_over_bound", "io_over_compulsory", "intensity", "occupancy", "blocks_per_sm",
    "threads", "regs_per_thread", "ilp", "log2_waves", "wave_fill", "shared_frac",
    "footprint_frac", "x_rel", "y_rel", "z_rel", "x_fill", "y_fill", "z_fill", "depth_rel",
    "x_per_thread", "y_per_thread", "z_per_thread",
)

#: The analytic features (:mod:`kernels.analytic`) taken as they are.
_KEPT = ("io_over_bound", "io_over_compulsory", "intensity", "occupancy", "blocks_per_sm",
         "threads", "regs_per_thread", "ilp")


def cross_layer_features(layer, device, algorithm: str, knobs: np.ndarray) -> np.ndarray:
    """The :data:`CROSS_LAYER_FEATURES` of each knob row (``ConvSpace.params`` order).

    >>> from iobound.layer import ConvLayer
    >>> from iobound.devices import get_device
    >>> layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
    >>> knobs = np.array([[8, 8, 8, 4, 8, 8, 1], [4, 4, 8, 4, 4, 4, 1]])
    >>> cross_layer_features(layer, get_device("v100"), "direct", knobs).shape  # a row each
    (2, 22)
    """
    from kernels.analytic import FEATURE_NAMES, analytic_features
    from iobound.units import WORD_BYTES
    from kernels.families import kernel_family

    knobs = np.asarray(knobs, dtype=np.int64).reshape(-1, 7)
    a = analytic_features(layer, device, algorithm, knobs)
    col = {n: a[:, FEATURE_NAMES.index(n)] for n in FEATURE_NAMES}
    fam = kernel_family(algorithm)
    xc, yc, zc = fam.tile_columns()
    x, y, z = (knobs[:, c].astype(float) for c in (xc, yc, zc))
    depth = knobs[:, 0] if "e" in fam.algorithm.tile_params else knobs[:, 3] / layer.c_in
    threads = knobs[:, 4:].astype(float)
    e = knobs[:, 0].astype(float) if "e" in fam.algorithm.tile_params else np.ones(len(knobs))
    waves = np.maximum(col["waves"], 1e-9)
    out = {n: col[n] for n in _KEPT}
    out.update({
        "log2_waves": np.log2(waves), "wave_fill": waves / np.ceil(waves),
        "shared_frac": col["shared_bytes"] / device.shared_mem_per_sm_bytes,
        "footprint_frac": col["footprint_words"] / (device.shared_mem_per_sm_bytes / WORD_BYTES
                                                     + device.registers_per_sm),
        "x_rel": x / layer.w_out, "y_rel": y / layer.h_out, "z_rel": z / layer.c_out,
        "x_fill": layer.w_out / (np.ceil(layer.w_out / x) * x),
        "y_fill": layer.h_out / (np.ceil(layer.h_out / y) * y),
        "z_fill": layer.c_out / (np.ceil(layer.c_out / z) * z),
        "depth_rel": depth.astype(float),
        "x_per_thread": x / (e * threads[:, 0]), "y_per_thread": y / (e * threads[:, 1]),
        "z_per_thread": z / threads[:, 2],
    })
    return np.column_stack([out[n] for n in CROSS_LAYER_FEATURES])


def measurement_layer(problem: Any, device: str, params) -> tuple | None:
    """(layer, device preset, algorithm) of a record of our conv template, or None when
    its problem is not a layer or its device not a preset (no row can be computed).

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
    >>> got, dev, algorithm = measurement_layer(layer.to_dict(), "v100", ("e", "x", "y"))
    >>> got == layer, dev.name, algorithm
    (True, 'V100-SXM2', 'winograd')
    >>> measurement_layer(layer.to_dict(), "my gpu", ("x",)), measurement_layer([8], "v100", ("x",))
    (None, None)
    """
    from iobound.devices import get_device
    from iobound.errors import IoboundError

    from ..db.conv_template import conv_algorithm, stored_layer
    layer = stored_layer(problem)
    if layer is None:
        return None
    try:
        dev = get_device(device)
    except (IoboundError, ValueError, KeyError, TypeError):
        return None
    return layer, dev, conv_algorithm(params)
