"""What a tuning run stores at its end: its records in the tuning database under one key
whatever the space (:func:`history_key`, :func:`store_history`), its Kernel Tuner cache
export described the same way (:func:`cache_meta`, :func:`export_cache`), the export's
check before anything runs (:func:`check_export_workloads`), and, when a write fails,
where the measurements are kept (:func:`kept_where`, :func:`write_outcomes`).

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1)
>>> layer_cache_meta(layer, "V100-SXM2", "winograd")["kernel_name"]
'iobound_winograd'
>>> kept_where(2, None)
'the 2 measurements were not logged (no --log)'
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Sequence

from iobound.errors import InvalidInputError, OutputWriteError
from iobound.wording import counted

from ..times import as_time
from .files import FilePart, per_layer_path
from .reports import ExportOutcome, HistoryOutcome

if TYPE_CHECKING:  # pragma: no cover
    from iobound.layer import ConvLayer

    from ..history import HistoryKey
    from ..measure.base import Measurer
    from ..space import Space
    from ..tune_result import TuneResult
    from .settings import TuneSettings

__all__ = ["history_key", "cache_meta", "layer_cache_meta", "check_export_workloads",
           "store_history", "export_cache", "write_outcomes", "kept_where"]


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
