"""The ``replay`` measurer: look configurations up in a Kernel Tuner cache file.

A recorded float ``time`` gives an ``ok`` record with ``time_ms`` = the recorded
``time`` (Kernel Tuner's objective) and ``costs`` = the recorded ``times``; a
failure string gives its status (``InvalidConfig`` -> ``INVALID``,
``CompilationFailedConfig`` -> ``COMPILE_ERROR``, ``RuntimeFailedConfig`` ->
``RUNTIME_ERROR``); a configuration absent from the file is ``INVALID``.
Nothing is timed here, so the records are measurements replayed, not estimates, except
entries marked ``"estimate": true`` (an exported analytic run), which replay as estimates.
A recorded time that is not a positive finite number is ``INVALID``, never a measurement.

Examples
--------
>>> from search.kt_cache import KtCache
>>> m = ReplayMeasurer(KtCache(tune_params={"a": [1, 2]}, entries=[
...     {"a": 1, "time": 2.0, "times": [1.9, 2.0, 2.1]}, {"a": 2, "time": "CompilationFailedConfig"}]))
>>> [(r.status.value, r.time_ms) for r in m.measure([{"a": 1}, {"a": 2}, {"a": 3}])]
[('ok', 2.0), ('compile_error', None), ('invalid', None)]
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

from ..kt_cache import KtCache, entry_status, load_cache, value_key
from ..times import as_time
from .base import MeasureRecord, Measurer, Status, check_configs, invalid_config

__all__ = ["ReplayMeasurer"]


class ReplayMeasurer(Measurer):
    """Measurements replayed from a Kernel Tuner cache (see module doc).

    Parameters
    ----------
    cache : KtCache or path
        The loaded cache or the path of a cache file.

    Examples
    --------
    >>> from search.kt_cache import KtCache
    >>> m = ReplayMeasurer(KtCache({"a": [1, 2, 4]}, [{"a": a, "time": 4.0 / a} for a in (1, 2, 4)],
    ...                            device_name="A100"))
    >>> [r.time_ms for r in m.measure([{"a": 1}, {"a": 4}])], m.toolchain()
    ([4.0, 1.0], 'replay:memory:A100')
    """

    name = "replay"
    estimate = False

    def __init__(self, cache: KtCache | str | os.PathLike):
        if not isinstance(cache, KtCache):
            cache = load_cache(cache)
        self.cache = cache
        self._by_key = {self._key(e): e for e in cache.entries}

    def _key(self, config: Mapping[str, Any]) -> tuple:
        """A configuration's values as the replayed space compares them (``value_key``):
        not the printed cache key, under which "a,b" + "c" and "a" + "b,c", or 1 and "1",
        were one entry."""
        return tuple(value_key(config[k]) for k in self.cache.keys)

    def _one(self, config: Mapping[str, Any]) -> MeasureRecord:
        try:
            entry = self._by_key.get(self._key(config))
        except KeyError as exc:
            return MeasureRecord.failed(config, Status.INVALID, f"parameter {exc} missing from config")
        except TypeError:  # an unhashable value (a dict): no recorded configuration has it
            entry = None
        if entry is None:
            return MeasureRecord.failed(config, Status.INVALID, "configuration not recorded in the replay file")
        status = entry_status(entry)
        if not status.is_ok:
            reason = entry.get("invalid_reason") or str(entry.get("time"))[:80]
            return MeasureRecord.failed(config, status, reason)
        times = entry.get("times")
        times = [t for t in times if as_time(t) is not None] if isinstance(times, list) else []
        # only finite numbers: a NaN here would make a JSON output invalid
        extra = {k: entry[k] for k in ("compile_time", "GFLOP/s") if as_time(entry.get(k)) is not None}
        # an exported analytic estimate replays as an estimate, never as a measurement
        return MeasureRecord.ok(config, costs=times or [entry["time"]], time_ms=float(entry["time"]),
                                estimate=entry.get("estimate") is True, extra=extra)

    def measure(self, configs: Sequence[Mapping[str, Any]]) -> list[MeasureRecord]:
        return [invalid_config(c) or self._one(c) for c in check_configs(configs)]

    def toolchain(self) -> str:
        from ..file_names import file_name  # text SQLite stores, whatever the locale decoded
        name = file_name(self.cache.path) if self.cache.path else ""
        return f"replay:{name or 'memory'}:{self.cache.device_name}"
