"""Read one of our JSON-lines tuning logs into measurements for import (see
:mod:`.importer`): the workload and device from its header, each record checked to hold
exactly the log's parameters with plain values.

Whether a file is a log at all is :func:`search.records.is_log_file`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from iobound.errors import InvalidInputError
from kernels.status import Status

from ..file_names import file_name
from ..times import as_time
from ..kt_cache import is_param_value, load_cache
from ..measure.base import MeasureRecord
from ..records import read_log
from .file_import import FileImport, check_problem, file_device
from .conv_template import CONV_TEMPLATE, conv_config_fault, current_layer_problem, stored_layer
from .model import Measurement, Workload, config_fault, finite, recorded_workload

__all__ = ["read_log_file"]


def _replayed_problem(header: dict, log_path: Path):
    """The problem size of a replay log: its header's, else (a log written before tune
    recorded it) the replayed cache's, found as the run named it or beside the log."""
    if header.get("problem_size") is not None:
        return header["problem_size"]
    replayed = header.get("replay")
    if not replayed:
        return None
    for where in dict.fromkeys([Path(replayed), log_path.parent / replayed]):
        if where.is_file():
            try:
                return load_cache(where).problem_size
            except ValueError:
                break
    raise InvalidInputError(f"a replay log that names no problem size, and its replayed file "
                            f"{replayed!r} cannot be read here or beside the log (the problem "
                            f"is part of the workload: import from where the run was started)")


def _log_workload(header: dict, log_path: Path) -> tuple[Workload, dict]:
    space = header.get("space") or {}
    params = tuple(space.get("params") or ())
    values = space.get("values") or {}
    if not isinstance(values, dict) or not all(
            isinstance(v, list) and all(map(is_param_value, v)) for v in values.values()):
        raise InvalidInputError("the header's space 'values' must map each parameter to a list "
                                "of numbers, strings or flat lists")
    if space.get("kind") == "replay":
        problem = _replayed_problem(header, log_path)
        return recorded_workload(str(space.get("kernel") or ""), problem, params), values
    if "layer" in header:
        if stored_layer(header["layer"]) is None:
            raise InvalidInputError(f"the header's layer {str(header['layer'])[:60]!r} is not "
                                    f"a convolution layer (the fields of a ConvLayer)")
        return Workload(CONV_TEMPLATE, current_layer_problem(header["layer"]), params), values
    template = header.get("template")  # null is absent
    template = space.get("kind") if template is None else template
    return Workload("" if template is None else str(template), header.get("problem"),
                    params), values


def _check_config(index: int, config: dict, params: Sequence[str]) -> None:
    """Refuse a log record whose config is not the log's parameters with plain values."""
    fault = config_fault(config, params)
    if fault:
        raise InvalidInputError(f"the record at index {index}: {fault}; the log's parameters "
                                f"are {', '.join(params)}")


def read_log_file(path: Path, device: str | None) -> FileImport:
    log = read_log(path)
    h = log.header
    meas = h.get("measurer") or {}
    own = h.get("device") or meas.get("device") or (h.get("space") or {}).get("device") or ""
    if not isinstance(own, str):  # 5 would be stored as the device "5"
        raise InvalidInputError(f"the header's device {str(own)[:40]!r} is not a device name "
                                f"(a string)")
    dev = file_device(path, own, device)
    w, values = _log_workload(h, Path(path))
    check_problem(w.problem, "the header's problem (layer or problem_size)")
    layer = stored_layer(w.problem) if w.template == CONV_TEMPLATE else None
    algorithm = h.get("algorithm") or (h.get("space") or {}).get("algorithm")
    algorithm = algorithm if isinstance(algorithm, str) else None
    toolchain = str(meas.get("toolchain") or meas.get("name") or "")
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
