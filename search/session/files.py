"""The files around a tuning session: per-layer log names, resume, history and export.

- One log (and exported cache) per layer when several layers are tuned:
  ``run.jsonl`` becomes ``run.<layer name>.jsonl`` (:func:`per_layer_path`), and
  ``run.<layer name>.<algorithm>.jsonl`` when each layer is tuned with every algorithm
  (:func:`file_part`).
- ``log`` must be new and ``resume`` must exist before anything runs
  (:func:`check_log_paths`); a network run killed before a layer has no log for it,
  so that layer starts afresh, logging to the resume name (:func:`log_and_resume`).
- One way to key measurements in the history database and to describe them in an
  exported Kernel Tuner cache, whatever the space (:func:`history_key`, :func:`cache_meta`).

Examples
--------
>>> from iobound.networks import get_layer
>>> per_layer_path("net.jsonl", get_layer("alexnet.conv2"), many=True)
'net.alexnet.conv2.jsonl'
>>> per_layer_path("net.jsonl", file_part(get_layer("alexnet.conv2"), "winograd"), many=True)
'net.alexnet.conv2.winograd.jsonl'
>>> log_and_resume("new.jsonl", "/no/such/old.jsonl")  # nothing to resume: start afresh
('new.jsonl', None)
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Sequence

from iobound.errors import InvalidInputError, IoboundError, OutputWriteError
from iobound.wording import counted

from ..file_names import layer_file_part
from ..option_checks import check_path, check_type
from ..outputs import check_distinct_files, check_not_tuning_data, check_output_dir, check_output_file
from ..path_kind import same_file
from ..records import database_not_log, has_log, log_exists_error, read_log
from ..times import as_time
from .reports import ExportOutcome, HistoryOutcome

if TYPE_CHECKING:  # pragma: no cover
    from iobound.layer import ConvLayer

    from ..history import HistoryKey
    from ..measure.base import Measurer
    from ..space import Space
    from ..tune_result import TuneResult
    from .settings import TuneSettings

__all__ = ["per_layer_path", "FilePart", "file_part", "logged_count", "has_log", "continues_in_place", "check_log_paths", "check_outputs", "log_and_resume",
           "check_history", "history_key", "cache_meta", "store_history", "export_cache",
           "write_outcomes", "OutputWriteError", "kept_where"]


class FilePart(NamedTuple):
    """What names one job's files when a run tunes a layer with several algorithms:
    ``<layer name>.<algorithm>`` (a layer names its own files by its name).

    >>> per_layer_path("run.jsonl", FilePart("conv1.direct"), many=False)  # named even alone
    'run.conv1.direct.jsonl'
    """

    name: str


def file_part(layer: "ConvLayer", algorithm: str | None = None) -> "ConvLayer | FilePart":
    """What names the files of ``layer`` tuned with ``algorithm``: the layer itself, or,
    given an algorithm, ``<layer name>.<algorithm>`` (:class:`FilePart`).

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, name="c1")
    >>> file_part(layer) is layer, file_part(layer, "winograd")
    (True, FilePart(name='c1.winograd'))
    """
    if algorithm is None:
        return layer
    return FilePart(f"{layer.name or 'layer'}.{algorithm}")


def per_layer_path(path: str | None, layer: "ConvLayer | FilePart | None",
                   many: bool) -> str | None:
    """``path`` itself for one layer; ``<stem>.<layer name><suffix>`` for several
    (``layer``: a layer, or the :func:`file_part` of a layer and an algorithm, which
    names its own files however many there are). A gzip name keeps its two endings
    together (``c.json.gz`` -> ``c.<layer>.json.gz``): a folder import and the cache
    reader know a cache by them.

    >>> per_layer_path("c.json.gz", FilePart("conv1"), many=True)
    'c.conv1.json.gz'
    """
    if path is None or not (many or isinstance(layer, FilePart)):
        return path
    path = check_path("path", path)
    from iobound.layer import ConvLayer
    check_type("layer", layer, (ConvLayer, FilePart))
    p = Path(path)
    if not p.name:  # "", "/", "..": no file to put the layer's name in
        raise InvalidInputError(f"path {path!r} names no file to write per layer")
    stem, suffix = p.stem, p.suffix or ".jsonl"
    if suffix == ".gz" and Path(stem).suffix:
        stem, suffix = Path(stem).stem, Path(stem).suffix + suffix
    return str(p.with_name(f"{stem}.{layer_file_part(layer)}{suffix}"))


def logged_count(settings: "TuneSettings | None") -> int:
    """How many records the log of ``settings`` (its ``log``, else its ``resume``) holds:
    what a run stopped before its loop keeps (a resumed run's, a copied log's); 0 without
    a readable log.

    >>> from search.session.settings import TuneSettings
    >>> logged_count(None), logged_count(TuneSettings(log="/no/such/run.jsonl"))
    (0, 0)
    """
    path = settings.log or settings.resume if settings is not None else None
    if not path or not has_log(path):
        return 0
    try:
        return len(read_log(path).entries)
    except IoboundError:  # not a log we can read: it keeps nothing we can count
        return 0


def continues_in_place(log: str | None, resume: str | None) -> bool:
    """Whether ``--log`` names the ``--resume`` log itself, however spelt (``./``, a link):
    the run continues that log rather than copying it into a new one.

    >>> continues_in_place("run.jsonl", "./run.jsonl"), continues_in_place("a.jsonl", "b.jsonl")
    (True, False)
    """
    if not log or not resume:
        return False
    return log == resume or os.path.realpath(log) == os.path.realpath(resume) or same_file(log, resume)


def check_log_paths(log: str | None, resume: str | None, layers: Sequence) -> None:
    """``InvalidInputError`` unless ``log`` is new and ``resume`` exists (per layer, or per
    :func:`file_part`, for several:
    a network killed mid-way has no logs for the layers it did not reach, which start
    afresh, so one layer's log is enough).

    >>> from iobound.layer import ConvLayer
    >>> check_log_paths("new.jsonl", "/no/such/old.jsonl",
    ...                 [ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1)])
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --resume: no log '/no/such/old.jsonl': missing, empty ...
    """
    many = len(layers) > 1
    if resume:
        if os.path.isdir(resume):  # not "missing, empty or cut" (below): it is no file at all
            raise InvalidInputError(f"--resume {resume[:80]!r} is a folder; give the log of a run "
                                    "(--log FILE)")
        paths = [per_layer_path(resume, layer, many) for layer in layers]
        if not any(has_log(p) for p in paths):
            per_layer = (f" (one per layer, e.g. {paths[0]!r})" if many
                         else f" (read as {paths[0]!r}: one per algorithm)"
                         if paths[0] != resume else "")
            raise InvalidInputError(f"--resume: no log {resume!r}{per_layer}: missing, empty or "
                                    "cut before its header was written (start it with --log)")
        from ..db.merge import is_sqlite
        for p in paths:
            if has_log(p) and os.path.isfile(p) and is_sqlite(p):
                raise InvalidInputError(f"--resume {database_not_log(p)}")
        if many and len(set(paths)) < len(paths):
            raise InvalidInputError("layers need distinct names for their per-layer logs")
    if log and not continues_in_place(log, resume):
        paths = [per_layer_path(log, layer, many) for layer in layers]
        if many and len(set(paths)) < len(paths):
            raise InvalidInputError("layers need distinct names for their per-layer logs")
        for p in paths:
            if has_log(p):
                raise log_exists_error(p, "--log", "--resume")


def check_outputs(settings: "TuneSettings", layers: Sequence, out_dir: str | None = None,
                  inputs: Sequence[tuple[str, str | None]] = (),
                  kernels: Sequence[tuple[str, str | os.PathLike]] = ()) -> None:
    """Refuse, before anything runs, a ``--log``, ``--export-cache`` (per layer, or per
    :func:`file_part` of ``layers``, for several),
    ``--history`` or ``--out-dir`` that cannot be written (:mod:`search.outputs`); an empty
    path given for any of them is refused too, not ignored. One file named by two of them,
    by ``--resume`` (other than as the ``--log`` it continues) or by one of ``inputs``
    (``(what, path)`` pairs, e.g. the replayed file) or by one of ``kernels`` (the same
    pairs: the best-kernel files the run writes into ``out_dir`` at its end) is refused:
    each write would destroy what another keeps.

    >>> import os, tempfile
    >>> from iobound.layer import ConvLayer
    >>> from search.session.settings import TuneSettings
    >>> same = os.path.join(tempfile.mkdtemp(), "run.jsonl")
    >>> check_outputs(TuneSettings(log=same, history=same),
    ...               [ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1)])
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --log '...run.jsonl' is also given as --history; ...
    """
    many = len(layers) > 1
    log = None if continues_in_place(settings.log, settings.resume) else settings.log
    check_distinct_files([*inputs, ("--history", settings.history)] + [
        (flag, per_layer_path(path, layer, many))
        for flag, path in (("--resume", settings.resume), ("--log", log),
                           ("--export-cache", settings.export_cache)) if path
        for layer in layers] + list(kernels))
    if settings.history is not None:
        check_output_file("--history", settings.history)
    for flag, path in (("--log", log), ("--export-cache", settings.export_cache)):
        if path is not None:
            for layer in layers:
                check_output_file(flag, per_layer_path(path, layer, many) if path else path)
    if settings.export_cache:
        for layer in layers:
            check_not_tuning_data("--export-cache",
                                  per_layer_path(settings.export_cache, layer, many),
                                  cache_export=True)
    if out_dir is not None:
        check_output_dir("--out-dir", out_dir)
    for what, path in kernels:  # found at the end of the run, these lost its kernels
        if os.path.isdir(path):
            raise InvalidInputError(f"{what} {str(path)[:80]!r} is a folder, where the run writes "
                                    "its best kernel: remove it or give another --out-dir")
        check_not_tuning_data(what, path)


def log_and_resume(log: str | None, resume: str | None) -> tuple[str | None, str | None]:
    """The (log, resume) a layer runs with: without a log to resume (a network run killed
    before this layer), nothing is resumed and the log starts afresh (at ``resume``'s
    name unless ``log`` is given).

    >>> log_and_resume(None, "/no/such/run.alexnet.conv4.jsonl")  # logs to the resume name
    ('/no/such/run.alexnet.conv4.jsonl', None)
    """
    if resume is not None and not has_log(resume):
        return log or resume, None
    return log, resume


def check_history(path: str | None) -> None:
    """``InvalidInputError`` when the history database at ``path`` cannot be opened, or,
    when there is no such file, cannot be written where it would be. A missing database
    is not created here: the run creates it when it stores its records, so a run refused
    before then (another run's ``--resume`` log, say) leaves no file behind.

    >>> import os, tempfile
    >>> tmp = tempfile.mkdtemp()
    >>> check_history(os.path.join(tmp, "tuning.db")), os.listdir(tmp)  # not created here
    (None, [])
    """
    if not path:
        return
    from ..db.opening import check_new_database_name, open_database
    check_new_database_name(path, "--history")
    if not os.path.exists(path):
        check_output_file("--history", path)
        from ..db.db_file import side_files_fault
        fault = side_files_fault(path)  # else refused only at the end, storing nothing
        if fault:
            raise InvalidInputError(f"--history {str(path)[:80]!r}: {fault}")
        return
    open_database(path, "--history", readonly=False).close()  # migrated now, if old


def kept_where(measurements: int, log: str | None, resume_as: str | None = None) -> str:
    """Where a run's measurements are, for a message about a write that failed, and the
    ``--resume`` that continues it (``resume_as``: a network's run name, whose per-layer
    logs ``log`` is one of; default ``log``).

    >>> kept_where(5, "run.jsonl")
    'the 5 measurements are kept in run.jsonl (resume with --resume run.jsonl)'
    >>> kept_where(5, "run.alexnet.conv1.jsonl", "run.jsonl")
    'the 5 measurements are kept in run.alexnet.conv1.jsonl (resume with --resume run.jsonl)'
    """
    held = counted(measurements, "measurement")
    if log is None:
        return f"the {held} were not logged (no --log)"
    return (f"the {held} are kept in {log} (resume with --resume "
            f"{resume_as or log})")


def _reason(exc: Exception) -> str:
    return (getattr(exc, "strerror", None) or getattr(exc, "reason", None) or str(exc)
            or type(exc).__name__)


def write_outcomes(settings: "TuneSettings", result: "TuneResult", space: "Space",
                   measurer: "Measurer") -> tuple[HistoryOutcome | None, ExportOutcome | None, str | None]:
    """Store the history and write the export, each if asked; a write that fails (disk
    full, a place gone read-only) does not stop the other: (history, export, what failed).

    >>> import os, tempfile
    >>> from iobound.layer import ConvLayer
    >>> from search.session.settings import TuneSettings, default_measurer, default_space
    >>> from search.tuner import tune
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> space = default_space(layer, "v100", "direct")
    >>> m = default_measurer("model", layer, "v100", "direct")
    >>> result = tune(space, m, "random", budget=3, seed=0)
    >>> settings = TuneSettings(export_cache=os.path.join(tempfile.mkdtemp(), "cache.json"))
    >>> history, export, failed = write_outcomes(settings, result, space, m)
    >>> history, export.entries, failed  # no --history asked for
    (None, 3, None)
    """
    history = export = None
    failed = []
    if settings.history:
        try:
            history = store_history(settings.history, result, space, measurer)
        except (OSError, sqlite3.Error, InvalidInputError) as exc:  # the file gone bad, or
            # records it refuses (a recorded problem size holding NaN)
            failed.append(f"--history {settings.history} ({_reason(exc)})")
    if settings.export_cache:
        try:
            export = export_cache(settings.export_cache, result, space, measurer.toolchain())
        except (OSError, InvalidInputError, OutputWriteError) as exc:  # at the end of a run
            # no write is bad input: the measurements are in the log
            failed.append(f"--export-cache {settings.export_cache} ({_reason(exc)})")
    return history, export, ", ".join(failed) or None


def history_key(space: "Space", measurer: "Measurer") -> "HistoryKey":
    """The key measurements of ``space`` by ``measurer`` are stored under.

    A layer's space: the layer's canonical JSON and the device name; a recorded
    space: ``replay:<kernel>:<problem size as JSON>`` (:func:`~search.db.layer_keys.replay_layer_key`:
    the workload ``history import`` makes of the same file, whatever the kernel name
    holds) and the file's device.

    >>> import json
    >>> from iobound.layer import ConvLayer
    >>> from search.session.settings import default_measurer, default_space
    >>> pw = ConvLayer(n=1, c_in=8, h_in=6, w_in=6, c_out=8, k_h=1, k_w=1)
    >>> key = history_key(default_space(pw, "a100", "direct"),
    ...                   default_measurer("model", pw, "a100", "direct"))
    >>> key.device, key.toolchain.startswith("analytic model"), json.loads(key.layer)["c_in"]
    ('A100-SXM4-40GB', True, 8)
    """
    from ..db.layer_keys import conv_layer_key, replay_layer_key
    from ..history import HistoryKey
    from ..replay_space import ReplaySpace
    if isinstance(space, ReplaySpace):
        c = space.cache
        layer, device = replay_layer_key(c.kernel_name, c.problem_size), c.device
    elif hasattr(space, "layer") and hasattr(space, "device"):
        layer, device = conv_layer_key(space.layer.to_dict()), space.device.name
    else:
        raise InvalidInputError(f"no history key for a {type(space).__name__}: it has no layer or recorded file")
    return HistoryKey(layer=layer, device=device, toolchain=measurer.toolchain())


def cache_meta(space: "Space") -> dict:
    """``device_name``, ``kernel_name`` and ``problem_size`` of an exported cache of ``space``.

    >>> from iobound.layer import ConvLayer
    >>> from search.conv_space import ConvSpace
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> meta = cache_meta(ConvSpace(layer, "v100", "winograd"))
    >>> meta["device_name"], meta["kernel_name"], meta["problem_size"] == layer.to_dict()
    ('V100-SXM2', 'iobound_winograd', True)
    """
    from ..replay_space import ReplaySpace
    if isinstance(space, ReplaySpace):
        c = space.cache
        return {"device_name": c.device_name, "kernel_name": c.kernel_name,
                "problem_size": c.problem_size}
    return layer_cache_meta(space.layer, space.device.name, space.algorithm)


def layer_cache_meta(layer: "ConvLayer", device: str, algorithm: str) -> dict:
    """:func:`cache_meta` of a layer's space, known before the space is built.

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1)
    >>> layer_cache_meta(layer, "V100-SXM2", "direct")["kernel_name"]
    'iobound_direct'
    """
    from ..db.conv_template import exported_kernel_name
    return {"device_name": device, "kernel_name": exported_kernel_name(algorithm),
            "problem_size": layer.to_dict()}


def check_export_workloads(export_cache: str | None,
                           meta: Sequence[tuple["ConvLayer | FilePart | None", dict]]) -> None:
    """Refuse, before anything runs, an ``--export-cache`` (per layer part, as
    :func:`per_layer_path` names it for several) that is a Kernel Tuner cache of another
    device, kernel or problem than the run's (``meta``: (part, :func:`cache_meta`) pairs):
    :func:`search.kt_cache_write.check_same_workload`.

    >>> check_export_workloads(None, [])  # no export: nothing to check
    """
    if not export_cache:
        return
    from ..kt_cache_write import check_same_workload
    many = len(meta) > 1
    for part, fields in meta:
        try:
            check_same_workload(per_layer_path(export_cache, part, many), fields)
        except InvalidInputError as exc:
            raise InvalidInputError(f"--export-cache {exc}") from None


def store_history(db: str, result: "TuneResult", space: "Space", measurer: "Measurer") -> HistoryOutcome:
    """Add the run's records to the history database ``db``; the best ever under its key
    of this space's parameter names (a Winograd run's best is never the direct kernel's).
    Records the run answered from the database (``--reuse``: trials marked ``reused``, also
    those a resumed log marks so) are earlier runs', not stored again: not as a copy under
    another spelling of the layer, nor back after a ``history remove``.

    >>> import os, tempfile
    >>> from iobound.layer import ConvLayer
    >>> from search.session.settings import default_measurer, default_space
    >>> from search.tuner import tune
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=8, k_h=3, k_w=3, padding=1)
    >>> m = default_measurer("model", layer, "v100", "direct")
    >>> space = default_space(layer, "v100", "direct")
    >>> result = tune(space, m, "random", budget=4, seed=1)
    >>> out = store_history(os.path.join(tempfile.mkdtemp(), "tuning.db"), result, space, m)
    >>> out.key == history_key(space, m), out.best_ever_ms == result.best.record.time_ms
    (True, True)
    """
    from ..history import History
    key = history_key(space, measurer)
    own = [t.record for t in result.trials if not t.reused]
    with History(db) as h:
        h.add(key, own, run=f"{result.strategy}:seed{result.seed}")
        best = h.best(key, space.params)
    times = [best.time_ms] if best else []
    # the reused records are the database's too (under the layer's other spellings)
    times += [t.record.time_ms for t in result.trials if t.reused and t.record.is_ok
              and as_time(t.record.time_ms) is not None]
    return HistoryOutcome(db=db, key=key, best_ever_ms=min(times) if times else None)


def export_cache(path: str, result: "TuneResult", space: "Space",
                 toolchain: str | None = None) -> ExportOutcome:
    """Write the run's records to ``path`` as a Kernel Tuner cache file, made by
    ``toolchain`` (the measurer's, as the run stores it in a tuning database).

    >>> import os, tempfile
    >>> from iobound.layer import ConvLayer
    >>> from search.kt_cache import load_cache
    >>> from search.session.settings import default_measurer, default_space
    >>> from search.tuner import tune
    >>> pw = ConvLayer(n=1, c_in=8, h_in=6, w_in=6, c_out=8, k_h=1, k_w=1)
    >>> space = default_space(pw, "v100", "direct")
    >>> result = tune(space, default_measurer("model", pw, "v100", "direct"), "grid", budget=5)
    >>> out = export_cache(os.path.join(tempfile.mkdtemp(), "c.json"), result, space)
    >>> out.entries, len(load_cache(out.path).entries)
    (5, 5)
    """
    from ..kt_cache_write import records_to_cache, write_cache
    tune_params = {p: space.values(p) for p in space.params}
    cache = records_to_cache([t.record for t in result.trials], tune_params,
                             toolchain=toolchain, **cache_meta(space))
    write_cache(path, cache)
    return ExportOutcome(path=str(path), entries=len(cache))
