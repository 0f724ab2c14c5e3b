"""iobound: red-blue pebble I/O lower bounds for convolutions, and what follows from them.

The theory package: layers, devices, networks, units and bounds. It imports no other
package of the project (the arrows are iobound <- dataflow <- kernels <- search).

Examples
--------
>>> from iobound import get_layer
>>> get_layer("alexnet.conv1").h_out
55
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("iobound")
except _metadata.PackageNotFoundError:  # a source tree used without installing it
    __version__ = "0+unknown"

from .device_spec import Device

from .devices import canonical_device_name, device_names, get_device
from .errors import IoboundError, ToolchainError, UnknownPresetError
from .layer import ConvLayer
from .layer_spec import parse_layer_spec
from .networks import get_layer, network_layers, network_names
from .units import dtype_bytes, fast_memory_words
from .winograd_transforms import WinogradTransforms, winograd_transforms

__all__ = [
    "ConvLayer", "IoboundError", "ToolchainError", "UnknownPresetError",
    "dtype_bytes", "fast_memory_words", "get_layer", "network_layers",
    "network_names", "parse_layer_spec", "WinogradTransforms", "winograd_transforms",
    "Device", "device_names", "get_device", "canonical_device_name",
]

# bounds (issue 2): vertex counts, the composite API and bound reports
from .composite import CompositeAlgorithm, CompositeStep
from .report import Bound, BoundReport, best_lower_bound, bound_report
from .vertex_counts import direct_vertex_count
from .winograd_vertex_counts import winograd_vertex_count

__all__ += [
    "CompositeAlgorithm", "CompositeStep", "Bound", "BoundReport", "best_lower_bound",
    "bound_report", "direct_vertex_count", "winograd_vertex_count",
]
