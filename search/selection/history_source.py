"""Label records from the tuning history database (:class:`search.history.History`).

Every stored key whose layer is a layer's canonical JSON (``iobound tune --history``
writes ``json.dumps(layer.to_dict(), sort_keys=True)``; replayed Kernel Tuner spaces,
``replay:...``, are no layers and are skipped) gives one
:class:`~search.selection.dataset.LabelRecord` per candidate found among its ``ok``
records (every stored time, not only each configuration's latest) whose configuration is
one of the layer's (a damaged row is skipped): the fastest one (the
fastest measured and the fastest estimate each, where the key holds both), its
algorithm read off the configuration (a Winograd config has ``e``). These are *tuned* results (the best a tuner measured), not the
oracle of the space; ``estimate`` is the record's own flag. Estimates of the analytic
model of another version than the current one are stale and left out
(:func:`search.measure.model.stale_model_toolchain`): compared with the current model's,
an older model's Winograd times (flops not as executed) would win on no evidence.

Examples
--------
>>> import json
>>> from iobound.layer import ConvLayer
>>> from search.history import History, HistoryKey
>>> from search.measure.base import MeasureRecord
>>> layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
>>> h = History(":memory:")
>>> key = HistoryKey(json.dumps(layer.to_dict(), sort_keys=True), "V100-SXM2", "model v2")
>>> h.add(key, [MeasureRecord.ok({"x": 6, "y": 6, "z": 4, "alpha": 1, "tx": 6, "ty": 6, "tz": 1},
...                              time_ms=2.0, estimate=True),
...             MeasureRecord.ok({"e": 2, "x": 6, "y": 6, "z": 4, "tx": 3, "ty": 3, "tz": 1},
...                              time_ms=1.5, estimate=True)])
2
>>> [(r.algorithm, r.e, r.time_ms) for r in records_from_history(h)]
[('direct', None, 2.0), ('winograd', 2, 1.5)]
"""

from __future__ import annotations

import json
from typing import Iterator

from iobound.layer import ConvLayer

from .dataset import CLASSES, Candidate, LabelRecord

__all__ = ["records_from_history"]


def _layer(text: str) -> ConvLayer | None:
    from search.db.conv_template import stored_layer
    try:
        return stored_layer(json.loads(text))
    except ValueError:  # not JSON: a replayed space's key
        return None


def _stored(history, key) -> list:
    """Every ``ok`` timed record stored under ``key`` (each measurement of a configuration
    measured more than once, not its latest only: the best *stored* time, as
    ``kernel --from-history`` takes it too), fastest first."""
    from search.db.layer_keys import layer_key_workload
    db = history.db
    named = [w for w in db.workloads() if layer_key_workload(key.layer, w.params) == w]
    ms = [m for w in named
          for m in db.measurements(w, device=key.device, toolchain=key.toolchain,
                                   counted_only=True)]
    return [m.record for m in sorted(ms, key=lambda m: m.time_ms)]


def _readable(layer: ConvLayer, cand: Candidate, config: dict) -> bool:
    """Whether ``config`` is a configuration of ``cand`` whose I/O the selection can count
    for ``layer`` (what :func:`search.selection.select.chosen_io` reads): a damaged or
    foreign row is skipped, as an ``e`` outside the candidates is, not the layer's selection."""
    from kernels.config import check_config, config_from_dict, onchip_words
    from kernels.grouping import kernel_io
    try:
        kc = config_from_dict(dict(config), cand.algorithm)
        if check_config(layer, kc):  # threads that do not split the tile: no kernel's I/O
            return False
        kernel_io(layer, kc, kc.tiling)
        onchip_words(layer, kc)
    except (ValueError, TypeError):
        return False
    return True


def records_from_history(history, device: str | None = None) -> Iterator[LabelRecord]:
    """The fastest ok record per (layer, device, toolchain, candidate) of ``history``
    (only ``device``'s when given, labelled with its preset's name when it names one,
    :func:`~iobound.devices.canonical_device_name`, as the selection names the device: an
    alias such as ``v100`` selects from these records); see the module doc.

    >>> from search.history import History, HistoryKey
    >>> from search.measure.base import MeasureRecord
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1)
    >>> h = History(":memory:")
    >>> h.add(HistoryKey(json.dumps(layer.to_dict(), sort_keys=True), "v100", "nvcc 12"),
    ...       [MeasureRecord.ok({"x": 1, "y": 3, "z": 2, "alpha": 4, "tx": 1, "ty": 1, "tz": 1},
    ...                         time_ms=0.5)])
    1
    >>> [(r.device, r.time_ms, r.estimate) for r in records_from_history(h, device="v100")]
    [('V100-SXM2', 0.5, False)]
    >>> list(records_from_history(h, device="a100"))
    []
    """
    from iobound.devices import canonical_device_name
    from search.db.device_names import same_device
    from search.measure.model import stale_model_toolchain
    label = None if device is None else canonical_device_name(device)
    for key in history.keys():
        if device is not None and not same_device(device, key.device):
            continue  # a file's own name of the preset (history import keeps it) is the device
        if stale_model_toolchain(key.toolchain):
            continue
        layer = _layer(key.layer)
        if layer is None:
            continue
        # the fastest measured and the fastest estimate apart: one toolchain may hold both
        # (a cache's entries carry their own flag), and a measurement is preferred to an
        # estimate (select), not outrun by it here
        best: dict[tuple[Candidate, bool], object] = {}
        for rec in _stored(history, key):  # fastest first
            if not rec.is_ok or rec.time_ms is None:
                continue
            e = rec.config.get("e")
            try:
                cand = Candidate("winograd", int(e)) if e is not None else Candidate("direct")
            except ValueError:          # an e outside the candidates' 2..4
                continue
            if (cand, bool(rec.estimate)) in best or not _readable(layer, cand, rec.config):
                continue  # a config that is no kernel of the layer is no candidate's time
            best[(cand, bool(rec.estimate))] = rec
        for cand in CLASSES:
            for est in (False, True):
                rec = best.get((cand, est))
                if rec is not None:
                    yield LabelRecord(layer, label or key.device, cand.algorithm, cand.e,
                                      dict(rec.config), rec.time_ms, rec.estimate,
                                      f"history {history.path}: {key.toolchain}")
