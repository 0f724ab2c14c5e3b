"""Read a Kernel Tuner cache file (or a T4 results file, read as a cache by
:mod:`search.t4_results`) into measurements for import (see :mod:`.importer`).

A cache's measurements have the toolchain ``kernel_tuner`` unless the file says
another (a top-level or an entry's ``toolchain``, written by our export). An ``ok``
entry whose time is not positive and finite is skipped and counted.

>>> _kt_timestamp("2024-01-01T00:00:00"), _kt_timestamp(float("nan"))
(1704067200.0, 0.0)
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from kernels.status import Status

from ..file_names import file_name
from ..kt_cache import entry_status, load_cache
from ..measure.base import MeasureRecord
from ..times import as_time
from .file_import import FileImport, check_problem, file_device
from .model import Measurement, finite, recorded_workload

__all__ = ["KT_TOOLCHAIN", "read_cache"]

#: The toolchain of measurements read from a Kernel Tuner cache (the file does not say more).
KT_TOOLCHAIN = "kernel_tuner"
_TIME_KEYS = ("time", "times", "status", "estimate", "toolchain")


def _kt_timestamp(value: Any) -> float:
    """A cache entry's timestamp as Unix time; one that is not a finite number or an ISO
    time is absent (0.0). An ISO time without a zone is UTC: a local zone would give
    other rows, so duplicates, when the file is imported again elsewhere."""
    if isinstance(value, bool):
        return 0.0
    if isinstance(value, (int, float)):
        try:
            stamp = float(value)
        except OverflowError:  # an integer too large for a float
            return 0.0
        return stamp if math.isfinite(stamp) else 0.0
    try:
        when = datetime.fromisoformat(str(value))
    except ValueError:
        return 0.0
    return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).timestamp()


def _kt_record(entry: dict, keys: Sequence[str]) -> MeasureRecord | None:
    config = {k: entry[k] for k in keys}
    status = entry_status(entry)
    kept = _TIME_KEYS if status is Status.OK else tuple(k for k in _TIME_KEYS if k != "times")
    # a failure's times (Kernel Tuner records a failed verification's) are written back
    other = finite({k: v for k, v in entry.items() if k not in keys and k not in kept})
    stamp = _kt_timestamp(entry.get("timestamp", 0.0))
    if status is not Status.OK:
        rec = MeasureRecord.failed(config, status, str(entry.get("time")), extra={"kt": other})
    else:
        t = as_time(entry["time"])
        if t is None:
            return None
        # load_cache has kept only measured repeats; here too, by the same rule
        costs = [c for c in map(as_time, entry.get("times") or []) if c is not None]
        rec = MeasureRecord.ok(config, costs, time_ms=t, extra={"kt": other})
    return MeasureRecord(**{**rec.__dict__, "timestamp": stamp,
                            "estimate": bool(entry.get("estimate", False))})


def _toolchain(value: Any, default: str) -> str:
    """A cache's (or entry's) ``toolchain`` field: ours, written by export (``""`` too: a
    record stored with no toolchain comes back as it was); else ``default``."""
    return value if isinstance(value, str) else default


def read_cache(path: Path, device: str | None) -> FileImport:
    """What importing the Kernel Tuner cache file ``path`` stores: its recorded workload
    (kernel name, problem size, parameter names), device (the cache's own name, else
    ``device``, else the file name) and its entries as records, failures included.

    >>> import tempfile
    >>> from search.kt_cache import KtCache
    >>> from search.kt_cache_write import write_cache
    >>> path = Path(tempfile.mkdtemp()) / "k.json"
    >>> _ = write_cache(path, KtCache(tune_params={"x": [1, 2]}, kernel_name="k",
    ...     device_name="Tesla V100-SXM2-16GB", problem_size=[8],
    ...     entries=[{"x": 1, "time": 2.0, "times": [2.0]}, {"x": 2, "time": 0.0}]))
    >>> f = read_cache(path, "v100")  # the cache's own name is kept: the same device
    >>> f.device, f.workload.label(), f.read, f.skipped, f.measurements[0].toolchain
    ('Tesla V100-SXM2-16GB', 'k [8]', 1, 1, 'kernel_tuner')
    """
    cache = load_cache(path)
    dev = file_device(path, cache.device_name, device)
    check_problem(cache.problem_size, "problem_size")
    w = recorded_workload(cache.kernel_name, cache.problem_size, cache.keys)
    tool = _toolchain(cache.meta.get("toolchain"), KT_TOOLCHAIN)
    out = FileImport(str(path), cache.file_kind, dev, w, tune_params={w: cache.tune_params})
    for entry in cache.entries:
        rec = _kt_record(entry, cache.keys)
        if rec is None or "invalid_reason" in entry:  # a bad time (load_cache)
            out.skipped += 1
            continue
        out.measurements.append(Measurement(w, dev, _toolchain(entry.get("toolchain"), tool), rec,
                                            source=file_name(path)))
    return out
