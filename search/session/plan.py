"""Plan a tuning session: one job per layer (and algorithm), after every check that can be
made before anything runs.

:func:`plan_layers` checks the measure kind, the log, resume and export files (per layer,
or per layer and algorithm for ``algorithm="all"``: :func:`layer_algorithms`), the kernel
files, the history database and the resume logs' layers, and gives one :class:`LayerJob`
each, with its own files. :func:`search.session.run.run_layers` runs them.

Examples
--------
>>> from iobound.networks import get_layer
>>> from search.session import TuneSettings
>>> jobs = plan_layers([get_layer("alexnet.conv2")], "v100", TuneSettings(log="run.jsonl"),
...                    algorithm="all")
>>> [(j.algorithm, j.settings.log) for j in jobs]
[('direct', 'run.alexnet.conv2.direct.jsonl'), ('winograd', 'run.alexnet.conv2.winograd.jsonl')]
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from iobound.errors import InvalidInputError

from ..option_checks import check_flag, check_path, check_records, check_type
from .files import (check_history, check_log_paths, check_outputs, file_part, log_and_resume,
                    per_layer_path)
from .history_use import check_zero_shot_db
from ..measure import CHECKING_MEASURES
from .settings import LAYER_MEASURES, TuneSettings
from .storage import check_export_workloads, layer_cache_meta

if TYPE_CHECKING:  # pragma: no cover
    from iobound.device_spec import Device
    from iobound.layer import ConvLayer

__all__ = ["LayerJob", "ALL_ALGORITHMS", "layer_algorithms", "job_file_parts", "kernel_files",
           "check_resumes", "plan_layers"]


@dataclass(frozen=True)
class LayerJob:
    """One layer to tune: what, where, how, and its own files (see :func:`plan_layers`).

    >>> from iobound.layer import ConvLayer
    >>> from search.session import TuneSettings
    >>> a = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1, name="a")
    >>> jobs = plan_layers([a], "v100", TuneSettings(), algorithm="all", verify=False)
    >>> [(j.algorithm, j.per_algorithm, j.identity()["device"]) for j in jobs]
    [('direct', True, 'V100-SXM2'), ('winograd', True, 'V100-SXM2')]
    """

    layer: "ConvLayer"
    device: "Device"
    algorithm: str
    measure: str
    settings: TuneSettings  # log, resume and export_cache are this layer's
    out_dir: str
    verify: bool  # check the winner with the emulator (never when measuring with it)
    resume_as: str | None = None  # the --resume name of the run (a network's logs are per layer)
    per_algorithm: bool = False  # the files are named per layer and algorithm ("all")

    def identity(self) -> dict:
        """What the job's log header says it tunes, which a resume must match: the layer
        (its dict), the device's name and the algorithm."""
        return {"layer": self.layer.to_dict(), "device": self.device.name,
                "algorithm": self.algorithm}


#: ``algorithm=`` this tunes each layer with every algorithm whose kernel computes it.
ALL_ALGORITHMS = "all"
#: Where the best kernels are written when no folder is given (``iobound tune --out-dir``).
DEFAULT_OUT_DIR = "iobound-kernels"


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
    from iobound.layer import ConvLayer
    from kernels.families import kernel_family
    layers = check_records("layers", layers, ConvLayer)
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
    the layer, or for :data:`ALL_ALGORITHMS` the layer and the algorithm.

    >>> from iobound.layer import ConvLayer
    >>> a = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, name="a")
    >>> job_file_parts([(a, "direct"), (a, "winograd")], ALL_ALGORITHMS)
    [FilePart(name='a.direct'), FilePart(name='a.winograd')]
    >>> job_file_parts([(a, "direct")], "direct")[0] is a
    True
    """
    return [file_part(layer, alg if algorithm == ALL_ALGORITHMS else None) for layer, alg in pairs]


def kernel_files(pairs: Sequence[tuple["ConvLayer", str]], out_dir: str | None) -> list:
    """``(what, path)`` of the best-kernel file each (layer, algorithm) pair's run writes
    into ``out_dir`` at its end (:func:`search.winner.kernel_file`); none without one.
    ``InvalidInputError`` when two layers of different shapes (unnamed ones, say) would
    write one file (layers of one shape share their kernel).

    >>> from iobound.layer import ConvLayer
    >>> a = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, name="a")
    >>> [what for what, _ in kernel_files([(a, "direct"), (a, "winograd")], "out")]
    ["--out-dir's a_direct_best.cu", "--out-dir's a_winograd_best.cu"]
    >>> kernel_files([(a, "direct"), (a.replace(c_out=8), "direct")], "out")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: layers of different shapes would write one kernel file ...
    """
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
                measure: str = "model", algorithm: str = "direct", out_dir: str = DEFAULT_OUT_DIR,
                verify: bool = True) -> list[LayerJob]:
    """One job per layer (per layer and algorithm for ``algorithm="all"``:
    :func:`layer_algorithms`), after checking what can be checked before anything runs.

    With several jobs each has its own log, resume and export files (:func:`per_layer_path`:
    ``run.<layer>.jsonl``, or ``run.<layer>.<algorithm>.jsonl`` for ``"all"``).

    Raises ``InvalidInputError`` for no layers, an unknown ``measure`` or ``algorithm``, a
    ``log`` that exists, a ``resume`` log that does not, or a history database that cannot
    be opened.

    >>> from iobound.layer import ConvLayer
    >>> from search.session import TuneSettings
    >>> a = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, name="a")
    >>> jobs = plan_layers([a, a.replace(name="b")], "a100", TuneSettings(export_cache="c.json"))
    >>> [(j.layer.name, j.settings.export_cache, j.resume_as, j.verify) for j in jobs]
    [('a', 'c.a.json', None, True), ('b', 'c.b.json', None, True)]
    """
    from iobound.device_spec import Device
    from iobound.devices import get_device
    from iobound.layer import ConvLayer
    layers = check_records("layers", layers, ConvLayer)
    if not layers:
        raise InvalidInputError("no layers to tune")
    if measure not in LAYER_MEASURES:
        raise InvalidInputError(f"measure must be one of {', '.join(LAYER_MEASURES)}; got {measure!r}")
    check_type("device", device, (Device, str))
    check_type("algorithm", algorithm, str)
    check_flag("verify", verify)  # 'yes', None or 2 is no answer: refused, not taken as truthy
    check_path("out_dir", out_dir)
    device = get_device(device) if isinstance(device, str) else device
    check_type("settings", settings, TuneSettings)
    pairs = layer_algorithms(layers, algorithm)
    if algorithm == ALL_ALGORITHMS:
        pairs = _with_configurations(pairs, device)
    parts = job_file_parts(pairs, algorithm)
    check_log_paths(settings.log, settings.resume, parts)
    check_outputs(settings, parts, out_dir, kernels=kernel_files(pairs, out_dir))
    check_export_workloads(settings.export_cache, [
        (part, layer_cache_meta(layer, device.name, alg))
        for (layer, alg), part in zip(pairs, parts)])
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
                             verify and measure not in CHECKING_MEASURES, settings.log or settings.resume,
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
    """Refuse, before any space is built, a job's ``resume`` log that a live run still
    writes, or of another layer, device or algorithm
    (:func:`search.resume.check_resume_identity`), and with ``measurer`` of
    another measurer than the job's ``measure`` (the default builders' measurers are named
    by it; the run checks the built measurer's name again in any case).

    >>> import dataclasses, os, tempfile
    >>> from iobound.layer import ConvLayer
    >>> from search.session import TuneSettings, tune_layers
    >>> a = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1, name="a")
    >>> log = os.path.join(tempfile.mkdtemp(), "run.jsonl")
    >>> _ = tune_layers([a], "v100", TuneSettings(strategy="random", budget=2, log=log),
    ...                 out_dir=os.path.dirname(log), verify=False)
    >>> [job] = plan_layers([a], "v100", TuneSettings(resume=log))  # checked: it fits
    >>> check_resumes([dataclasses.replace(job, measure="emulate")], measurer=True)
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: resume log '...run.jsonl' was measured with 'model', not ...
    """
    from ..log_writer import check_not_written
    from ..records import read_log
    from ..resume import check_resume_identity
    for job in jobs:
        if job.settings.resume is None:
            continue
        check_not_written(job.settings.resume)  # a live run's log (the run checks it again)
        check_resume_identity(job.settings.resume, read_log(job.settings.resume).header,
                              job.identity(), job.measure if measurer else None)


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
