"""The network table: one row per tuned layer (best time, the I/O bound, the ratio).

:func:`network_table` is what ``iobound tune --network NAME`` prints at the end and
writes with ``--network-json FILE``: per layer the best configuration's time (or its
emulated traffic, for the ``emulate`` measurer, which times nothing), the words its
dataflow moves, the best I/O lower bound at its on-chip words and their ratio, and the
kernel file; plus the run's totals: evaluations, layers tuned, and the layers' best times
summed (``total_time_ms``, the network's convolutions run one after another; ``None``
unless every layer has a time; ``estimate`` when any is one). A layer with the shape of
an earlier one, not tuned again (:func:`~search.session.repeats.repeats`), has that layer's
results, 0 evaluations and ``same_as`` naming it. A layer tuned with every algorithm
(``algorithm="all"``) is one row: the fastest algorithm's, each one's best in
``candidates``.

Examples
--------
>>> import tempfile
>>> from iobound.networks import network_layers
>>> from search.session import TuneSettings, tune_layers
>>> layers = network_layers("alexnet")[3:5]
>>> reports = tune_layers(layers, "v100", TuneSettings(strategy="random", budget=4),
...                       out_dir=tempfile.mkdtemp(), verify=False)
>>> table = network_table(reports, network="alexnet")
>>> [row["layer"] for row in table["layers"]], table["evaluations"]
(['alexnet.conv4', 'alexnet.conv5'], 8)
>>> table["total_time_ms"] == sum(r["best_time_ms"] for r in table["layers"]), table["estimate"]
(True, True)
>>> row = table["layers"][0]
>>> row["cost_unit"], row["estimate"], row["ratio_to_bound"] >= 1
('ms', True, True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from .choice import best_cost, choose_algorithms

if TYPE_CHECKING:  # pragma: no cover
    from .reports import LayerReport

__all__ = ["network_row", "network_table"]


def network_row(rep: "LayerReport") -> dict:
    """One layer's row (see the module doc); ``None`` values where nothing ran ok.

    >>> import tempfile
    >>> from iobound.layer import ConvLayer
    >>> from search.session import TuneSettings, plan_layers, run_layer
    >>> jobs = plan_layers([ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1)],
    ...                    "a100", TuneSettings(strategy="grid", budget=2),
    ...                    out_dir=tempfile.mkdtemp(), verify=False)
    >>> row = network_row(run_layer(jobs[0]))
    >>> row["algorithm"], row["evaluations"], row["stop_reason"], row["bound_method"], row["log"]
    ('direct', 2, 'budget', 'compulsory', None)
    """
    result = rep.result
    rec = result.best.record if result.best is not None else None
    bound = rep.winner.bound if rep.winner is not None else None
    timed = rec is not None and rec.time_ms is not None
    return {
        "layer": rep.layer.name, "shape": rep.layer.short(), "algorithm": rep.algorithm,
        "best_time_ms": rec.time_ms if timed else None,
        "best_cost": rec.cost if rec is not None else None,
        "cost_unit": "ms" if timed else ("words" if rec is not None else None),
        "estimate": bool(rec is not None and rec.estimate),
        "best_config": dict(result.best.config) if result.best is not None else None,
        "evaluations": rep.evaluations, "same_as": rep.same_as,
        "stop_reason": result.stop_reason.value,
        "dataflow_io_words": bound.dataflow_io_words if bound else None,
        "lower_bound_words": bound.lower_bound_words if bound else None,
        "bound_method": bound.method if bound else None,
        "ratio_to_bound": bound.ratio_to_bound if bound else None,
        "kernel": rep.winner.kernel_path if rep.winner is not None else None,
        "log": None,
    }


def network_table(reports: Sequence["LayerReport"], logs: Sequence[str | None] | None = None,
                  **about: Any) -> dict:
    """The table of ``reports`` (in their order), with ``about`` (network, device, measure,
    strategy...) at the top and each layer's log path when ``logs`` (one per report) gives
    them. A layer tuned with several algorithms (``algorithm="all"``) is one row, its
    fastest (:func:`~search.session.choice.choose_algorithms`), with every algorithm's best
    in ``candidates`` and all their evaluations counted.

    >>> import tempfile
    >>> from iobound.layer import ConvLayer
    >>> from search.session import TuneSettings, tune_layers
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, name="c")
    >>> reports = tune_layers([layer], "v100", TuneSettings(strategy="random", budget=2),
    ...                       algorithm="all", out_dir=tempfile.mkdtemp(), verify=False)
    >>> table = network_table(reports, logs=["run.c.direct.jsonl", None], device="v100")
    >>> [c["log"] for c in table["layers"][0]["candidates"]], table["evaluations"], table["device"]
    (['run.c.direct.jsonl', None], 4, 'v100')
    """
    logs = list(logs or ())
    logs += [None] * (len(reports) - len(logs))
    own_log = {(rep.layer.name, rep.algorithm): log
               for rep, log in zip(reports, logs) if rep.same_as is None}
    # a repeat measured nothing: its results are in its first layer's log
    log_of = {id(rep): own_log.get((rep.same_as, rep.algorithm)) if rep.same_as is not None
              else log for rep, log in zip(reports, logs)}
    rows = []
    for choice in choose_algorithms(reports):
        shown = choice.chosen or choice.candidates[0]
        row = network_row(shown)
        if choice.chosen is None and len(choice.candidates) > 1:
            row["algorithm"] = None  # none ran: no algorithm was chosen (as choices say)
        row["log"] = log_of[id(shown)]
        row["evaluations"] = sum(rep.evaluations for rep in choice.candidates)
        row["candidates"] = [{"algorithm": rep.algorithm, "best_cost": best_cost(rep),
                              "evaluations": rep.evaluations, "log": log_of[id(rep)]}
                             for rep in choice.candidates]
        rows.append(row)
    times = [r["best_time_ms"] for r in rows]
    return {**about, "layers": rows, "evaluations": sum(r["evaluations"] for r in rows),
            "tuned": sum(r["best_cost"] is not None for r in rows),
            "total_time_ms": sum(times) if rows and None not in times else None,
            "estimate": any(r["estimate"] for r in rows)}
