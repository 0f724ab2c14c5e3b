"""Measurers behind one interface (:class:`~search.measure.base.Measurer`).

Registered names (loaded lazily, so optional dependencies such as pycuda never
break ``import search.measure``):

- ``cuda``: our generated kernels on an NVIDIA GPU through pycuda;
- ``emulate``: our generated kernels on the CPU (correctness and traffic, no time);
- ``model``: an analytic estimate for a device preset (``estimate=True``);
- ``replay``: a recorded Kernel Tuner cache file (``replay:FILE`` on the CLI).

Examples
--------
>>> sorted(MEASURERS)
['cuda', 'emulate', 'model', 'replay']
>>> measurer_class("nope")
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: unknown measurer 'nope'; choose one of cuda, emulate, model, replay
"""

from __future__ import annotations

import importlib

from iobound.errors import InvalidInputError

from .base import MeasureRecord, Measurer, Status

__all__ = ["MEASURERS", "LAYER_MEASURES", "KERNEL_MEASURES", "CHECKING_MEASURES", "measurer_class",
           "make_measurer", "MeasureRecord", "Measurer", "Status"]

#: name -> "module:Class" (imported on first use).
MEASURERS = {
    "cuda": "search.measure.cuda:CudaMeasurer",
    "emulate": "search.measure.emulate:EmulateMeasurer",
    "model": "search.measure.model:ModelMeasurer",
    "replay": "search.measure.replay:ReplayMeasurer",
}
#: The measurers of a layer's kernels (a recorded space is replayed: ``tune_replay``).
LAYER_MEASURES = tuple(name for name in MEASURERS if name != "replay")
#: The measurers that compile and run our generated kernels: seconds per configuration,
#: so a run measures in worker processes by default (``--executor local``).
KERNEL_MEASURES = ("cuda", "emulate")
#: The measurers whose every measurement checks the kernel's output against the numpy
#: reference: their winner needs no separate check by the emulator.
CHECKING_MEASURES = ("emulate",)


def measurer_class(name: str) -> type[Measurer]:
    """The measurer class registered as ``name`` (an InvalidInputError, a ValueError, listing
    the names if unknown).

    >>> measurer_class("emulate").__name__, measurer_class("model").estimate
    ('EmulateMeasurer', True)
    """
    if not isinstance(name, str) or name not in MEASURERS:  # ['model']: no TypeError
        raise InvalidInputError(f"unknown measurer {name!r}; choose one of {', '.join(sorted(MEASURERS))}")
    module, _, cls = MEASURERS[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def make_measurer(name: str, *args, **kwargs) -> Measurer:
    """Construct the measurer ``name`` with the given arguments.

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> m = make_measurer("model", layer, "v100")
    >>> type(m).__name__, m.name, m.estimate, m.device.name
    ('ModelMeasurer', 'model', True, 'V100-SXM2')
    """
    return measurer_class(name)(*args, **kwargs)
