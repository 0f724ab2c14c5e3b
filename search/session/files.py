"""The files around a tuning session: per-layer names, resume, the paths checked first.

- One log (and exported cache) per layer when several layers are tuned:
  ``run.jsonl`` becomes ``run.<layer name>.jsonl`` (:func:`per_layer_path`), and
  ``run.<layer name>.<algorithm>.jsonl`` when each layer is tuned with every algorithm
  (:func:`file_part`).
- ``log`` must be new and ``resume`` must exist before anything runs
  (:func:`check_log_paths`); a network run killed before a layer has no log for it,
  so that layer starts afresh, logging to the resume name (:func:`log_and_resume`).
- Before anything runs, every output path is checked writable and no two name one file
  (:func:`check_outputs`: an exported cache or a best-kernel file never replaces tuning
  data it would lose), and the history database is opened, or where it would be created
  checked (:func:`check_history`).

What a run writes into those files at its end (the tuning database, the exported cache)
is :mod:`.storage`'s.

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
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Sequence

from iobound.errors import InvalidInputError, IoboundError, OutputWriteError

from ..file_names import layer_file_part
from ..option_checks import check_path, check_type
from ..outputs import check_distinct_files, check_not_tuning_data, check_output_dir, check_output_file
from ..path_kind import same_file
from ..records import database_not_log, has_log, log_exists_error, read_log

if TYPE_CHECKING:  # pragma: no cover
    from iobound.layer import ConvLayer

    from .settings import TuneSettings

__all__ = ["per_layer_path", "FilePart", "file_part", "logged_count", "has_log",
           "continues_in_place", "check_log_paths", "check_outputs", "log_and_resume",
           "check_history", "OutputWriteError"]


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
