"""Labels from a measurer: the best configuration of each candidate over its pruned space.

For the ``model`` measurer (an analytic estimate, ``estimate=True``) evaluating every
configuration of the Table 1 pruned space is cheap (vectorised: millions of configs in
a minute), and its minimum is exactly what an ideal tuner with that measurer would
find: the *oracle* of the space. That is how labels are made here, with no tuner in
the loop. Measurers that take real time per configuration (``cuda``, ``emulate``)
need a tuner and a history database instead, so they are refused with the reason.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
>>> recs = label_layer(layer, "v100")
>>> [(r.algorithm, r.e, r.estimate) for r in recs][:2]
[('direct', None, True), ('winograd', 2, True)]
>>> all(r.time_ms > 0 for r in recs)
True
"""

from __future__ import annotations

import logging
from typing import Callable, Iterable

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer, check_layer

from .dataset import (Candidate, LabelRecord, candidates, check_candidate, check_device,
                      shape_key)

__all__ = ["ORACLE_MEASURES", "candidate_space", "oracle_record", "label_layer", "label_layers",
           "check_progress"]

log = logging.getLogger(__name__)

#: Measurers whose whole pruned space is cheap enough to evaluate.
ORACLE_MEASURES = ("model",)
_CHUNK = 8192  # configurations the model times in one vectorised call


def _check_measure(measure: str) -> None:
    from ..option_checks import check_type
    check_type("measure", measure, str)
    if measure not in ORACLE_MEASURES:
        raise InvalidInputError(
            f"labels from measurer {measure!r} need a tuner and a history database; "
            f"evaluating a whole space works with: {', '.join(ORACLE_MEASURES)}")


def _device_name(device) -> str:
    return check_device(device).name


def candidate_space(layer: ConvLayer, device, candidate: Candidate):
    """``candidate``'s Table 1 pruned space of ``layer`` on ``device`` (a
    :class:`~search.conv_space.ConvSpace`); ValueError, naming why, when it is empty.
    Each argument is checked first (InvalidInputError naming it).

    >>> candidate_space(ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3),
    ...                 "v100", "direct")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: candidate must be a Candidate (...), got str 'direct'
    """
    from search.conv_space import ConvSpace
    check_layer(layer)
    device = check_device(device)
    candidate = check_candidate(candidate)
    es = None if candidate.e is None else (candidate.e,)
    return ConvSpace(layer, device, candidate.algorithm, winograd_e=es)


def oracle_record(layer: ConvLayer, device, candidate: Candidate,
                  measure: str = "model") -> LabelRecord:
    """The fastest configuration of ``candidate``'s pruned space under ``measure``.

    ``time_ms`` is None when the space is empty or no configuration is ``ok``.

    >>> from search.selection.dataset import DIRECT
    >>> pw = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1)
    >>> rec = oracle_record(pw, "v100", DIRECT)
    >>> rec.device, rec.time_ms > 0, rec.estimate, rec.source.endswith("1455 pruned configurations")
    ('V100-SXM2', True, True, True)
    """
    from search.measure import make_measurer

    check_layer(layer)
    device = check_device(device)  # the arguments before the try: only emptiness is caught
    candidate = check_candidate(candidate)
    _check_measure(measure)
    name = device.name
    try:
        space = candidate_space(layer, device, candidate)
    except ValueError as exc:
        log.info("%s %s: %s", layer.name, candidate.label, exc)
        return LabelRecord(layer, name, candidate.algorithm, candidate.e, {}, None, True,
                           f"no configuration: {exc}")
    measurer = make_measurer(measure, layer, device, candidate.algorithm)
    best = _fastest_ok(measurer, space)
    source = f"{measurer.toolchain()}; oracle over {len(space)} pruned configurations"
    if best is None:
        return LabelRecord(layer, name, candidate.algorithm, candidate.e, {}, None,
                           measurer.estimate, source)
    return LabelRecord(layer, name, candidate.algorithm, candidate.e, dict(best.config),
                       best.time_ms, best.estimate, source)


def _fastest_ok(measurer, space):
    """The measurer's ok record of least time over ``space`` (the first in space order
    among equal times), or None when no configuration is ok.

    The model's times of the whole space come from one vectorised call per chunk
    (``kernels.perf_model.estimate_configs``, what the measurer computes per config);
    the measurer then confirms them fastest first until one is ok: a few records instead
    of one per configuration (millions for a large layer: minutes, now seconds).
    """
    import numpy as np

    from kernels.perf_model import estimate_configs
    from search.records import as_measured

    times = np.empty(len(space))
    for start in range(0, len(space), _CHUNK):
        stop = min(start + _CHUNK, len(space))
        est = estimate_configs(measurer.layer, measurer.device, measurer.algorithm,
                               space.knobs(range(start, stop)))
        times[start:stop] = np.where(est["blocks_per_sm"] >= 1, est["time_ms"], np.inf)
    order = np.argsort(times, kind="stable")  # ties in space order, as a scan keeps the first
    for start in range(0, len(order), 64):
        idx = [int(i) for i in order[start:start + 64] if np.isfinite(times[i])]
        configs = [dict(zip(space.params, map(int, row))) for row in space.knobs(idx)]
        for rec in map(as_measured, measurer.measure(configs)):
            if rec.is_ok and rec.time_ms is not None:
                return rec
        if len(idx) < len(order[start:start + 64]):  # past the last that fits: none is ok
            return None
    return None


def label_layer(layer: ConvLayer, device, measure: str = "model") -> list[LabelRecord]:
    """One :func:`oracle_record` per candidate of ``layer``, in class order.

    >>> pw = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1)
    >>> [r.candidate.label for r in label_layer(pw, "v100")]  # a 1 x 1 layer: direct only
    ['direct']
    """
    check_layer(layer)
    return [oracle_record(layer, device, c, measure) for c in candidates(layer)]


def check_progress(progress) -> Callable[[int, ConvLayer], None] | None:
    """``progress`` when it is None or callable as ``progress(i, layer)``; else
    InvalidInputError naming it (the check of :func:`label_layers` and
    :func:`~search.selection.select.select_layers`).

    >>> check_progress(None) is None, check_progress(print) is print
    (True, True)
    """
    from ..option_checks import check_callable
    return None if progress is None else check_callable("progress", progress, "i, layer")


def label_layers(layers: Iterable[ConvLayer], device, measure: str = "model",
                 progress: Callable[[int, ConvLayer], None] | None = None) -> list[LabelRecord]:
    """:func:`label_layer` for each layer; layers of equal shape are labelled once
    (their records are copied with the later layer's name). Every argument is checked
    before the first layer is labelled (``progress`` as :func:`~search.selection.select.
    select_layers` checks it), never a TypeError mid-run.

    >>> label_layers([], "v100", progress=5)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: progress must be callable, got 5
    """
    from ..option_checks import check_records
    layers = check_records("layers", layers, ConvLayer)
    device = check_device(device)
    _check_measure(measure)
    check_progress(progress)
    done: dict[str, list[LabelRecord]] = {}
    out: list[LabelRecord] = []
    for i, layer in enumerate(layers):
        if progress is not None:
            progress(i, layer)
        key = shape_key(layer)
        if key not in done:
            done[key] = label_layer(layer, device, measure)
        out += [LabelRecord(layer, r.device, r.algorithm, r.e, r.config, r.time_ms, r.estimate,
                            r.source) for r in done[key]]
    return out
