"""Tune layers end to end: plan, tune each, report.

:func:`~search.session.plan.plan_layers` checks everything that can be checked before
anything runs and gives one :class:`~search.session.plan.LayerJob` per layer (and
algorithm), with its own log, resume and export paths. :func:`run_layer` tunes one job and reports it: the space and measurer from
:class:`~search.session.settings.Builders`, the tuning loop and its stored outcomes
(:mod:`search.session.loop`), and the winner's bound, kernel file and emulator check. A
job holds only plain values. :func:`run_layers` runs the jobs in turn, or, when they
measure through an executor, several at once over one pool of workers
(:mod:`search.session.parallel`); a layer with an earlier one's shape takes its report
(:mod:`search.session.repeats`). :func:`tune_layers` is the two together; a recorded
Kernel Tuner space is :func:`search.session.replay.tune_replay`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Iterable, Sequence

from ..interrupts import Interrupted, signals_deferred
from .storage import OutputWriteError, kept_where
from .loop import DEFAULT_BUILDERS, KeptRun, observer_and_builders
from .plan import DEFAULT_OUT_DIR, LayerJob, check_resumes, plan_layers
from .repeats import repeat_report, repeats
from .reports import LayerReport
from .settings import Builders, Observer, TuneSettings

if TYPE_CHECKING:  # pragma: no cover
    from iobound.device_spec import Device
    from iobound.layer import ConvLayer

    from ..tune_result import TuneResult

__all__ = ["run_layer", "run_layers", "tune_layers"]


def _winner(job: LayerJob, result: "TuneResult"):
    """The winner's report (kernel file, emulator check); an interrupt (while its module is
    imported too) or a failed write says where the measurements are."""
    if result.best is None:
        return None
    log = job.settings.log or job.settings.resume
    try:
        from ..winner import report_winner  # here: it takes a while (kernels, the emulator)
        return report_winner(job.layer, result.best.config, job.algorithm, job.out_dir, job.verify)
    except KeyboardInterrupt:
        raise Interrupted(len(result.trials), log, resume_as=job.resume_as) from None
    except OSError as exc:
        raise OutputWriteError(f"could not write the kernel into --out-dir {job.out_dir} "
                               f"({exc.strerror or exc}); "
                               f"{kept_where(len(result.trials), log, job.resume_as)}") from None


def run_layer(job: LayerJob, observer: Observer | None = None,
              builders: Builders | None = None, executor_for=None) -> LayerReport:
    """Tune one layer and report it (see module doc); ``executor_for(measurer)``: the
    executor to measure through (default: one made from ``settings.executor``, if any).

    >>> import os, tempfile
    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1, name="c")
    >>> out = tempfile.mkdtemp()
    >>> [job] = plan_layers([layer], "v100", TuneSettings(strategy="random", budget=3),
    ...                     algorithm="winograd", out_dir=out, verify=False)
    >>> rep = run_layer(job)
    >>> rep.algorithm, rep.evaluations, os.listdir(out)
    ('winograd', 3, ['c_winograd_best.cu'])
    """
    observer, builders = observer_and_builders(observer, builders)
    layer, settings = job.layer, job.settings
    space = builders.space(layer, job.device, job.algorithm)
    identity = job.identity()
    header = {"layer": identity["layer"], "layer_name": layer.name, **identity}
    with KeptRun(settings, job.resume_as) as run:
        with builders.measurer(job.measure, layer, job.device, job.algorithm) as measurer:
            observer.layer_started(job, space)
            result, seconds, history_use, history, export = run.store(
                space, measurer, settings, header, observer, builders, identity["layer"],
                executor_for, job.resume_as)
        winner = _winner(job, result)
        report = LayerReport(layer=layer, device=job.device.name, algorithm=job.algorithm,
                             measure=job.measure, space_size=len(space),
                             unpruned_size=getattr(space, "unpruned_size", len(space)),
                             result=result, seconds=seconds, winner=winner, history=history,
                             export=export, history_use=history_use)
        observer.finished(report)
    return report


def _into_new_logs(jobs: list[LayerJob]) -> list[LayerJob]:
    """Several layers resumed into new logs (``--resume old --log new``): every layer's old
    log copied into its new one before any layer runs, which then continues the new one.
    Copied when each layer starts instead, an interrupt would leave the layers not reached
    with their records only in the old logs, which ``--resume new`` does not read: they
    would be measured again. A signal meanwhile waits for the copies."""
    from ..records import has_log, read_log
    from ..log_writer import LogWriter, copy_entries, copy_log
    todo = [k for k, job in enumerate(jobs)
            if len(jobs) > 1 and job.settings.log and job.settings.resume
            and job.settings.log != job.settings.resume and not has_log(job.settings.log)]
    copied = 0
    with signals_deferred() as deferred:
        for k in todo:
            settings = jobs[k].settings
            header = read_log(settings.resume).header
            done = copy_log(settings.resume, settings.log, header)
            if done is None:  # no regular file, or no room beside it: into its writer
                with LogWriter(settings.log, header) as writer:
                    done = copy_entries(writer, settings.resume)
            copied += done
            jobs[k] = dataclasses.replace(
                jobs[k], settings=dataclasses.replace(settings, resume=settings.log))
    if deferred.signal is not None:  # every log copied: run_layers counts what they hold
        import signal
        raise KeyboardInterrupt(signal.Signals(deferred.signal).name)
    return jobs


def run_layers(jobs: Iterable[LayerJob], observer: Observer | None = None,
               builders: Builders | None = None) -> list[LayerReport]:
    """Run the jobs; the reports in the jobs' order.

    A job whose layer has the shape of an earlier one (:func:`repeats`) is not run
    unless ``settings.tune_repeats``: its report takes that layer's
    (:func:`repeat_report`, ``same_as`` names it). Several jobs measured through an
    executor (``settings.executor``) share one pool of workers and run
    ``parallel_layers`` at a time (:func:`~search.session.parallel.run_layers_parallel`);
    otherwise one after another. An interrupt in a run of several layers is one
    :class:`~search.interrupts.Interrupted` counting every layer's measurements (each
    layer is stored as it ends).

    >>> import tempfile
    >>> from iobound.layer import ConvLayer
    >>> a = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1, name="a")
    >>> jobs = plan_layers([a, a.replace(name="b"), a.replace(name="c", c_out=8)], "v100",
    ...                    TuneSettings(strategy="random", budget=2), out_dir=tempfile.mkdtemp(),
    ...                    verify=False)
    >>> [(r.layer.name, r.evaluations, r.same_as) for r in run_layers(jobs)]  # b repeats a
    [('a', 2, None), ('b', 0, 'a'), ('c', 2, None)]
    """
    jobs = list(jobs)
    observer, builders = observer_and_builders(observer, builders)
    # another measurer's --resume log refused before anything runs, also through the API
    # (the CLI does it when it plans): not after earlier layers ran and the logs were copied
    check_resumes(jobs, measurer=builders.measurer is DEFAULT_BUILDERS.measurer)
    reports: list[LayerReport] = []
    at_once = False  # an interrupt of the layers run at once says already what every log keeps
    try:
        jobs = _into_new_logs(jobs)  # in here: a signal as it returns still counts the copies
        origin = [None] * len(jobs) if jobs and jobs[0].settings.tune_repeats else repeats(jobs)
        distinct = [job for job, o in zip(jobs, origin) if o is None]
        ran = None  # the distinct layers' reports when they ran at once, in their order
        if len(distinct) > 1 and distinct[0].settings.executor is not None:
            from .parallel import run_layers_parallel
            at_once = True
            ran = iter(run_layers_parallel(distinct, observer, run_layer, builders))
            at_once = False
        for job, o in zip(jobs, origin):
            if o is not None:
                reports.append(repeat_report(job, reports[o], observer))
            else:
                reports.append(next(ran) if ran is not None else run_layer(job, observer, builders))
    except KeyboardInterrupt as exc:  # one line for the run: every layer's measurements
        # Interrupted: it says already what every log keeps; a plain one of the layers run
        # at once came before any layer started (while the pool started its workers)
        if isinstance(exc, Interrupted) and (at_once or len(jobs) == 1):
            raise
        from .parallel import interrupted_run
        run = interrupted_run(jobs, reports, {len(reports): exc})
        if not isinstance(exc, Interrupted) and not run.measurements:
            raise  # nothing kept: no log to resume
        raise run from None
    return reports


def tune_layers(layers: Sequence["ConvLayer"], device: "Device | str",
                settings: TuneSettings | None = None, *, measure: str = "model",
                algorithm: str = "direct", out_dir: str = DEFAULT_OUT_DIR, verify: bool = True,
                observer: Observer | None = None, builders: Builders | None = None) -> list[LayerReport]:
    """Tune each layer's kernel on ``device``: :func:`plan_layers` then :func:`run_layers`.

    Parameters
    ----------
    layers : sequence of ConvLayer
        The layers (distinct names when per-layer files are written).
    device : Device or str
        The device (or its preset name) whose limits shape the space.
    settings : TuneSettings, optional
        Strategy, budget, seed and the run's files (default ``TuneSettings()``). With
        ``settings.executor`` several layers are tuned at once over one pool of workers
        (``ExecutorOptions.parallel_layers`` of them; :mod:`search.session.parallel`).
        Local workers import the main module, so a script that runs this with an executor
        keeps its code under ``if __name__ == "__main__":``. With ``settings.history``
        the database is read too: the strategies that learn from history use its records.
    measure : {"model", "emulate", "cuda"}
        How configurations are measured.
    algorithm : {"direct", "winograd", "all"}
        The kernel template; ``"all"``: each layer with every template that computes it
        (Winograd on ungrouped stride-1 layers with a square kernel of 2x2 or more) and has
        a configuration there, one report each (:func:`search.session.choice.choose_algorithms`
        picks the fastest).
    out_dir : str
        Where each winner's ``.cu`` is written.
    verify : bool
        Check each winner with the CPU emulator on a reduced copy of its layer (not with
        ``measure="emulate"``, whose measurements are that check already).
    observer : Observer, optional
        Told as the session goes (progress, reports).
    builders : Builders, optional
        The functions that build the space, measurer and strategy.

    Examples
    --------
    >>> import tempfile
    >>> from iobound.networks import network_layers
    >>> from search.executors import ExecutorOptions
    >>> at_once = ExecutorOptions(workers=2, parallel_layers=2)  # 2 layers, one pool of 2 workers
    >>> reports = tune_layers(network_layers("alexnet")[3:5], "v100",
    ...                       TuneSettings(strategy="random", budget=4, executor=at_once),
    ...                       out_dir=tempfile.mkdtemp(), verify=False)
    >>> [r.result.evaluations for r in reports]
    [4, 4]
    """
    jobs = plan_layers(layers, device, TuneSettings() if settings is None else settings, measure=measure,
                       algorithm=algorithm, out_dir=out_dir, verify=verify)
    return run_layers(jobs, observer, builders)
