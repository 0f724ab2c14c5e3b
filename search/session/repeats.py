"""A network's layers of one shape: tuned once, the later ones take the first's report.

:func:`repeats` finds, for each job, the earlier job with the same space and measurements
(the layer's shape, the device, the algorithm and the measurer; a layer's name is not
part of its shape); :func:`repeat_report` is a repeat's report: the first's best result,
winner and kernel, nothing measured, stored or read from the history for it (``same_as``
names the first; its JSON counts no evaluations, statuses, rounds, resumed or reused
records: :meth:`~search.session.reports.LayerReport.to_dict`). A compiler's task
extraction tunes each distinct workload once the same way.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from .reports import LayerReport
    from .plan import LayerJob
    from .settings import Observer

__all__ = ["repeats", "repeat_report"]


def repeats(jobs: Sequence["LayerJob"]) -> list[int | None]:
    """For each job, the index of the first earlier job it repeats (the same layer shape,
    device, algorithm and measurer: the same space and the same measurements), or ``None``.

    >>> from types import SimpleNamespace as Job
    >>> from iobound.networks import get_layer
    >>> a, b, c = (get_layer(f"resnet18.{n}") for n in ("conv2_1a", "conv2_1b", "conv3_1a"))
    >>> repeats([Job(layer=l, device="v100", algorithm="direct", measure="model")
    ...          for l in (a, c, b, c)])  # conv2_1b has conv2_1a's shape
    [None, None, 0, 1]
    """
    first: dict = {}
    out: list[int | None] = []
    for k, job in enumerate(jobs):
        key = (job.layer, getattr(job.device, "name", job.device), job.algorithm, job.measure)
        out.append(first.get(key))
        first.setdefault(key, k)
    return out


def repeat_report(job: "LayerJob", first: "LayerReport", observer: "Observer") -> "LayerReport":
    """The report of ``job``, a repeat of the layer ``first`` reports: its result, winner
    and kernel, nothing measured, stored or taken from the history for it; told to the
    observer.

    >>> import tempfile
    >>> from iobound.layer import ConvLayer
    >>> from search.session import Observer, TuneSettings, plan_layers, run_layer
    >>> a = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1, name="a")
    >>> ja, jb = plan_layers([a, a.replace(name="b")], "v100", TuneSettings(strategy="grid",
    ...                      budget=2), out_dir=tempfile.mkdtemp(), verify=False)
    >>> rep = repeat_report(jb, run_layer(ja), Observer())
    >>> rep.layer.name, rep.same_as, rep.evaluations, rep.result.evaluations
    ('b', 'a', 0, 2)
    """
    report = dataclasses.replace(first, layer=job.layer, seconds=0.0, history=None, export=None,
                                 history_use=None, same_as=first.layer.name)
    observer.finished(report)
    return report
