"""Labels from a measurer: the best configuration of each candidate over its pruned space.

For the ``model`` measurer (an analytic estimate, ``estimate=True``) evaluating every
configuration of the Table 1 pruned space is cheap (tens of thousands of configs in
seconds), and its minimum is exactly what an ideal tuner with that measurer would
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
from iobound.layer import ConvLayer

from .dataset import Candidate, LabelRecord, shape_key, candidates

__all__ = ["ORACLE_MEASURES", "candidate_space", "oracle_record", "label_layer", "label_layers"]

log = logging.getLogger(__name__)

#: Measurers whose whole pruned space is cheap enough to evaluate.
ORACLE_MEASURES = ("model",)
_CHUNK = 8192


def _check_measure(measure: str) -> None:
    if measure not in ORACLE_MEASURES:
        raise InvalidInputError(
            f"labels from measurer {measure!r} need a tuner and a history database; "
            f"evaluating a whole space works with: {', '.join(ORACLE_MEASURES)}")


def _device_name(device) -> str:
    if isinstance(device, str):
        from iobound.devices import get_device
        device = get_device(device)
    return device.name


def candidate_space(layer: ConvLayer, device, candidate: Candidate):
    """``candidate``'s Table 1 pruned space of ``layer`` on ``device`` (a
    :class:`~search.conv_space.ConvSpace`); ValueError, naming why, when it is empty."""
    from search.conv_space import ConvSpace
    es = None if candidate.e is None else (candidate.e,)
    return ConvSpace(layer, device, candidate.algorithm, winograd_e=es)


def oracle_record(layer: ConvLayer, device, candidate: Candidate,
                  measure: str = "model") -> LabelRecord:
    """The fastest configuration of ``candidate``'s pruned space under ``measure``.

    ``time_ms`` is None when the space is empty or no configuration is ``ok``.
    """
    from search.measure import make_measurer
    from search.records import as_measured

    _check_measure(measure)
    name = _device_name(device)
    try:
        space = candidate_space(layer, device, candidate)
    except ValueError as exc:
        log.info("%s %s: %s", layer.name, candidate.label, exc)
        return LabelRecord(layer, name, candidate.algorithm, candidate.e, {}, None, True,
                           f"no configuration: {exc}")
    measurer = make_measurer(measure, layer, device, candidate.algorithm)
    best, params = None, space.params
    for start in range(0, len(space), _CHUNK):
        rows = space.knobs(range(start, min(start + _CHUNK, len(space))))
        configs = [dict(zip(params, map(int, row))) for row in rows]
        for rec in map(as_measured, measurer.measure(configs)):
            if rec.is_ok and rec.time_ms is not None and (best is None
                                                           or rec.time_ms < best.time_ms):
                best = rec
    source = f"{measurer.toolchain()}; oracle over {len(space)} pruned configurations"
    if best is None:
        return LabelRecord(layer, name, candidate.algorithm, candidate.e, {}, None,
                           measurer.estimate, source)
    return LabelRecord(layer, name, candidate.algorithm, candidate.e, dict(best.config),
                       best.time_ms, best.estimate, source)


def label_layer(layer: ConvLayer, device, measure: str = "model") -> list[LabelRecord]:
    """One :func:`oracle_record` per candidate of ``layer``, in class order."""
    return [oracle_record(layer, device, c, measure) for c in candidates(layer)]


def label_layers(layers: Iterable[ConvLayer], device, measure: str = "model",
                 progress: Callable[[int, ConvLayer], None] | None = None) -> list[LabelRecord]:
    """:func:`label_layer` for each layer; layers of equal shape are labelled once
    (their records are copied with the later layer's name)."""
    _check_measure(measure)
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
