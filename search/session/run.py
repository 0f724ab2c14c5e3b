"""Tune layers end to end: plan, tune each, report.

:func:`plan_layers` checks everything that can be checked before anything runs
(measure kind, log and resume files, the history database) and gives one
:class:`LayerJob` per layer, with its own log, resume and export paths.
:func:`run_layer` tunes one job and reports it: the space and measurer from
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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence

from iobound.errors import InvalidInputError

from ..interrupts import Interrupted, signals_deferred
from ..option_checks import check_records, check_type
from .files import (OutputWriteError, check_history, check_log_paths, check_outputs, file_part,
                    kept_where, log_and_resume, per_layer_path)
from .history_use import check_zero_shot_db
from .loop import DEFAULT_BUILDERS, NO_OBSERVER, tune_and_store
from .repeats import repeat_report, repeats
from .reports import LayerReport
from .settings import LAYER_MEASURES, Builders, Observer, TuneSettings

if TYPE_CHECKING:  # pragma: no cover
    from iobound.devices import Device
    from iobound.layer import ConvLayer

    from ..tune_result import TuneResult

__all__ = ["LayerJob", "ALL_ALGORITHMS", "layer_algorithms", "job_file_parts", "check_resumes",
           "plan_layers", "run_layer", "run_layers", "tune_layers"]


@dataclass(frozen=True)
class LayerJob:
    """One layer to tune: what, where, how, and its own files (see :func:`plan_layers`)."""

    layer: "ConvLayer"
    device: "Device"
    algorithm: str
    measure: str
    settings: TuneSettings  # log, resume and export_cache are this layer's
    out_dir: str
    verify: bool  # check the winner with the emulator (never when measuring with it)
    resume_as: str | None = None  # the --resume name of the run (a network's logs are per layer)
    per_algorithm: bool = False  # the files are named per layer and algorithm ("all")


#: ``algorithm=`` this tunes each layer with every algorithm whose kernel computes it.
ALL_ALGORITHMS = "all"


def layer_algorithms(layers: Sequence["ConvLayer"], algorithm: str) -> list[tuple["ConvLayer", str]]:
    """The (layer, algorithm) pairs to tune: ``algorithm`` for each layer, or, for
    :data:`ALL_ALGORITHMS`, every algorithm whose kernel computes the layer and that
    ``iobound select`` offers for it (:func:`search.selection.dataset.candidates`: no
    Winograd on a 1x1 kernel), in the registry's order (direct first), layer by layer.

    >>> from iobound.networks import get_layer
    >>> [a for _, a in layer_algorithms([get_layer("alexnet.conv2")], "all")]
    ['direct', 'winograd']
    >>> [a for _, a in layer_algorithms([get_layer("alexnet.conv1")], "all")]  # stride 4
    ['direct']
    """
    from iobound.algorithms import ALGORITHMS, get_algorithm
    from kernels.families import kernel_family
    if algorithm != ALL_ALGORITHMS:
        if algorithm not in ALGORITHMS:  # name "all" among the choices too
            raise InvalidInputError(f"unknown algorithm {algorithm!r}; choose one of "
                                    + ", ".join((*ALGORITHMS, ALL_ALGORITHMS)))
        return [(layer, algorithm) for layer in layers]
    from ..selection.dataset import candidates
    pairs = []
    for layer in layers:
        # as ``iobound select`` offers them (no Winograd on a 1x1 kernel, where it saves
        # nothing): ``select --history`` reads the run to the same choice
        offered = {c.algorithm for c in candidates(layer)}
        algs = [a for a in ALGORITHMS if a in offered
                and kernel_family(get_algorithm(a)).problem(layer) is None]
        if not algs:
            raise InvalidInputError(f"no kernel computes layer {layer.name or layer.short()}")
        pairs += [(layer, a) for a in algs]
    return pairs


def job_file_parts(pairs: Sequence[tuple["ConvLayer", str]], algorithm: str) -> list:
    """What names each (layer, algorithm) pair's files (:func:`~search.session.files.file_part`):
    the layer, or for :data:`ALL_ALGORITHMS` the layer and the algorithm."""
    return [file_part(layer, alg if algorithm == ALL_ALGORITHMS else None) for layer, alg in pairs]


def kernel_files(pairs: Sequence[tuple["ConvLayer", str]], out_dir: str | None) -> list:
    """``(what, path)`` of the best-kernel file each (layer, algorithm) pair's run writes
    into ``out_dir`` at its end (:func:`search.winner.kernel_file`); none without one.
    ``InvalidInputError`` when two layers of different shapes (unnamed ones, say) would
    write one file (layers of one shape share their kernel)."""
    if out_dir is None or not str(out_dir).strip():
        return []
    from ..winner import kernel_file
    files = [(f"--out-dir's {kernel_file(layer, alg, out_dir).name}", kernel_file(layer, alg, out_dir))
             for layer, alg in pairs]
    shapes: dict = {}
    for (what, path), (layer, alg) in zip(files, pairs):
        shapes.setdefault(path, set()).add((layer, alg))  # a layer's equality is its shape
        if len(shapes[path]) > 1:  # the second kernel would overwrite the first's
            raise InvalidInputError(f"layers of different shapes would write one kernel file "
                                    f"{str(path)!r}: give the layers distinct names")
    return files


def plan_layers(layers: Sequence["ConvLayer"], device: "Device | str", settings: TuneSettings, *,
                measure: str = "model", algorithm: str = "direct", out_dir: str = "iobound-kernels",
                verify: bool = True) -> list[LayerJob]:
    """One job per layer (per layer and algorithm for ``algorithm="all"``:
    :func:`layer_algorithms`), after checking what can be checked before anything runs.

    With several jobs each has its own log, resume and export files (:func:`per_layer_path`:
    ``run.<layer>.jsonl``, or ``run.<layer>.<algorithm>.jsonl`` for ``"all"``).

    Raises ``InvalidInputError`` for no layers, an unknown ``measure`` or ``algorithm``, a
    ``log`` that exists, a ``resume`` log that does not, or a history database that cannot
    be opened.
    """
    from iobound.devices import Device, get_device
    from iobound.layer import ConvLayer
    layers = check_records("layers", layers, ConvLayer)
    if not layers:
        raise InvalidInputError("no layers to tune")
    if measure not in LAYER_MEASURES:
        raise InvalidInputError(f"measure must be one of {', '.join(LAYER_MEASURES)}; got {measure!r}")
    check_type("device", device, (Device, str))
    check_type("algorithm", algorithm, str)
    device = get_device(device) if isinstance(device, str) else device
    check_type("settings", settings, TuneSettings)
    pairs = layer_algorithms(layers, algorithm)
    if algorithm == ALL_ALGORITHMS:
        pairs = _with_configurations(pairs, device)
    parts = job_file_parts(pairs, algorithm)
    check_log_paths(settings.log, settings.resume, parts)
    check_outputs(settings, parts, out_dir, kernels=kernel_files(pairs, out_dir))
    check_zero_shot_db(settings)
    check_history(settings.history)
    many = len(pairs) > 1
    jobs = []
    for (layer, alg), part in zip(pairs, parts):
        log, resume = (per_layer_path(p, part, many) for p in (settings.log, settings.resume))
        log, resume = log_and_resume(log, resume)
        own = dataclasses.replace(settings, log=log, resume=resume,
                                  export_cache=per_layer_path(settings.export_cache, part, many))
        jobs.append(LayerJob(layer, device, alg, measure, own, out_dir,
                             verify and measure != "emulate", settings.log or settings.resume,
                             algorithm == ALL_ALGORITHMS))
    check_resumes(jobs)
    if algorithm == ALL_ALGORITHMS:
        _check_zero_shot_spaces(jobs)
    return jobs


def _with_configurations(pairs: Sequence[tuple["ConvLayer", str]], device) -> list:
    """``algorithm="all"``: the pairs without an algorithm, after a layer's first, none of
    whose configurations fits the layer on ``device`` (its Table 1 pruned space is empty,
    e.g. Winograd of an 11x11 kernel): ``iobound select`` gives it no time either, and its
    run would be refused after the layer's other algorithms were measured. (A layer's
    first algorithm, direct, runs first: an empty space of it is refused before anything
    is measured, as with ``algorithm="direct"``.) One space per layer shape."""
    from .settings import default_space
    fits: dict = {}
    kept, first = [], None
    for layer, alg in pairs:
        if first is None or first[0] is not layer or first[1] == alg:
            first = (layer, alg)  # a layer's pairs come one after another, its first first
            kept.append((layer, alg))
            continue
        if (layer, alg) not in fits:  # a layer's equality is its shape
            try:
                default_space(layer, device, alg)
                fits[layer, alg] = True
            except InvalidInputError:
                fits[layer, alg] = False
        if fits[layer, alg]:
            kept.append((layer, alg))
    return kept


def check_resumes(jobs: Sequence[LayerJob], measurer: bool = False) -> None:
    """Refuse, before any space is built, a job's ``resume`` log of another layer, device
    or algorithm (:func:`search.resume.check_resume_identity`), and with ``measurer`` of
    another measurer than the job's ``measure`` (the default builders' measurers are named
    by it; the run checks the built measurer's name again in any case)."""
    from ..records import read_log
    from ..resume import check_resume_identity
    for job in jobs:
        if job.settings.resume is None:
            continue
        check_resume_identity(job.settings.resume, read_log(job.settings.resume).header,
                              {"layer": job.layer.to_dict(), "device": job.device.name,
                               "algorithm": job.algorithm}, job.measure if measurer else None)


def _check_zero_shot_spaces(jobs: Sequence[LayerJob]) -> None:
    """Zero-shot tuning of several algorithms: refuse, before anything runs, an algorithm
    whose space the history holds nothing to rank with (its layers would be refused one by
    one, after the others were measured and stored). One layer per algorithm: whether a
    record ranks a layer's space depends on the space's parameters only."""
    from .history_use import history_options
    from .settings import default_space
    if not jobs or jobs[0].settings.strategy != "zero_shot":
        return
    first = {}
    for job in jobs:
        first.setdefault(job.algorithm, job)
    for alg, job in first.items():
        space = default_space(job.layer, job.device, alg)
        try:
            history_options(job.settings, space, job.layer.to_dict())
        except InvalidInputError as exc:
            raise InvalidInputError(f"{alg}: {exc}") from None


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
    executor to measure through (default: one made from ``settings.executor``, if any)."""
    observer = observer or NO_OBSERVER
    builders = builders or DEFAULT_BUILDERS
    layer, settings = job.layer, job.settings
    space = builders.space(layer, job.device, job.algorithm)
    header = {"layer": layer.to_dict(), "layer_name": layer.name, "device": job.device.name,
              "algorithm": job.algorithm}
    done = None  # (result, seconds, history use, history, export) once stored
    try:
        with builders.measurer(job.measure, layer, job.device, job.algorithm) as measurer:
            observer.layer_started(job, space)
            with signals_deferred() as late:  # a signal after the loop waits for the writes
                done = tune_and_store(space, measurer, settings, header, observer, builders,
                                      layer.to_dict(), executor_for, job.resume_as)
            if late.signal is not None:
                raise KeyboardInterrupt
        result, seconds, history_use, history, export = done
        winner = _winner(job, result)
        report = LayerReport(layer=layer, device=job.device.name, algorithm=job.algorithm,
                             measure=job.measure, space_size=len(space),
                             unpruned_size=getattr(space, "unpruned_size", len(space)),
                             result=result, seconds=seconds, winner=winner, history=history,
                             export=export, history_use=history_use)
        observer.finished(report)
    except KeyboardInterrupt as exc:  # once stored (the kernel, the report): counts as kept
        if isinstance(exc, Interrupted) or done is None:
            raise
        raise Interrupted(len(done[0].trials), settings.log or settings.resume,
                          resume_as=job.resume_as) from None
    return report


def _into_new_logs(jobs: list[LayerJob]) -> list[LayerJob]:
    """Several layers resumed into new logs (``--resume old --log new``): every layer's old
    log copied into its new one before any layer runs, which then continues the new one.
    Copied when each layer starts instead, an interrupt would leave the layers not reached
    with their records only in the old logs, which ``--resume new`` does not read: they
    would be measured again. A signal meanwhile waits for the copies."""
    import os

    from ..interrupts import signals_deferred
    from ..records import LogWriter, copy_entries, has_log, read_log
    todo = [k for k, job in enumerate(jobs)
            if len(jobs) > 1 and job.settings.log and job.settings.resume
            and job.settings.log != job.settings.resume and not has_log(job.settings.log)]
    copied = 0
    with signals_deferred() as deferred:
        for k in todo:
            settings = jobs[k].settings
            tmp = f"{settings.log}.{os.getpid()}.copy"
            with LogWriter(tmp, read_log(settings.resume).header) as writer:
                copied += copy_entries(writer, settings.resume)
            os.replace(tmp, settings.log)
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
    """
    jobs = list(jobs)
    observer = observer or NO_OBSERVER
    # another measurer's --resume log refused before anything runs, also through the API
    # (the CLI does it when it plans): not after earlier layers ran and the logs were copied
    check_resumes(jobs, measurer=(builders or DEFAULT_BUILDERS).measurer
                  is DEFAULT_BUILDERS.measurer)
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
        if at_once or (len(jobs) == 1 and isinstance(exc, Interrupted)):
            raise
        from .parallel import interrupted_run
        run = interrupted_run(jobs, reports, {len(reports): exc})
        if not isinstance(exc, Interrupted) and not run.measurements:
            raise  # nothing kept: no log to resume
        raise run from None
    return reports


def tune_layers(layers: Sequence["ConvLayer"], device: "Device | str",
                settings: TuneSettings | None = None, *, measure: str = "model",
                algorithm: str = "direct", out_dir: str = "iobound-kernels", verify: bool = True,
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
    measure : {"model", "emulate", "cuda"}
        How configurations are measured.
    algorithm : {"direct", "winograd", "all"}
        The kernel template; ``"all"``: each layer with every template that computes it,
        one report each (:func:`search.session.choice.choose_algorithms` picks the fastest).
    out_dir : str
        Where each winner's ``.cu`` is written.
    verify : bool
        Check each winner with the CPU emulator on a reduced copy of its layer.
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
