"""One layer's algorithm selection with its evidence.

:func:`selection_from_example` turns an :class:`~search.selection.dataset.Example`
(the best known configuration and time of each candidate, from any source of
:class:`~search.selection.dataset.LabelRecord`) into a :class:`LayerSelection`: the
fastest candidate, its configuration and time, every candidate's time, and for the
chosen configuration its exact dataflow I/O (``dataflow.direct.direct_io`` or
``dataflow.winograd.winograd_io``) and the best valid lower bound
(``iobound.report.bound_report``) at S = the on-chip words one block of that kernel holds
(``kernels.config.onchip_words``, ``fast_memory_words``) + 2: blocks share nothing on
chip, so the single-processor bound holds at a block's words + 2
(``iobound.multi_block.bound_fast_memory``; ``lower_bound_fast_memory_words``).
``io_floor_ms`` is the time to move the bound's traffic at the device's DRAM bandwidth (the
bound counts every global load and store, an L2 hit included, so this is a floor for a
kernel whose global accesses all reach DRAM; a floor on DRAM traffic alone behind the L2
takes the bound at the L2 plus every resident block's words, ``bound_fast_memory``),
``compute_floor_ms`` the time of the algorithm's multiplications at the FP32 peak (direct:
``2 MACs``; Winograd F(e): ``2 n c_out c_in tiles (e+r-1)^2``, the element-wise products
alone, transforms not counted; both count the products of padding taps and of whole
tiles at the edges, as the toolkit's kernels compute them, so the floor is one for those
kernels, not for a kernel that skips zeros), and ``time_floor_ms`` the larger of the two (a
roofline floor of a kernel of that algorithm computing every tap with that on-chip memory;
the model's estimates never beat it, a measured kernel whose loads hit in the L2 may).

:func:`select_layers` labels layers with a measurer first (:mod:`search.selection.labels`),
except those covered by label records at hand (the tuning history database).

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1, name="t")
>>> sel, = select_layers([layer], "v100")
>>> sel.estimate, sel.predicted, len(sel.candidates), sel.io_words >= sel.lower_bound
(True, False, 4, True)
>>> sel.time_floor_ms == max(sel.io_floor_ms, sel.compute_floor_ms), sel.time_gap > 1
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer, check_layer
from iobound.units import WORD_BYTES  # the kernels' word (fp32): one place

from .dataset import (CLASSES, Candidate, Example, candidates, check_candidate,
                      examples_from_records, shape_key)

__all__ = ["CandidateEvidence", "LayerSelection", "chosen_io", "min_flops",
           "selection_from_example", "select_layers"]


@dataclass(frozen=True)
class CandidateEvidence:
    """One candidate's best known time (None: no configuration runs) and configuration.

    >>> CandidateEvidence(Candidate("winograd", 2), 1.5, {"x": 4}).to_dict()
    {'algorithm': 'winograd', 'e': 2, 'time_ms': 1.5, 'config': {'x': 4}}
    """

    candidate: Candidate
    time_ms: float | None
    config: dict

    def to_dict(self) -> dict:
        return {"algorithm": self.candidate.algorithm, "e": self.candidate.e,
                "time_ms": self.time_ms, "config": dict(self.config)}


@dataclass(frozen=True)
class LayerSelection:
    """The selection for one layer on one device (see the module doc).

    >>> from iobound.layer import ConvLayer
    >>> pw = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1, name="pw")
    >>> cfg = {"x": 1, "y": 3, "z": 2, "alpha": 4, "tx": 1, "ty": 1, "tz": 1}
    >>> sel = selection_from_example(Example(pw, "v100", {CLASSES[0]: 0.5}, {CLASSES[0]: cfg}))
    >>> sel.choice.label, round(sel.io_gap, 3), sel.lower_bound_fast_memory_words
    ('direct', 2.053, 28)
    >>> d = sel.to_dict(); d["layer"], d["time_ms"], d["unavailable"]
    ('pw', 0.5, [])
    """

    layer: ConvLayer
    device: str
    choice: Candidate
    config: dict
    time_ms: float
    estimate: bool
    predicted: bool
    candidates: tuple[CandidateEvidence, ...]
    io_words: int
    lower_bound: float
    bound_method: str
    fast_memory_words: int
    io_floor_ms: float
    compute_floor_ms: float
    source: str = ""
    #: the layer's candidates its evidence has no record of (a history that tuned only
    #: some of them): not evaluated, not "no candidate"
    untuned: tuple[str, ...] = ()

    @property
    def lower_bound_fast_memory_words(self) -> int:
        """The S the lower bound is taken at: a block's on-chip words + 2 (:func:`chosen_io`)."""
        from iobound.multi_block import bound_fast_memory
        return bound_fast_memory(self.fast_memory_words)

    @property
    def time_floor_ms(self) -> float:
        """The roofline floor: the larger of the I/O and the compute floor."""
        return max(self.io_floor_ms, self.compute_floor_ms)

    @property
    def io_gap(self) -> float | None:
        """Achieved I/O over the lower bound (>= 1); None for a bound of 0 (every output in
        the padding: no word must move), as ``tune``'s ``ratio_to_bound``."""
        return self.io_words / self.lower_bound if self.lower_bound > 0 else None

    @property
    def time_gap(self) -> float:
        """Time over the roofline floor (>= 1 for the model's estimates; a measured kernel
        whose global loads hit in the L2 may go below, see the module doc)."""
        return self.time_ms / self.time_floor_ms

    def to_dict(self) -> dict:
        """The ``iobound select --json`` entry of this layer."""
        return {
            "layer": self.layer.name or self.layer.short(), "shape": self.layer.short(),
            "device": self.device, "source": self.source,
            "algorithm": self.choice.algorithm, "e": self.choice.e,
            "config": dict(self.config), "time_ms": self.time_ms, "estimate": self.estimate,
            "predicted": self.predicted,
            "candidates": [c.to_dict() for c in self.candidates if c.time_ms is not None],
            "unavailable": [c.candidate.label for c in self.candidates if c.time_ms is None],
            "untuned": list(self.untuned),
            "io_words": self.io_words, "lower_bound": self.lower_bound,
            "bound_method": self.bound_method, "fast_memory_words": self.fast_memory_words,
            "lower_bound_fast_memory_words": self.lower_bound_fast_memory_words,
            "io_gap": self.io_gap, "io_floor_ms": self.io_floor_ms,
            "compute_floor_ms": self.compute_floor_ms, "time_floor_ms": self.time_floor_ms,
            "time_gap": self.time_gap,
        }


def chosen_io(layer: ConvLayer, candidate: Candidate, config: dict) -> tuple[int, float, str, int]:
    """(exact dataflow I/O, best lower bound, its method, S) of one kernel configuration:
    S is a block's on-chip words; the bound is taken at S + 2 (see the module doc).

    >>> from iobound.layer import ConvLayer
    >>> pw = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1)
    >>> chosen_io(pw, Candidate("direct"),
    ...           {"x": 1, "y": 3, "z": 2, "alpha": 4, "tx": 1, "ty": 1, "tz": 1})
    (624, 304.0, 'compulsory', 26)
    """
    from kernels.config import config_from_dict

    from ..winner import bound_info

    check_layer(layer)
    candidate = check_candidate(candidate)
    e = getattr(config_from_dict(config, candidate.algorithm), "e", None)
    if e != candidate.e:
        raise InvalidInputError(f"config {config!r:.80} is no configuration of {candidate.label}")
    info = bound_info(layer, config, candidate.algorithm)  # InvalidInputError: no kernel
    return (int(info.dataflow_io_words), float(info.lower_bound_words), str(info.method),
            int(info.fast_memory_words))


def min_flops(layer: ConvLayer, candidate: Candidate) -> int:
    """FLOPs of the algorithm's multiplications (see the module doc).

    >>> from iobound.layer import ConvLayer
    >>> l = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3)
    >>> min_flops(l, Candidate("direct")), min_flops(l, Candidate("winograd", 2))
    (2304, 1024)
    """
    from dataflow.flops import direct_flops, winograd_product_flops
    check_layer(layer)
    if check_candidate(candidate).algorithm == "direct":
        return direct_flops(layer)
    return winograd_product_flops(layer, candidate.e)


def selection_from_example(example: Example, predicted: bool = False,
                           source: str = "", untuned: tuple[str, ...] = (),
                           device=None) -> LayerSelection:
    """The fastest candidate of ``example`` with its evidence (see the module doc).

    ``device``: the :class:`~iobound.device_spec.Device` the example was labelled on, or
    its preset's name (its bandwidth and peak give the floors); by default the preset
    ``example.device`` names. Every argument is checked first (InvalidInputError naming
    it), and so is the best candidate's configuration (:func:`chosen_io`).

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> selection_from_example(Example(layer, "V100-SXM2", {CLASSES[0]: 1.0}))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: the example has no configuration of its best candidate, direct
    """
    from ..option_checks import check_flag, check_type
    from .dataset import check_device

    check_type("example", example, Example)
    check_flag("predicted", predicted)
    check_type("source", source, str)
    if isinstance(untuned, (str, bytes)) or not hasattr(untuned, "__iter__") \
            or not all(isinstance(u, str) for u in untuned):
        raise InvalidInputError(f"untuned must be a list of candidate labels, "
                                f"got {untuned!r:.60}")
    dev = check_device(example.device if device is None else device)
    layer, best = example.layer, example.best
    config = example.configs.get(best)
    if config is None:
        raise InvalidInputError(f"the example has no configuration of its best candidate, "
                                f"{best.label}")
    io, bound, method, s = chosen_io(layer, best, config)
    evidence = tuple(CandidateEvidence(c, example.times.get(c), example.configs.get(c, {}))
                     for c in CLASSES if c in example.times)
    return LayerSelection(layer, example.device, best, dict(config), example.best_time,
                          example.estimate, predicted, evidence, io, bound, method, s,
                          dev.memory_time_ms(bound * WORD_BYTES),
                          dev.compute_time_ms(min_flops(layer, best)), source,
                          tuple(untuned))


def _known_examples(records: Iterable, device_name: str) -> dict[str, Example]:
    """shape -> example of ``device_name`` from ``records`` (a record under another name
    of the device, ``v100`` for ``V100-SXM2``, is one of its: :func:`same_device`);
    measured records only where a shape has any (an estimate and a measurement are not
    compared)."""
    from dataclasses import replace

    from search.db.device_names import same_device
    by_shape: dict[str, list] = {}
    for rec in records:  # a tuned algorithm that is no candidate for the layer is not one here
        if same_device(rec.device, device_name) and rec.candidate in candidates(rec.layer):
            rec = rec if rec.device == device_name else replace(rec, device=device_name)
            by_shape.setdefault(shape_key(rec.layer), []).append(rec)
    out = {}
    for key, recs in by_shape.items():
        measured = [r for r in recs if not r.estimate]
        exs = examples_from_records(measured or recs)
        if exs:
            out[key] = exs[0]
    return out


def _has_configurations(layer: ConvLayer, device, candidate) -> bool:
    """Whether ``candidate``'s Table 1 pruned space of ``layer`` on ``device`` has a
    configuration (the oracle gives an empty one no time: ``labels.oracle_record``)."""
    from .labels import candidate_space
    try:
        candidate_space(layer, device, candidate)
    except ValueError:
        return False
    return True


def select_layers(layers: Iterable[ConvLayer], device, measure: str = "model",
                  progress: Callable[[int, ConvLayer], None] | None = None,
                  known: Iterable | None = None) -> list[LayerSelection]:
    """Select for each layer (see the module doc).

    ``known``: label records already at hand (e.g. ``history_source.records_from_history``):
    a layer whose shape they cover is selected from them alone (``source`` "history"); the
    other layers are labelled with ``measure`` (``source`` "<measure> oracle").

    >>> from iobound.layer import ConvLayer
    >>> from search.selection.dataset import LabelRecord
    >>> pw = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1, name="pw")
    >>> cfg = {"x": 1, "y": 3, "z": 2, "alpha": 4, "tx": 1, "ty": 1, "tz": 1}
    >>> known = [LabelRecord(pw, "v100", "direct", None, cfg, 0.5, False)]
    >>> [(s.source, s.device, s.estimate) for s in select_layers([pw], "v100", known=known)]
    [('history', 'V100-SXM2', False)]
    """
    from ..option_checks import check_records
    from .dataset import LabelRecord, check_device
    from .labels import check_progress, label_layers

    # each argument checked first, by name: never an AttributeError mid-selection
    layers = list(check_records("layers", layers, ConvLayer))
    dev = check_device(device)
    check_progress(progress)
    known = () if known is None else check_records("known", known, LabelRecord)
    have = _known_examples(known, dev.name)
    todo = [l for l in layers if shape_key(l) not in have]
    records = iter(label_layers(todo, dev, measure, progress))
    out = []
    for layer in layers:
        ex = have.get(shape_key(layer))
        source = "history"
        if ex is None:
            # label_layers gives each layer's candidates in order, layer after layer
            found = examples_from_records([next(records) for _ in candidates(layer)])
            if not found:
                raise InvalidInputError(
                    f"layer {layer.name or layer.short()}: no candidate algorithm has a "
                    f"valid configuration on {dev.name} (every pruned space is empty)")
            ex, source = found[0], f"{measure} oracle"
        times, configs = dict(ex.times), dict(ex.configs)
        for c in candidates(layer):  # no record, and none can exist: unavailable, not untuned
            if c not in times and not _has_configurations(layer, dev, c):
                times[c], configs[c] = None, {}
        ex = Example(layer, ex.device, times, configs, ex.estimate)
        untuned = tuple(c.label for c in candidates(layer) if c not in ex.times)
        out.append(selection_from_example(ex, source=source, untuned=untuned, device=dev))
    return out
