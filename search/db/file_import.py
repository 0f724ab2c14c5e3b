"""What reading one file for import gives (:class:`FileImport`), and the device its
records go under (:func:`file_device`); the readers are :mod:`.cache_reader` and
:mod:`.log_reader`, the whole import :mod:`.importer`.

>>> from pathlib import Path
>>> file_device(Path("/x/conv_A100.json.gz"), "  ", None)
'conv_A100'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iobound.device_checks import check_device_name, check_new_device_name
from iobound.errors import InvalidInputError

from ..file_names import file_stem
from ..kt_cache import named
from .model import Workload, problem_fault

__all__ = ["FileImport", "file_device", "check_problem"]


@dataclass
class FileImport:
    """One file read (and, after :func:`import_files`, stored).

    >>> f = FileImport("k.json", "kt-cache", "v100", Workload("k", [8], ("x",)))
    >>> f.read, f.skipped, f.added  # a reader appends to measurements, counts skipped
    (0, 0, 0)
    """

    path: str
    kind: str  # "kt-cache", "t4-results", "tune-log" or "tuning-db"
    device: str
    workload: Workload
    measurements: list = field(repr=False, default_factory=list)
    tune_params: dict = field(repr=False, default_factory=dict)
    skipped: int = 0
    added: int = 0

    @property
    def read(self) -> int:
        """How many measurements the file holds (skipped ones not counted)."""
        return len(self.measurements)


def file_device(path: Path, own: str, device: str | None) -> str:
    """The device a file's records go under (module doc); refused when ``device`` disagrees
    (a preset's name agrees with every name of that preset; the file's own name is kept).
    A blank name in the file is no name; one with a line break is refused, like ``--device``'s.
    A name new to the toolkit (``device``, or the file's name) is at most
    :data:`iobound.device_checks.DEVICE_NAME_CHARS` characters; the file's own is kept whole.

    >>> file_device(Path("a.json"), "NVIDIA RTX A4000", "RTX-A4000")
    'NVIDIA RTX A4000'
    """
    from .device_names import same_device
    own = named(own)
    # --device arrives as its preset's name: "NVIDIA RTX A4000" in a file is "RTX-A4000"
    if own and device and not same_device(own, device):
        raise InvalidInputError(f"{path} records device {own!r}; --device {device!r} disagrees "
                         f"(a file's records are never stored under another device)")
    if own:  # the file's own name, whatever its length: what was exported imports back
        return check_device_name(own)
    return check_new_device_name(device or file_stem(path))


def check_problem(problem: Any, what: str) -> None:
    """Refuse a file whose problem (a workload's identity) is not a plain value.

    >>> check_problem([4096, 4096], "problem_size")  # a plain value: nothing to say
    >>> check_problem({"n": float("nan")}, "problem_size")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: problem_size holds NaN or Infinity; a problem must be finite
    """
    fault = problem_fault(problem)
    if fault:
        raise InvalidInputError(f"{what} {fault}")
