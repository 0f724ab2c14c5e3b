"""A configuration to measure first for a layer, from the best configurations of similar layers.

For a new layer and a candidate (the one a selector chose), the training examples
whose best configuration of that candidate is known are ranked by their distance to
the layer in ``log2`` of ``(c_in, c_out, h_out, w_out, k)``; the first whose
configuration is a member of the new layer's pruned space
(:class:`~search.conv_space.ConvSpace`) is the answer (None when none fits). A tuner can
start from it instead of a random point.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> from search.selection.dataset import DIRECT, Example
>>> cfg = {"x": 6, "y": 6, "z": 4, "alpha": 1, "tx": 6, "ty": 6, "tz": 1}
>>> seen = Example(ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1),
...                "V100-SXM2", {DIRECT: 1.0}, {DIRECT: cfg})
>>> new = ConvLayer(n=1, c_in=3, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
>>> nearest_config(new, "v100", DIRECT, [seen]) == cfg
True
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer, check_layer

from .dataset import Candidate, Example, check_candidate, check_device

__all__ = ["nearest_config", "first_config_quality"]


def _shape(layer: ConvLayer) -> np.ndarray:
    return np.log2([layer.c_in, layer.c_out, layer.h_out, layer.w_out, layer.k_h])


def nearest_config(layer: ConvLayer, device, candidate: Candidate,
                   examples: Sequence[Example]) -> dict | None:
    """The configuration of the nearest example that is valid for ``layer`` (see the module doc).

    Every argument is checked first (a device that is none is an error, not "no
    configuration"); None only when no example's configuration fits.

    >>> nearest_config(ConvLayer(n=1, c_in=1, h_in=4, w_in=4, c_out=1, k_h=1, k_w=1), None,
    ...                Candidate("direct"), [])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: device must be a iobound.device_spec.Device or ..., got None
    """
    from search.conv_space import ConvSpace

    check_layer(layer)
    device = check_device(device)
    candidate = check_candidate(candidate)
    if not isinstance(examples, (list, tuple)) \
            or not all(isinstance(ex, Example) for ex in examples):
        raise InvalidInputError(f"examples must be a list of Example, got {examples!r:.60}")
    known = [ex for ex in examples
             if ex.times.get(candidate) is not None and ex.configs.get(candidate)]
    if not known:
        return None
    es = None if candidate.e is None else (candidate.e,)
    try:  # every argument is checked above: an error here is the candidate's empty space
        space = ConvSpace(layer, device, candidate.algorithm, winograd_e=es)
    except ValueError:
        return None
    target = _shape(layer)
    dist = [float(np.linalg.norm(_shape(ex.layer) - target)) for ex in known]
    for k in np.argsort(dist, kind="stable"):
        cfg = known[int(k)].configs[candidate]
        if space.is_valid(cfg):
            return dict(cfg)
    return None


def first_config_quality(example: Example, candidate: Candidate,
                         examples: Sequence[Example]) -> float:
    """``t_best / t_first`` of ``candidate`` on ``example`` under the model measurer
    (0 when no configuration was found or it does not run).

    >>> first_config_quality(None, Candidate("direct"), [])
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: example must be a search.selection.dataset.Example, got None
    """
    from search.measure import make_measurer

    from ..option_checks import check_type
    check_type("example", example, Example)
    cfg = nearest_config(example.layer, example.device, candidate, examples)
    best = example.times.get(candidate)
    if cfg is None or best is None:
        return 0.0
    rec, = make_measurer("model", example.layer, example.device,
                         candidate.algorithm).measure([cfg])
    return best / rec.time_ms if rec.is_ok and rec.time_ms and not math.isnan(rec.time_ms) else 0.0
