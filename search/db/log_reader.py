"""Read one of our JSON-lines tuning logs into measurements for import (see
:mod:`.importer`): the workload and device from its header, each record checked to hold
exactly the log's parameters with plain values. A header field of the wrong kind (a
``measurer`` or ``space`` that is no object, a template, kernel, toolchain or ``replay``
that is no string) is refused, naming it; a name is never stored as ``str()`` of a number.

Whether a file is a log at all is :func:`search.records.is_log_file`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from iobound.errors import InvalidInputError
from kernels.status import Status

from ..file_names import file_name
from ..option_checks import shown
from ..path_kind import path_kind
from ..times import as_time
from ..kt_cache import is_param_value, load_cache
from ..measure.base import MeasureRecord
from ..records import read_log
from .file_import import FileImport, check_problem, file_device
from .conv_template import CONV_TEMPLATE, conv_config_fault, current_layer_problem, stored_layer
from .model import Measurement, Workload, config_fault, finite, recorded_workload

__all__ = ["read_log_file"]


def _header_object(header: dict, key: str) -> dict:
    """The header's ``key`` (``measurer``, ``space``) when it is an object; absent or null
    is an empty one; anything else is refused, naming it."""
    value = header.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInputError(f"the header's {key} must be an object, got {shown(value)}")
    return value


def _header_text(value: Any, what: str) -> str | None:
    """A name field of the header (a toolchain, a template, a kernel): a string, or None
    when absent or null; anything else is refused, naming ``what`` (``5`` would be stored
    as ``"5"``: a toolchain or a workload no run ever matches)."""
    if value is None or isinstance(value, str):
        return value
    raise InvalidInputError(f"the header's {what} must be a string, got {shown(value)}")


def _replayed_problem(header: dict, log_path: Path):
    """The problem size of a replay log: its header's, else (a log written before tune
    recorded it) the replayed cache's, found as the run named it or beside the log. A
    log that names neither is refused: the problem is part of the workload, and a
    workload with no problem is not the replayed one."""
    if header.get("problem_size") is not None:
        return header["problem_size"]
    replayed = _header_text(header.get("replay"), "replay (the replayed file)")
    if not replayed:
        raise InvalidInputError("a replay log that names neither its problem size nor its "
                                "replayed file (the problem is part of the workload)")
    for where in dict.fromkeys([Path(replayed), log_path.parent / replayed]):
        if path_kind(where, "the header's replay") == "file":
            try:
                return load_cache(where).problem_size
            except ValueError:
                break
    raise InvalidInputError(f"a replay log that names no problem size, and its replayed file "
                            f"{replayed!r} cannot be read here or beside the log (the problem "
                            f"is part of the workload: import from where the run was started)")


def _log_workload(header: dict, log_path: Path) -> tuple[Workload, dict]:
    space = _header_object(header, "space")
    params = space.get("params") or []
    if not isinstance(params, list) or not all(isinstance(p, str) for p in params):
        raise InvalidInputError(f"the header's space 'params' must be a list of parameter "
                                f"names, got {shown(params)}")
    params = tuple(params)
    values = space.get("values") or {}
    if not isinstance(values, dict) or not all(
            isinstance(v, list) and all(map(is_param_value, v)) for v in values.values()):
        raise InvalidInputError("the header's space 'values' must map each parameter to a list "
                                "of numbers, strings or flat lists")
    if space.get("kind") == "replay":
        problem = _replayed_problem(header, log_path)
        kernel = _header_text(space.get("kernel"), "space's kernel")
        return recorded_workload(kernel or "", problem, params), values
    if "layer" in header:
        if stored_layer(header["layer"]) is None:
            raise InvalidInputError(f"the header's layer {str(header['layer'])[:60]!r} is not "
                                    f"a convolution layer (the fields of a ConvLayer)")
        return Workload(CONV_TEMPLATE, current_layer_problem(header["layer"]), params), values
    template = _header_text(header.get("template"), "template")  # null is absent
    if template is None:
        template = _header_text(space.get("kind"), "space's kind")
    return Workload("" if template is None else template, header.get("problem"),
                    params), values


def _check_config(index: int, config: dict, params: Sequence[str]) -> None:
    """Refuse a log record whose config is not the log's parameters with plain values."""
    fault = config_fault(config, params)
    if fault:
        raise InvalidInputError(f"the record at index {index}: {fault}; the log's parameters "
                                f"are {', '.join(params)}")


def read_log_file(path: Path, device: str | None) -> FileImport:
    """What importing the ``iobound tune --log`` file ``path`` stores: its workload (from the
    header), device (its own, else ``device``, else the file name: :func:`file_device`) and
    records; a log that cannot be read raises naming the file and what is wrong.

    >>> import os, tempfile
    >>> from search.log_writer import LogWriter
    >>> path = Path(tempfile.mkdtemp()) / "run.jsonl"
    >>> head = {"template": "k", "problem": [8], "device": "v100", "strategy": "random",
    ...         "seed": 1, "space": {"params": ["x"]}, "measurer": {"toolchain": "nvcc 12"}}
    >>> with LogWriter(path, header=head) as log:
    ...     log.append(0, MeasureRecord.ok({"x": 1}, time_ms=2.0))
    ...     log.append(1, MeasureRecord.ok({"x": 2}, time_ms=0.0))  # no usable time: skipped
    >>> f = read_log_file(path, None)
    >>> f.kind, f.device, f.workload.label(), f.read, f.skipped
    ('tune-log', 'v100', 'k [8]', 1, 1)
    >>> [(m.toolchain, m.run, m.source) for m in f.measurements]
    [('nvcc 12', 'random:seed1', 'run.jsonl')]
    """
    log = read_log(path)
    h = log.header
    meas = _header_object(h, "measurer")
    space = _header_object(h, "space")
    own = h.get("device") or meas.get("device") or space.get("device") or ""
    if not isinstance(own, str):  # 5 would be stored as the device "5"
        raise InvalidInputError(f"the header's device {str(own)[:40]!r} is not a device name "
                                f"(a string)")
    dev = file_device(path, own, device)
    w, values = _log_workload(h, Path(path))
    check_problem(w.problem, "the header's problem (layer or problem_size)")
    layer = stored_layer(w.problem) if w.template == CONV_TEMPLATE else None
    algorithm = h.get("algorithm") or space.get("algorithm")
    algorithm = algorithm if isinstance(algorithm, str) else None
    # the measurer's toolchain, else its name; "" when the log names none
    toolchain = _header_text(meas.get("toolchain"), "measurer's toolchain") or \
        _header_text(meas.get("name"), "measurer's name") or ""
    run = f"{h.get('strategy', '')}:seed{h.get('seed', '')}"
    out = FileImport(str(path), "tune-log", dev, w, tune_params={w: values} if values else {})
    for e in log.entries:
        _check_config(e.index, e.record.config, w.params)
        fault = conv_config_fault(e.record, layer, algorithm) if layer is not None else ""
        if fault:
            raise InvalidInputError(f"the record at index {e.index}: {fault} (the header's)")
        r = e.record
        bad_time = r.status is Status.INVALID and "logged_status" in r.extra  # marked by read_log
        if bad_time or (r.is_ok and r.time_ms is not None and as_time(r.time_ms) is None):
            out.skipped += 1
            continue
        r = MeasureRecord(**{**r.__dict__, "extra": finite(r.extra)})
        out.measurements.append(Measurement(w, dev, toolchain, r, run=run, source=file_name(path)))
    return out
