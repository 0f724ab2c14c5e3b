"""Per-layer algorithm-selection data: candidates, labelled records, examples.

A *candidate* is an algorithm with its Winograd output tile: ``direct`` (``e`` is
None) or ``winograd`` with ``e`` in :data:`WINOGRAD_ES`. Winograd is a candidate only
where it is offered (:func:`iobound.algorithms.winograd_offered`: it applies and the
kernel is at least 2 x 2), so a 1 x 1 or grouped layer has one candidate.

The interface every source of labels feeds is an iterable of :class:`LabelRecord`
(layer, device, algorithm, e, config, time_ms, estimate): the best configuration
known for one candidate of one layer on one device. :mod:`search.selection.labels`
makes them from a measurer; a tuning-history database can make them from what it
holds. :func:`examples_from_records` groups them into :class:`Example` values, one
per (layer, device), whose ``times`` give the oracle (the fastest candidate). Records in
a file: :mod:`search.selection.record_file`; random layers to label:
:mod:`search.selection.synthetic`.

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
>>> [c.label for c in candidates(layer)]
['direct', 'winograd-e2', 'winograd-e3', 'winograd-e4']
>>> recs = [LabelRecord(layer, "v100", "direct", None, {}, 2.0, True),
...         LabelRecord(layer, "v100", "winograd", 2, {}, 1.0, True)]
>>> ex, = examples_from_records(recs)
>>> ex.best.label, ex.speedup_over_oracle(DIRECT)
('winograd-e2', 0.5)
"""

from __future__ import annotations

import json
import numbers
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from iobound import limits
from iobound.algorithms import OFFERED_WINOGRAD_ES, winograd_offered
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer

__all__ = ["Candidate", "check_candidate", "check_device", "check_time",
           "DIRECT", "WINOGRAD_ES", "CLASSES", "candidates", "shape_key", "LabelRecord",
           "Example", "examples_from_records"]

#: Winograd output tiles offered as candidates.
WINOGRAD_ES = OFFERED_WINOGRAD_ES


@dataclass(frozen=True)
class Candidate:
    """An algorithm and its Winograd output tile ``e`` (None for direct).

    >>> Candidate("winograd", 3).label, Candidate("direct") < Candidate("winograd", 2)
    ('winograd-e3', True)
    """

    algorithm: str
    e: int | None = None

    def __post_init__(self) -> None:
        if self.algorithm == "direct" and self.e is not None:
            raise InvalidInputError(f"direct takes no Winograd e, got e={self.e}")
        if self.algorithm == "winograd":  # e = 2.0 or True compared equal to a tile and passed
            if isinstance(self.e, bool) or not isinstance(self.e, numbers.Integral) \
                    or self.e not in WINOGRAD_ES:
                raise InvalidInputError(f"winograd e must be one of {WINOGRAD_ES}, got {self.e!r}")
            object.__setattr__(self, "e", int(self.e))  # a numpy integer hashes and prints as int
        if self.algorithm not in ("direct", "winograd"):
            raise InvalidInputError(f"algorithm must be 'direct' or 'winograd', got {self.algorithm!r}")

    @property
    def label(self) -> str:
        """``direct`` or ``winograd-e<e>``."""
        return self.algorithm if self.e is None else f"{self.algorithm}-e{self.e}"

    def __lt__(self, other: "Candidate") -> bool:  # direct first, then e ascending
        return (self.e or 0, self.algorithm) < (other.e or 0, other.algorithm)


def check_candidate(candidate, name: str = "candidate") -> "Candidate":
    """``candidate`` when it is a :class:`Candidate`; else InvalidInputError naming it
    (as ``name``).

    >>> check_candidate("winograd")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: candidate must be a Candidate (e.g. Candidate("winograd", 2)), got str 'winograd'
    """
    if not isinstance(candidate, Candidate):
        raise InvalidInputError(f'{name} must be a Candidate (e.g. Candidate("winograd", 2)), '
                                f"got {type(candidate).__name__} {candidate!r:.60}")
    return candidate


def check_device(device):
    """The :class:`~iobound.device_spec.Device` ``device`` is, or the preset a name names;
    else InvalidInputError naming ``device`` (an unknown name: ``UnknownPresetError``).

    >>> check_device("v100").name
    'V100-SXM2'
    >>> check_device(5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: device must be a iobound.device_spec.Device or ..., got 5
    """
    from iobound.device_spec import Device
    from iobound.devices import get_device

    from ..option_checks import check_type
    check_type("device", device, (Device, str))
    return get_device(device) if isinstance(device, str) else device


def check_time(name: str, t) -> float | None:
    """``t`` when it is None (no configuration ran) or a finite number > 0 (a time of a
    label or an example); else InvalidInputError naming ``name``: a NaN or a negative
    time would win the selection (it compares below every real time), a 0 divides.

    >>> check_time("time_ms", float("nan"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: time_ms must be a finite number > 0 or None (...), got nan
    """
    from iobound.limits import check_number
    if t is None:
        return None
    try:  # a huge int is refused as an infinity is (no OverflowError)
        return check_number(name, t, 0, low_open=True)
    except InvalidInputError:
        raise InvalidInputError(f"{name} must be a finite number > 0 or None (no configuration "
                                f"ran), got {t!r:.60}") from None


DIRECT = Candidate("direct")
#: Every class a selector may answer, in a fixed order (its class index).
CLASSES = (DIRECT, *(Candidate("winograd", e) for e in WINOGRAD_ES))


def candidates(layer: ConvLayer) -> list[Candidate]:
    """The candidates of ``layer``: direct, plus Winograd e = 2, 3, 4 where offered.

    >>> from iobound.layer import ConvLayer
    >>> [c.label for c in candidates(ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8,
    ...                                        k_h=1, k_w=1))]
    ['direct']
    """
    return list(CLASSES) if winograd_offered(layer) else [DIRECT]


@dataclass(frozen=True)
class LabelRecord:
    """The best known configuration of one candidate of one layer on one device.

    ``time_ms`` is None when no configuration of the candidate ran (or fits);
    ``estimate`` is True when the time is a model estimate, not a measurement.

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
    >>> rec = LabelRecord(layer, "v100", "winograd", 2, {"tile": 4}, 1.5, True)
    >>> rec.candidate.label, LabelRecord.from_dict(rec.to_dict()) == rec
    ('winograd-e2', True)
    """

    layer: ConvLayer
    device: str
    algorithm: str
    e: int | None
    config: dict
    time_ms: float | None
    estimate: bool
    source: str = ""

    def __post_init__(self) -> None:
        # a NaN or a negative time won the selection (it compares below every real time)
        from iobound.device_checks import check_device_name
        if not isinstance(self.layer, ConvLayer):
            raise InvalidInputError(f"a label's layer must be a ConvLayer, got {self.layer!r:.60}")
        check_device_name(self.device)
        Candidate(self.algorithm, self.e)  # "winograd" with no e, "gemm": named here
        check_time("a label's time_ms", self.time_ms)
        limits.check_flag("a label's estimate", self.estimate)
        if not isinstance(self.config, dict):
            raise InvalidInputError(f"a label's config must be a dict, got {self.config!r:.60}")

    @property
    def candidate(self) -> Candidate:
        return Candidate(self.algorithm, self.e)

    def to_dict(self) -> dict:
        return {"layer": self.layer.to_dict(), "device": self.device, "algorithm": self.algorithm,
                "e": self.e, "config": dict(self.config), "time_ms": self.time_ms,
                "estimate": self.estimate, "source": self.source}

    @classmethod
    def from_dict(cls, d: dict) -> "LabelRecord":
        """The record :meth:`to_dict` wrote; InvalidInputError naming what is missing or
        wrong (``"estimate": "false"`` is no False).

        >>> LabelRecord.from_dict({"device": "v100"})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: a label record needs layer, ...; missing layer, algorithm
        """
        if not isinstance(d, dict):
            raise InvalidInputError(f"a label record must be a JSON object, got {d!r:.60}")
        missing = [k for k in ("layer", "device", "algorithm") if k not in d]
        if missing:
            raise InvalidInputError(f"a label record needs layer, device and algorithm; "
                                    f"missing {', '.join(missing)}")
        if not isinstance(d["layer"], dict):
            raise InvalidInputError(f"a label's layer must be a JSON object, "
                                    f"got {d['layer']!r:.60}")
        config = d.get("config", {})
        if not isinstance(config, dict):
            raise InvalidInputError(f"a label's config must be a dict, got {config!r:.60}")
        source = d.get("source", "")
        if not isinstance(source, str):
            raise InvalidInputError(f"a label's source must be a string, got {source!r:.60}")
        return cls(ConvLayer.from_dict(d["layer"]), d["device"], d["algorithm"], d.get("e"),
                   dict(config), d.get("time_ms"), d.get("estimate", False), source)


def shape_key(layer: ConvLayer) -> str:
    """The layer's canonical JSON without its name: equal for layers of equal shape.

    >>> from iobound.layer import ConvLayer
    >>> a = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, name="a")
    >>> wider = a.replace(c_out=9)
    >>> shape_key(a) == shape_key(a.replace(name="b")), shape_key(a) == shape_key(wider)
    (True, False)
    """
    d = layer.to_dict()
    d.pop("name")
    return json.dumps(d, sort_keys=True)


@dataclass(frozen=True)
class Example:
    """All candidates of one layer on one device: time and config of each (None: none ran).

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
    >>> ex = Example(layer, "v100", {DIRECT: 2.0, Candidate("winograd", 2): 1.0,
    ...                              Candidate("winograd", 4): None})
    >>> [c.label for c in ex.feasible], ex.best_time, ex.so_row().tolist()
    (['direct', 'winograd-e2'], 1.0, [0.5, 1.0, 0.0, 0.0])
    """

    layer: ConvLayer
    device: str
    times: dict = field(default_factory=dict)    # Candidate -> float | None
    configs: dict = field(default_factory=dict)  # Candidate -> dict
    estimate: bool = True

    def __post_init__(self) -> None:
        # checked as a label is (one rule each): a 0 time divided, a NaN lost and a
        # negative one won the selection
        from iobound.device_checks import check_device_name
        if not isinstance(self.layer, ConvLayer):
            raise InvalidInputError(f"an example's layer must be a ConvLayer, "
                                    f"got {self.layer!r:.60}")
        check_device_name(self.device)
        for name, value in (("times", self.times), ("configs", self.configs)):
            if not isinstance(value, dict):
                raise InvalidInputError(f"an example's {name} must be a dict of Candidate, "
                                        f"got {value!r:.60}")
        for c, t in self.times.items():
            check_time(f"an example's time of {check_candidate(c, 'times key').label}", t)
        for c, cfg in self.configs.items():
            if not isinstance(cfg, dict):
                raise InvalidInputError(f"an example's config of "
                                        f"{check_candidate(c, 'configs key').label} "
                                        f"must be a dict, got {cfg!r:.60}")
        limits.check_flag("an example's estimate", self.estimate)

    @property
    def feasible(self) -> list[Candidate]:
        """Candidates with a time, sorted."""
        return sorted(c for c, t in self.times.items() if t is not None)

    @property
    def best(self) -> Candidate:
        """The oracle's choice: the fastest candidate (ties: the first in class order);
        InvalidInputError when no candidate has a time."""
        if not self.feasible:
            raise InvalidInputError(f"the example of {self.layer.name or self.layer.short()} "
                                    f"on {self.device} has no candidate with a time: no oracle")
        return min(self.feasible, key=lambda c: (self.times[c], CLASSES.index(c)))

    @property
    def best_time(self) -> float:
        return float(self.times[self.best])

    def speedup_over_oracle(self, choice: Candidate) -> float:
        """``t_oracle / t_choice`` (1 for the oracle's choice; 0 for a choice that cannot run)."""
        t = self.times.get(check_candidate(choice, "choice"))
        return 0.0 if t is None else self.best_time / float(t)

    def so_row(self) -> np.ndarray:
        """Speedup over the oracle of each class of :data:`CLASSES` (0 where infeasible)."""
        return np.array([self.speedup_over_oracle(c) for c in CLASSES])


def examples_from_records(records: Iterable[LabelRecord]) -> list[Example]:
    """Group records by (layer shape, device); the fastest record per candidate wins.

    Groups with no timed candidate are dropped; the order is first appearance.

    >>> from iobound.layer import ConvLayer
    >>> a = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, name="a")
    >>> one = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=1, k_w=1)
    >>> recs = [LabelRecord(a, "v100", "direct", None, {"t": 1}, 3.0, False),
    ...         LabelRecord(a.replace(name="b"), "v100", "direct", None, {"t": 2}, 2.0, False),
    ...         LabelRecord(one, "v100", "direct", None, {}, None, False)]
    >>> [(ex.layer.name, ex.best_time, ex.configs[DIRECT]) for ex in examples_from_records(recs)]
    [('a', 2.0, {'t': 2})]
    """
    groups: dict[tuple, dict] = {}
    for rec in records:
        key = (shape_key(rec.layer), rec.device)
        g = groups.setdefault(key, {"layer": rec.layer, "times": {}, "configs": {}, "est": False})
        cand, t = rec.candidate, rec.time_ms
        old = g["times"].get(cand)
        if cand not in g["times"] or (t is not None and (old is None or t < old)):
            g["times"][cand] = None if t is None else float(t)
            g["configs"][cand] = dict(rec.config)
        g["est"] = g["est"] or rec.estimate
    out = []
    for (_, device), g in groups.items():
        if any(t is not None for t in g["times"].values()):
            out.append(Example(g["layer"], device, g["times"], g["configs"], g["est"]))
    return out
