"""What ``iobound tune`` measures with and on which device: ``--measure`` and ``--device``.

Examples
--------
>>> import argparse
>>> resolve_measure(argparse.Namespace(measure="replay:cache.json"))
('replay', 'cache.json', None)
>>> device, note = device_for(argparse.Namespace(device=None), "model")
>>> device.name, note
('V100-SXM2', ' (default; --device to change)')
"""

from __future__ import annotations

from iobound.errors import InvalidInputError

from search.measure import LAYER_MEASURES

from .common import DEFAULT_DEVICE

__all__ = ["DEFAULT_DEVICE", "MEASURES", "resolve_measure", "device_for"]

MEASURES = (*LAYER_MEASURES, "replay:FILE")


def resolve_measure(args) -> tuple[str, str | None, str | None]:
    """(kind, replay file, notice) from ``--measure``; without it cuda when a GPU is here.

    >>> import argparse
    >>> resolve_measure(argparse.Namespace(measure="model"))
    ('model', None, None)
    >>> resolve_measure(argparse.Namespace(measure="replay"))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --measure replay needs a file: replay:FILE
    """
    if args.measure is None:
        from search.measure.cuda import cuda_available
        if cuda_available():
            return "cuda", None, None
        return "model", None, ("no GPU with pycuda here: measuring with the analytic model "
                               "(estimates); the winner is checked by the CPU emulator")
    kind, colon, file = args.measure.partition(":")
    if kind == "replay":
        if not file:
            raise InvalidInputError("--measure replay needs a file: replay:FILE")
        return "replay", file, None
    if kind not in LAYER_MEASURES or colon:
        raise InvalidInputError(f"--measure must be one of {', '.join(MEASURES)}; got {args.measure!r}")
    return kind, None, None


def _this_gpu():
    """(preset of GPU 0, note); a GPU without a preset under its own name with the limits
    its driver gives (the default preset only when even that cannot be read)."""
    from iobound.devices import get_device
    from iobound.errors import UnknownPresetError
    from search.measure.cuda import gpu_device, gpu_name

    name = gpu_name()
    if name is None:
        return get_device(DEFAULT_DEVICE), " (no GPU here to read; default limits)"
    try:
        return get_device(name or ""), " (this GPU)"
    except UnknownPresetError:  # its own name and limits: never stored as another GPU's
        device = gpu_device()
        if device is None:
            return get_device(DEFAULT_DEVICE), f" (no preset for {name}; default limits)"
        return device, f" (this GPU, no preset: {device.source})"


def device_for(args, kind: str):
    """(device, note for the first line).

    >>> import argparse
    >>> device, note = device_for(argparse.Namespace(device="a100"), "cuda")
    >>> device.name, note
    ('A100-SXM4-40GB', '')
    """
    from iobound.devices import get_device
    if args.device:
        return get_device(args.device), ""
    if kind == "cuda":
        return _this_gpu()
    return get_device(DEFAULT_DEVICE), " (default; --device to change)"
