"""Questions asked of the tuning database: what is in it, what is best, what fits a space.

Examples
--------
>>> from search.db import Measurement, TuningDB, Workload
>>> from search.measure.base import MeasureRecord
>>> from search.grid_space import GridSpace
>>> db = TuningDB(":memory:")
>>> w = Workload("k", [8], ("x",))
>>> _ = db.add([Measurement(w, d, "t", MeasureRecord.ok({"x": x}, time_ms=t))
...             for d, x, t in (("v100", 1, 3.0), ("v100", 2, 2.0), ("a100", 1, 1.0))])
>>> [(r.workload.label(), r.device, r.measurements, r.timed, r.best_ms) for r in summary(db)]
[('k [8]', 'a100', 1, 1, 1.0), ('k [8]', 'v100', 2, 2, 2.0)]
>>> [(m.record.config, m.time_ms) for m in best(db, w, "v100", k=2)]
[({'x': 2}, 2.0), ({'x': 1}, 3.0)]
>>> len(history_for_space(db, GridSpace({"x": [1, 2]}), exclude_devices=["a100"]))
2
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable

from iobound import limits
from iobound.errors import InvalidInputError

from ..option_checks import check_records, check_type, shown
from .checks import param_names
from .device_names import device_as_stored, devices_as_stored
from .conv_template import CONV_TEMPLATE, conv_algorithm, stored_layer
from .model import COUNTED_SQL, Measurement, Workload, workload_from_row
from .store import TuningDB, damaged_row, time_fault

__all__ = ["SummaryRow", "summary", "best", "select_workloads", "workload_labels",
           "history_for_space", "other_space_timings", "LayerBest", "best_for_layer", "layer_workloads"]


@dataclass(frozen=True)
class SummaryRow:
    """One workload on one device: how many measurements, how many timed, the best time."""

    workload: Workload
    device: str
    measurements: int
    timed: int
    best_ms: float | None
    best_estimate: bool = False  # the best time is an analytic estimate, not a measurement


def summary(db: TuningDB) -> list[SummaryRow]:
    """Every (workload, device) pair with counts and the best time (and whether it is an
    estimate: no measurement is as fast), by workload then device (``iobound history list``;
    example: the module's).

    >>> from search.measure.base import MeasureRecord
    >>> db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
    >>> _ = db.add([Measurement(w, "v100", "model", MeasureRecord.ok({"x": 1}, time_ms=0.5,
    ...             estimate=True)), Measurement(w, "v100", "cuda", MeasureRecord.ok({"x": 2},
    ...             time_ms=2.0))])
    >>> [(r.measurements, r.best_ms, r.best_estimate) for r in summary(db)]  # 0.5 is estimated
    [(2, 0.5, True)]
    """
    check_type("db", db, TuningDB)
    rows = db.connection.execute(
        "SELECT w.template, w.problem, w.tune_params, d.name, COUNT(*), "
        f"SUM({COUNTED_SQL}), "
        "MIN(CASE WHEN m.status='ok' THEN m.time_ms END), "
        "MIN(CASE WHEN m.status='ok' AND NOT m.estimate THEN m.time_ms END), "
        "MIN(CASE WHEN typeof(m.time_ms) NOT IN ('real', 'integer', 'null') THEN m.id END) "
        "FROM measurements m JOIN workloads w ON m.workload = w.id "
        "JOIN devices d ON m.device = d.id GROUP BY w.id, d.id "
        "ORDER BY w.template, w.problem, d.name").fetchall()
    for *_, damaged in rows:  # a time stored as text: SQLite's MIN would pick a number or it
        if damaged is not None:
            t = db.connection.execute("SELECT time_ms FROM measurements WHERE id=?",
                                      (damaged,)).fetchone()[0]
            raise damaged_row(db.path, damaged, time_fault(t))
    return [SummaryRow(workload_from_row(t, p, tp), dev, int(n), int(timed or 0), best_ms,
                       best_ms is not None and (measured is None or best_ms < measured))
            for t, p, tp, dev, n, timed, best_ms, measured, _ in rows]


def best(db: TuningDB, workload: Workload | None = None, device: str | None = None,
         k: int = 1) -> list[Measurement]:
    """The ``k`` fastest configurations: the fastest timed measurement of each
    configuration (of one workload and/or device when given), fastest first. A
    configuration measured more than once counts once, at its fastest (as TVM's
    ``ApplyHistoryBest`` picks over a log); a device is every name the database holds of
    it (:func:`~.device_names.device_as_stored`: ``v100`` finds ``V100-SXM2`` and a
    cache's ``Tesla V100-SXM2-16GB``; example: the module's).

    >>> from search.measure.base import MeasureRecord
    >>> db = TuningDB(":memory:")
    >>> _ = db.add([Measurement(Workload("k", [n], ("x",)), d, "t", MeasureRecord.ok(
    ...     {"x": 1}, time_ms=float(n))) for n, d in ((8, "V100-SXM2"), (4, "a100"),
    ...     (16, "Tesla V100-SXM2-16GB"))])
    >>> [(m.workload.label(), m.device) for m in best(db, device="v100", k=5)]
    [('k [8]', 'V100-SXM2'), ('k [16]', 'Tesla V100-SXM2-16GB')]
    """
    check_type("db", db, TuningDB)
    k = limits.check_int("k", k, limits.ROWS)
    if device is not None:
        device = device_as_stored(db.connection, device)
    return db.measurements(workload, device=device, counted_only=True, limit=k,
                           fastest_per_config=True)


def workload_labels(workloads: Iterable[Workload]) -> dict[Workload, str]:
    """Each workload's label: the short one, or with its parameter names where two of
    ``workloads`` share the short one (same template and problem, other parameters).

    >>> a, b = Workload("k", [8], ("x",)), Workload("k", [8], ("y",))
    >>> list(workload_labels([a, b, Workload("j", 1, ("x",))]).values())
    ['k [8] (x)', 'k [8] (y)', 'j 1']
    """
    ws = list(check_records("workloads", workloads, Workload))
    shared = Counter(w.label() for w in ws)
    return {w: w.label(params=shared[w.label()] > 1) for w in ws}


def select_workloads(db: TuningDB, text: str | None = None) -> list[Workload]:
    """The stored workloads whose label (``template problem (params)``) contains ``text``
    (all if None); a label given whole selects only the workloads it names exactly.

    >>> db = TuningDB(":memory:")
    >>> _ = db.add([], tune_params={Workload("k", [8], p): {} for p in (("x",), ("x", "y"))})
    >>> [w.label(params=True) for w in select_workloads(db, "k [8]")]
    ['k [8] (x,y)', 'k [8] (x)']
    >>> [w.label(params=True) for w in select_workloads(db, "k [8] (x)")]  # whole: exactly
    ['k [8] (x)']
    """
    check_type("db", db, TuningDB)
    if text is not None:
        check_type("text", text, str)
    ws = db.workloads()
    if not text:
        return ws
    exact = [w for w in ws if text in (w.label(), w.label(params=True))]
    return exact or [w for w in ws if text in w.label(params=True)]


def history_for_space(db: TuningDB, space, *, exclude_devices: Iterable[str] = (),
                      devices: Iterable[str] | None = None,
                      up_to: int | None = None) -> list[Measurement]:
    """The timed measurements usable as history for ``space``, fastest first.

    Usable means: the workload has exactly the space's parameter names (history of
    another parameter space says nothing about this one), and the device is not in
    ``exclude_devices`` (and is in ``devices`` when given), and the record is no estimate
    of another version of the analytic model (its times are not the model's as it is:
    :func:`search.measure.model.stale_model_toolchain`), nor an estimate of a workload
    measured on its device (timings and estimates are on different scales; the
    timings are kept, as :func:`best_for_layer` keeps them). Workloads of every
    problem are returned; the strategy weighs them by how well they match; ``up_to``
    keeps those stored by a mark (:meth:`TuningDB.last_id`). Each of
    the two is a collection of device names, each standing for every name the database
    holds of its device (:func:`~.device_names.devices_as_stored`: ``v100`` is
    ``V100-SXM2`` and a cache's ``Tesla V100-SXM2-16GB``); one name given as a string is
    refused.

    >>> from search.measure.base import MeasureRecord
    >>> from search.grid_space import GridSpace
    >>> db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
    >>> _ = db.add([Measurement(w, d, "t", MeasureRecord.ok({"x": 1}, time_ms=t))
    ...             for d, t in (("V100-SXM2", 2.0), ("Tesla V100-SXM2-16GB", 1.0), ("a100", 3.0))])
    >>> [m.device for m in history_for_space(db, GridSpace({"x": [1, 2]}), devices=["v100"])]
    ['Tesla V100-SXM2-16GB', 'V100-SXM2']
    """
    from iobound.devices import canonical_device_name
    from search.measure.model import stale_model_toolchain

    check_type("db", db, TuningDB)
    params = space_params(space)
    skip = devices_as_stored(db.connection, "exclude_devices", exclude_devices)
    keep = None if devices is None else devices_as_stored(db.connection, "devices", devices)
    got = [m for m in db.timings(params, up_to)
           if m.device not in skip and (keep is None or m.device in keep)
           and not stale_model_toolchain(m.toolchain)]
    # an analytic estimate is no rival of a timing (as in best_for_layer): where a workload
    # was measured on a device (under any of its names: they are one source), its estimates
    # there would rank on another scale in one source
    measured = {(m.workload, canonical_device_name(m.device)) for m in got if not m.record.estimate}
    return [m for m in got if not (m.record.estimate and (
        m.workload, canonical_device_name(m.device)) in measured)]


def other_space_timings(db: TuningDB, params: Iterable[str]) -> int:
    """How many timed ``ok`` records are of workloads whose parameter names are not
    ``params`` (history that says nothing about a space of ``params``).

    >>> from search.measure.base import MeasureRecord
    >>> db = TuningDB(":memory:")
    >>> _ = db.add([Measurement(Workload("k", [8], p), "d", "t", MeasureRecord.ok({q: 1 for q in p},
    ...             time_ms=1.0)) for p in (("x",), ("x", "y"))])
    >>> other_space_timings(db, ["x"]), other_space_timings(db, ["y", "x"])
    (1, 1)
    """
    from .model import canon
    check_type("db", db, TuningDB)
    return int(db.connection.execute(
        "SELECT COUNT(*) FROM measurements m JOIN workloads w ON m.workload = w.id "
        f"WHERE w.params != ? AND {COUNTED_SQL}",
        (canon(param_names(params)),)).fetchone()[0])


def space_params(space) -> list[str]:
    """The parameter names of ``space`` (a search space: anything with ``params``); else
    InvalidInputError (was an AttributeError on None).

    >>> space_params(None)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: space must be a search space (with params), got None
    """
    if not hasattr(space, "params") or isinstance(space, (str, bytes)):
        raise InvalidInputError(f"space must be a search space (with params), got {shown(space)}")
    return param_names(space.params)


@dataclass(frozen=True)
class LayerBest:
    """The configuration the database says is fastest for a layer on a device: the
    ``measurement``, how many timed records of the layer there were (``records``) and
    how many of them were measured rather than estimated (``measured``)."""

    measurement: Measurement
    records: int
    measured: int


def best_for_layer(db: TuningDB, layer, device: str,
                   algorithm: str | None = None) -> LayerBest | None:
    """The fastest ``ok`` record of our conv template for ``layer`` (a
    :class:`~iobound.layer.ConvLayer`: any stored layer of its shape, whatever its name)
    on ``device`` (under any name the database holds of it), of ``algorithm`` when given (a Winograd
    configuration has ``e``): the fastest measured one, and the fastest estimate only
    when nothing was measured (an analytic model's time is not a timing; of the current
    model version when it has any); None when there is none.

    >>> from iobound.layer import ConvLayer
    >>> from search.db import CONV_TEMPLATE, Measurement, TuningDB, Workload
    >>> from search.measure.base import MeasureRecord
    >>> layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, name="mine")
    >>> cfg = {"x": 3, "y": 3, "z": 2, "alpha": 1, "tx": 3, "ty": 3, "tz": 1}  # one of layer's
    >>> db, w = TuningDB(":memory:"), Workload(CONV_TEMPLATE, layer.replace(name="b").to_dict(), tuple(cfg))
    >>> _ = db.add([Measurement(w, "V100-SXM2", "model", MeasureRecord.ok(cfg, time_ms=1.0,
    ...             estimate=True)), Measurement(w, "V100-SXM2", "cuda",
    ...             MeasureRecord.ok({**cfg, "z": 4}, time_ms=2.0))])
    >>> b = best_for_layer(db, layer, "v100")  # a name the database holds of it: V100-SXM2
    >>> b.measurement.record.config["z"], b.records, b.measured
    (4, 2, 1)

    ``layer`` that is no layer, ``algorithm`` that is no algorithm
    (:func:`iobound.algorithms.algorithm_name`) and ``device`` that is no device name are
    refused (each would find nothing: None said "no record" of a question never asked).
    """
    from iobound.algorithms import algorithm_name
    if algorithm is not None:
        algorithm = algorithm_name(algorithm)
    workloads = layer_workloads(db, layer)
    device = device_as_stored(db.connection, device)
    timed = []
    for w in workloads:
        if algorithm is not None and conv_algorithm(w.params) != algorithm:
            continue
        timed += db.measurements(w, device=device, counted_only=True)
    if not timed:
        return None
    from search.measure.model import stale_model_toolchain
    measured = [m for m in timed if not m.record.estimate]
    # an older analytic model's estimate is no rival of the current model's
    current = [m for m in timed if not stale_model_toolchain(m.toolchain)]
    best = min(measured or current or timed, key=lambda m: m.time_ms)
    return LayerBest(best, len(timed), len(measured))


def layer_workloads(db: TuningDB, layer) -> list[Workload]:
    """The workloads of our conv template whose stored layer has ``layer``'s shape (a
    :class:`~iobound.layer.ConvLayer`; names aside): its direct and Winograd ones.

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3)
    >>> db = TuningDB(":memory:")
    >>> _ = db.add([], tune_params={Workload(CONV_TEMPLATE, layer.replace(name=n).to_dict(), p): {}
    ...                             for n, p in (("a", ("x", "y")), ("b", ("e", "x")))})
    >>> [w.label(params=True) for w in layer_workloads(db, layer)]  # any name, one shape
    ['iobound.conv a (x,y)', 'iobound.conv b (e,x)']
    """
    from iobound.layer import ConvLayer
    check_type("db", db, TuningDB)
    check_type("layer", layer, ConvLayer)
    return [w for w in db.workloads()
            if w.template == CONV_TEMPLATE and stored_layer(w.problem) == layer]
