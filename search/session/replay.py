"""Tune a recorded Kernel Tuner space by replaying its measurements (``--measure replay:FILE``).

The file defines the space and the device; the run goes through the same loop as a layer
(:func:`~search.session.loop.tune_space`, history and export included) and reports the
recorded optimum beside the best found.

Examples
--------
>>> import os, tempfile
>>> from search.kt_cache import KtCache
>>> from search.kt_cache_write import write_cache
>>> grid = [(x, y) for x in range(1, 6) for y in range(1, 4)]
>>> path = write_cache(os.path.join(tempfile.mkdtemp(), "k.json"), KtCache(
...     tune_params={"x": [1, 2, 3, 4, 5], "y": [1, 2, 3]}, device_name="gpu", kernel_name="k",
...     entries=[{"x": x, "y": y, "time": 1.0 + abs(x - 3) + abs(y - 2)} for x, y in grid]))
>>> report = tune_replay(str(path), TuneSettings(strategy="random", budget=15, seed=0))
>>> report.space_size, report.result.evaluations, report.recorded_optimum_ms
(15, 15, 1.0)
>>> report.result.best.config, report.result.best.record.time_ms
({'x': 3, 'y': 2}, 1.0)
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING

from iobound.arg_checks import check_type
from iobound.errors import InvalidInputError

from ..db.file_import import check_problem
from ..db.model import check_device_name
from .files import check_history, check_log_paths, check_outputs, log_and_resume, logged_count
from .history_use import check_zero_shot_db
from .loop import KeptRun, observer_and_builders
from .reports import ReplayReport
from .storage import cache_meta, check_export_workloads
from .settings import Builders, Observer, TuneSettings

if TYPE_CHECKING:  # pragma: no cover
    from ..kt_cache import KtCache

__all__ = ["tune_replay"]


def tune_replay(cache: "KtCache | str | os.PathLike", settings: TuneSettings | None = None, *,
                observer: Observer | None = None, builders: Builders | None = None) -> ReplayReport:
    """Tune a recorded Kernel Tuner space by replaying its measurements.

    ``cache`` is a loaded :class:`~search.kt_cache.KtCache` or the path of a cache
    file (``str`` or ``Path``), which defines the space and the device.

    >>> import json, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "gpu_k.json")  # a Kernel Tuner cache file
    >>> with open(path, "w") as f:
    ...     json.dump({"tune_params": {"x": [1, 2, 3]}, "cache": {
    ...         str(x): {"x": x, "time": 1.0 + abs(x - 2)} for x in (1, 2, 3)}}, f)
    >>> r = tune_replay(path, TuneSettings(strategy="grid", budget=3))
    >>> r.device, r.space_size, r.result.best.config, r.recorded_optimum_ms
    ('gpu_k', 3, {'x': 2}, 1.0)
    """
    from ..measure.replay import ReplayMeasurer
    from ..replay_space import ReplaySpace
    if isinstance(cache, os.PathLike):  # a Path is the file's name, as a str is
        cache = os.fspath(cache)
    settings = TuneSettings() if settings is None else \
        check_type("settings", settings, TuneSettings)
    observer, builders = observer_and_builders(observer, builders)
    check_log_paths(settings.log, settings.resume, [None])
    replayed = cache if isinstance(cache, str) else getattr(cache, "path", None)
    check_outputs(settings, [None], inputs=[("--measure replay:FILE", replayed)])
    check_zero_shot_db(settings)
    space = ReplaySpace(cache)
    file = cache if isinstance(cache, str) else space.cache.path
    if settings.history and not space.cache.device:  # only an in-memory cache has no name
        raise InvalidInputError("the replayed cache names no device, so its measurements "
                                "cannot go into --history: give the KtCache a device_name")
    try:  # refused now, not when the run's measurements are stored (or logged)
        if space.cache.device:
            check_device_name(space.cache.device)
        check_problem(space.cache.problem_size, "problem_size")
    except InvalidInputError as exc:
        raise InvalidInputError(f"--measure replay:{file}: {exc}") from None
    check_history(settings.history)
    check_export_workloads(settings.export_cache, [(None, cache_meta(space))])
    # the problem size too: a log imported elsewhere needs no replayed file to name its workload
    header = {"replay": file, "device": space.cache.device,
              "problem_size": space.cache.problem_size}
    log, resume = log_and_resume(settings.log, settings.resume)
    settings = dataclasses.replace(settings, log=log, resume=resume)
    # stopped before its loop: what the log keeps (a resumed run's), as a layer's run says
    # (search.session.parallel.interrupted_run)
    with KeptRun(settings, kept_before=lambda: logged_count(settings)) as run:
        with ReplayMeasurer(space.cache) as measurer:
            observer.replay_started(file, space)
            result, seconds, history_use, history, export = run.store(
                space, measurer, settings, header, observer, builders,
                problem=space.cache.problem_size)
        report = ReplayReport(file=file, device=space.cache.device,
                              kernel=space.cache.kernel_name, space_size=len(space),
                              statuses=result.space["statuses"], result=result, seconds=seconds,
                              recorded_optimum_ms=space.cache.recorded_optimum(),
                              history=history, export=export, history_use=history_use)
        observer.finished(report)
    return report
