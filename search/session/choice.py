"""The algorithm of each layer tuned with every one (``algorithm="all"``): the fastest measured.

A run with ``algorithm="all"`` (:func:`~search.session.plan.plan_layers`) reports each layer
once per algorithm whose kernel computes it. :func:`choose_algorithms` groups those reports
by layer and picks, per layer, the report whose best configuration has the lowest cost:
the measured (or, with the model measurer, estimated) time, or the emulated words for the
``emulate`` measurer, which times nothing. Every candidate of a layer is measured by the
same measurer, so the costs compare. A tie keeps the registry's first algorithm (direct).
This is the measured counterpart of ``iobound select``, which evaluates the analytic model
over whole spaces; ``iobound select --history DB`` reads such a run's stored results.

See :func:`choose_algorithms` for an example.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from iobound.layer import ConvLayer

    from .reports import LayerReport

__all__ = ["AlgorithmChoice", "choose_algorithms", "best_cost"]


def best_cost(report: "LayerReport") -> float | None:
    """The cost of ``report``'s best configuration (None: nothing ran ok).

    >>> import tempfile
    >>> from iobound.layer import ConvLayer
    >>> from search.session import TuneSettings, tune_layers
    >>> pw = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=8, k_h=1, k_w=1)
    >>> settings = TuneSettings(strategy="grid", budget=3)
    >>> [rep] = tune_layers([pw], "v100", settings, out_dir=tempfile.mkdtemp(), verify=False)
    >>> best_cost(rep) == rep.result.best.record.time_ms  # the model's time, in ms
    True
    """
    best = report.result.best
    return None if best is None else best.record.cost


@dataclass(frozen=True)
class AlgorithmChoice:
    """One layer: its reports, one per algorithm (``candidates``), and the fastest
    (``chosen``; None when no candidate ran a configuration successfully).

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1, name="pw")
    >>> d = AlgorithmChoice(layer, None, ()).to_dict()  # no candidate ran
    >>> d["layer"], d["algorithm"], d["best_cost"], d["cost_unit"], d["candidates"]
    ('pw', None, None, None, [])
    """

    layer: "ConvLayer"
    chosen: "LayerReport | None"
    candidates: tuple["LayerReport", ...]

    def to_dict(self) -> dict:
        """``{"layer", "algorithm", "best_cost", "cost_unit", "estimate", "best_config",
        "kernel_path", "candidates": [{"algorithm", "best_cost", "best_config",
        "evaluations"}]}`` (``algorithm`` and what follows are None without a winner)."""
        rec = self.chosen.result.best.record if self.chosen is not None else None
        return {
            "layer": self.layer.name, "layer_shape": self.layer.short(),
            "algorithm": self.chosen.algorithm if self.chosen is not None else None,
            "best_cost": rec.cost if rec is not None else None,
            "cost_unit": None if rec is None else ("ms" if rec.time_ms is not None else "words"),
            "estimate": bool(rec is not None and rec.estimate),
            "best_config": (dict(self.chosen.result.best.config)
                            if self.chosen is not None else None),
            "kernel_path": (self.chosen.winner.kernel_path
                            if self.chosen is not None and self.chosen.winner else None),
            "candidates": [{"algorithm": r.algorithm, "best_cost": best_cost(r),
                            "best_config": (dict(r.result.best.config)
                                            if r.result.best is not None else None),
                            "evaluations": r.evaluations} for r in self.candidates],
        }


def choose_algorithms(reports: Sequence["LayerReport"]) -> list[AlgorithmChoice]:
    """Per layer, in order, its reports and the fastest of them.

    ``reports`` are in the jobs' order (:func:`~search.session.plan.layer_algorithms`: a
    layer's algorithms one after another): a layer's group is a run of reports of that
    layer (equal name and shape) with distinct algorithms, so two equal layers in a row
    are two groups.

    >>> import tempfile
    >>> from iobound.layer import ConvLayer
    >>> from search.session import TuneSettings, tune_layers
    >>> reports = tune_layers([ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3)],
    ...                       "v100", TuneSettings(strategy="random", budget=2), algorithm="all",
    ...                       out_dir=tempfile.mkdtemp(), verify=False)
    >>> [choice] = choose_algorithms(reports)  # one layer, tuned with both algorithms
    >>> [r.algorithm for r in choice.candidates], choice.chosen.algorithm
    (['direct', 'winograd'], 'winograd')
    >>> choice.chosen.result.best.record.cost == min(r.result.best.record.cost for r in reports)
    True
    """
    from ..option_checks import check_records
    from .reports import LayerReport
    reports = check_records("reports", reports, LayerReport)
    groups: list[list] = []
    for rep in reports:
        last = groups[-1] if groups else None
        if (last and last[0].layer == rep.layer and last[0].layer.name == rep.layer.name
                and all(r.algorithm != rep.algorithm for r in last)):
            last.append(rep)
        else:
            groups.append([rep])
    choices = []
    for reps in groups:
        timed = [r for r in reps if best_cost(r) is not None]
        chosen = min(timed, key=best_cost) if timed else None  # min keeps the first of a tie
        choices.append(AlgorithmChoice(reps[0].layer, chosen, tuple(reps)))
    return choices
