"""Export measurements from the tuning database as a Kernel Tuner cache file.

One workload on one device becomes one cache: ``kernel_name`` the template (for our
conv template the kernel name ``iobound tune --export-cache`` writes),
``problem_size`` the problem, ``device_name`` the device, the workload's known
value lists as ``tune_params``, and one entry per configuration, its latest
measurement (at equal timestamps, as imports without any have, the one stored last: the
record :class:`~search.history.History` takes as latest too). A failure is written as its Kernel Tuner string; ``status`` is added
only where that string does not say it (``timeout``, ``wrong_result``), and beside a time
of ``1e20`` ms or more (read as a failure otherwise: :mod:`search.kt_cache`).

Fields a cache entry had when it was imported (``compile_time``, ``timestamp``,
...) are written back, so cache -> database -> cache gives the same entries. A
measurement from elsewhere (a tuning log) carries its ``timestamp`` and toolchain:
the commonest toolchain is the cache's top-level ``toolchain`` (left out when it
is Kernel Tuner's), another one the entry's own ``toolchain``; so database ->
cache -> database adds nothing. The cache is never written over the database it
comes from (by any path to it, or its journals).

Examples
--------
>>> from search.measure.base import MeasureRecord
>>> db = TuningDB(":memory:")
>>> w = Workload("k", [8], ("x",))
>>> rec = MeasureRecord({"x": 2}, "ok", costs=(1.0, 3.0), time_ms=2.0, timestamp=5.0)
>>> _ = db.add([Measurement(w, "v100", "nvcc 12", rec)])
>>> cache = workload_cache(db, w, "v100")
>>> cache.device_name, cache.tune_params, cache.meta
('v100', {'x': [2]}, {'toolchain': 'nvcc 12'})
>>> cache.entries
[{'x': 2, 'time': 2.0, 'times': [1.0, 3.0], 'timestamp': 5.0}]
"""

from __future__ import annotations

from collections import Counter

from iobound.errors import InvalidInputError

import os
from pathlib import Path

from ..kt_cache import KtCache
from ..kt_cache_write import cache_entry, write_cache
from ..option_checks import check_path, check_type, shown
from ..outputs import check_not_tuning_data
from .importer import KT_TOOLCHAIN
from .conv_template import CONV_TEMPLATE, conv_algorithm, exported_kernel_name, stored_layer
from .device_names import device_as_stored
from .model import Measurement, Workload, canon, canon_key, config_fault
from .schema import DB_FILE_ENDINGS
from .store import TuningDB

__all__ = ["workload_cache", "export_cache"]


def _check_config(m: Measurement, keys) -> None:
    """Refuse a config that cannot be a cache entry (stored before import checked them)."""
    fault = config_fault(m.record.config, keys)
    if fault:
        raise InvalidInputError(
            f"a measurement of {m.workload.label()} on {m.device!r} has config "
            f"{canon(m.record.config)[:80]}: {fault}; it cannot be a cache entry")


def _latest(ms: list[Measurement], keys) -> dict[str, Measurement]:
    best: dict[str, tuple[float, int, Measurement]] = {}
    for order, m in enumerate(ms):
        r = m.record
        if r.is_ok and m.time_ms is None:
            continue  # untimed (emulator) or unusable time: a cache entry needs one
        _check_config(m, keys)
        k = canon_key([r.config[p] for p in keys])  # not cache_key: "1" and 1 print alike
        if k not in best or (r.timestamp, order) > best[k][:2]:
            best[k] = (r.timestamp, order, m)
    return {k: v[2] for k, v in best.items()}


def _kernel_name(workload: Workload) -> str:
    """The cache's ``kernel_name``: the template, or for our conv template (of a layer) the
    name ``iobound tune --export-cache`` writes (``iobound_direct``, ``iobound_winograd``),
    which importing maps back to the template (:func:`~.model.recorded_workload`).

    >>> layer = {"n": 1, "c_in": 8, "h_in": 8, "w_in": 8, "c_out": 8, "k_h": 3, "k_w": 3}
    >>> _kernel_name(Workload("k", [8], ("x",))), _kernel_name(Workload(CONV_TEMPLATE, layer, ("e", "x")))
    ('k', 'iobound_winograd')
    """
    if workload.template == CONV_TEMPLATE and stored_layer(workload.problem) is not None:
        return exported_kernel_name(conv_algorithm(workload.params))
    return workload.template


def workload_cache(db: TuningDB, workload: Workload, device: str,
                   toolchain: str | None = None) -> KtCache:
    """The cache of ``workload`` on ``device`` (optionally one toolchain's measurements).

    ``device`` stands for every name the database holds of its device
    (:mod:`.device_names`: ``v100`` is ``V100-SXM2``), as ``history export --device``
    takes it: the name given when the workload's measurements are held under it, else
    the one name they are held under (the cache's ``device_name``).

    >>> from search.measure.base import MeasureRecord
    >>> db, w = TuningDB(":memory:"), Workload("k", [8], ("x",))
    >>> _ = db.add([Measurement(w, "Tesla V100-SXM2-16GB", "kernel_tuner",
    ...                         MeasureRecord.ok({"x": 1}, time_ms=2.0))])
    >>> c = workload_cache(db, w, "v100")  # the one name the database holds of the V100
    >>> c.device_name, c.kernel_name, c.problem_size, c.meta
    ('Tesla V100-SXM2-16GB', 'k', [8], {})
    >>> workload_cache(db, w, "a100")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: no measurements of k [8] on device 'a100'

    Raises
    ------
    InvalidInputError
        When the database holds no measurement of that workload on that device, holds
        them under several names of it, none of them ``device`` itself, or
        only untimed ``ok`` ones (an emulator's: no entry without a time), or one
        whose config is not the workload's parameters with plain values.
    """
    check_type("db", db, TuningDB)
    check_type("device", device, str)  # None would mix every device's times in one cache
    if toolchain is not None:
        check_type("toolchain", toolchain, str)
    names = device_as_stored(db.connection, device) or (device,)
    ms = db.measurements(workload, device=names, toolchain=toolchain, order="stored")
    held = sorted({m.device for m in ms})
    if device not in held and len(held) > 1:  # a cache names one device name
        raise InvalidInputError(f"the database {db.path!r} holds {workload.label()} on device "
                                f"{device!r} under {len(held)} names: {', '.join(held)}; "
                                f"give the one to export")
    if held and device not in held:
        device = held[0]  # the one name the database holds the workload's device under
    ms = [m for m in ms if m.device == device]
    if not ms:
        raise InvalidInputError(f"no measurements of {workload.label()} on device {device!r}"
                         + (f" with toolchain {toolchain!r}" if toolchain is not None else ""))
    known = db.tune_params(workload)
    keys = [p for p in known if p in workload.params] or list(workload.params)
    latest = list(_latest(ms, keys).values())
    if not latest:
        raise InvalidInputError(
            f"no timed measurement of {workload.label()} on device {device!r} can become a "
            f"cache entry: its {len(ms)} ok record(s) have no positive time (an emulated run, "
            f"or a time of 0)")
    tune_params = {}
    for p in keys:
        vals = list(known.get(p, []))
        for m in latest:  # values may be lists (unhashable): compare, do not hash
            if m.record.config[p] not in vals:
                vals.append(m.record.config[p])
        tune_params[p] = vals
    top = Counter(m.toolchain for m in latest).most_common(1)[0][0]
    entries = [cache_entry(m.record, keys, None if m.toolchain == top else m.toolchain)
               for m in latest]
    return KtCache(tune_params=tune_params, entries=entries, device_name=device,
                   kernel_name=_kernel_name(workload), problem_size=workload.problem,
                   meta={} if top == KT_TOOLCHAIN else {"toolchain": top})


def _is_database(path: Path, db_path: str) -> bool:
    """Whether writing ``path`` writes over the database file or one of its journals."""
    if db_path == ":memory:":
        return False
    db = Path(db_path)
    if path.exists() and db.exists() and os.path.samefile(path, db):  # links and other paths
        return True
    db, target = db.resolve(), path.resolve()
    return target.parent == db.parent and target.name in {
        db.name + end for end in DB_FILE_ENDINGS}


def export_cache(db: TuningDB, path: str | os.PathLike, workload: Workload, device: str,
                 toolchain: str | None = None) -> Path:
    """Write :func:`workload_cache` to ``path`` (gzipped when it ends in .gz).

    >>> import tempfile
    >>> from search.measure.base import MeasureRecord
    >>> from search.db.importer import read_file
    >>> path = Path(tempfile.mkdtemp()) / "tuning.db"
    >>> db, w = TuningDB(path), Workload("k", [8], ("x",))
    >>> _ = db.add([Measurement(w, "v100", "t", MeasureRecord.ok({"x": 1}, time_ms=2.0))])
    >>> out = export_cache(db, path.with_name("k.json.gz"), w, "v100")
    >>> out.name, [(m.device, m.time_ms) for m in read_file(out).measurements]
    ('k.json.gz', [('v100', 2.0)])
    >>> export_cache(db, path, w, "v100")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: ...tuning.db is the database '...tuning.db' itself (or its \
journal); write the cache to another file

    Raises
    ------
    ValueError
        When ``path`` is the database file itself (or its journal), or as
        :func:`workload_cache`.
    """
    check_type("db", db, TuningDB)
    if not check_path("path", path).strip():  # Path("") is '.', which names another path
        raise InvalidInputError("path: the path is empty")
    try:
        is_db = _is_database(Path(path), db.path)
    except OSError as e:  # e.g. a name longer than NAME_MAX
        raise InvalidInputError(f"path={shown(path)}: cannot write the cache file: "
                                f"{e.strerror or e}") from None
    if is_db:
        raise InvalidInputError(f"{path} is the database {db.path!r} itself (or its journal); "
                                f"write the cache to another file")
    # another database is replaced whole; a cache only when kept (write_cache checks)
    check_not_tuning_data("the cache file", path, cache_export=True)
    return write_cache(path, workload_cache(db, workload, device, toolchain))
