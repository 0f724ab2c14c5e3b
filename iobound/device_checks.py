"""Checks of a :class:`~iobound.device_spec.Device`'s fields that need more than a type or a
range: a device name, nvcc's name of its architecture, and fields no GPU has together.

Examples
--------
>>> check_device_name("A100"), check_arch_of("sm_80", (8, 0))
('A100', 'sm_80')
"""

from __future__ import annotations

import re
from typing import Any

from . import limits
from .errors import InvalidInputError

__all__ = ["check_device_name", "check_new_device_name", "check_arch_of", "arch_of",
           "ARCH_PATTERN", "check_consistent", "DEVICE_NAME_CHARS", "check_compute_capability"]

_VERSION = limits.Limit(0, 1 << 10, "a version")

#: Longest device name taken: vendors' names are tens of characters ("NVIDIA GeForce RTX
#: 4090 Laptop GPU"); a name is shown whole in tables and error lines.
DEVICE_NAME_CHARS = 200


#: nvcc's spelling of a GPU architecture: ``sm_`` and the compute capability's digits,
#: with a letter for the architecture-specific features (``sm_90a``); ASCII digits only
#: ("sm_٨٠" is no arch). Also :mod:`kernels.toolchains`' check.
ARCH_PATTERN = re.compile(r"sm_(\d{2,3})[a-z]?", re.ASCII)


def check_compute_capability(cc: Any) -> tuple[int, int]:
    """``cc`` as a ``(major, minor)`` pair of ints when it is a tuple or list of two
    integers, major at least 1 (CUDA's first GPUs were 1.0); else InvalidInputError.

    >>> check_compute_capability([8, 0])
    (8, 0)
    >>> check_compute_capability((0, 9))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: device compute_capability must be at least (1, 0), got (0, 9)
    """
    if not (isinstance(cc, (tuple, list)) and len(cc) == 2):
        raise InvalidInputError(f"device compute_capability must be a pair of ints, got {cc!r:.60}")
    major, minor = (limits.check_int("device compute_capability", v, _VERSION) for v in cc)
    if major < 1:
        raise InvalidInputError(f"device compute_capability must be at least (1, 0), "
                                f"got {(major, minor)}")
    return major, minor


def arch_of(compute_capability: tuple[int, int]) -> str:
    """nvcc's ``sm_XY`` for a device's compute capability (checked).

    >>> arch_of((8, 6))
    'sm_86'
    """
    major, minor = check_compute_capability(compute_capability)
    return f"sm_{major}{minor}"


def check_device_name(name: Any) -> str:
    """``name`` when it is a device name: a string, not blank, of printable characters.
    Anything else is refused: ``5`` and ``"5"`` would share one stored device under two
    digests (the same file imported twice), ``str()`` of an object would store its repr as
    a name, and a blank name or one with a line break would break every one-line listing.
    A name new to a database is also held to a length (:func:`check_new_device_name`).

    >>> check_device_name("A100")
    'A100'
    >>> check_device_name(5)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: a device name must be a printable, not blank string, got 5 (int)
    """
    if not isinstance(name, str) or not name.strip() or not name.isprintable():
        raise InvalidInputError(f"a device name must be a printable, not blank string, "
                                f"got {name!r}"[:120] + f" ({type(name).__name__})")
    return name


def check_new_device_name(name: Any) -> str:
    """:func:`check_device_name`, and at most :data:`DEVICE_NAME_CHARS` characters: for a
    name records are about to be stored under (a device built, a file imported), not for
    one a database already holds (its records stay readable and removable).

    >>> check_new_device_name("g" * 201)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: a device name must be at most 200 characters, got 201 ('gggggggggggggggggggggggggggggggggggggggg'...)
    """
    name = check_device_name(name)
    if len(name) > DEVICE_NAME_CHARS:
        raise InvalidInputError(f"a device name must be at most {DEVICE_NAME_CHARS} characters, "
                                f"got {len(name)} ({name[:40]!r}...)")
    return name


def check_arch_of(arch: Any, compute_capability: tuple[int, int]) -> str:
    """``arch`` when it is nvcc's name of ``compute_capability`` (``sm_`` and its digits,
    a feature letter allowed: ``sm_90a``); else InvalidInputError. The form is the one
    :func:`kernels.toolchains.check_arch` accepts (iobound imports no kernels).

    >>> check_arch_of("sm_90a", (9, 0))
    'sm_90a'
    >>> check_arch_of("sm_80", (7, 0))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: device arch 'sm_80' is not that of compute capability (7, 0) (sm_70)
    """
    match = ARCH_PATTERN.fullmatch(arch) if isinstance(arch, str) else None
    if match is None:
        raise InvalidInputError(f"device arch must be spelled sm_<digits> (sm_80, sm_90a), "
                                f"got {arch!r:.60}")
    want = arch_of(compute_capability)
    if f"sm_{match.group(1)}" != want:
        raise InvalidInputError(f"device arch {arch!r} is not that of compute capability "
                                f"{tuple(compute_capability)} ({want})")
    return arch


def check_consistent(device) -> None:
    """InvalidInputError for fields of ``device`` (a :class:`~iobound.device_spec.Device`) that
    no GPU has together: a block larger than an SM (threads or
    static shared memory), a warp that is not a power of two or larger than a block, an
    FP32 peak more than twice what its SMs, cores and clock give.

    A :class:`~iobound.device_spec.Device` runs it when built:

    >>> import dataclasses
    >>> from iobound.devices import get_device
    >>> check_consistent(get_device("A100"))   # a real GPU: nothing to say
    >>> dataclasses.replace(get_device("A100"), warp_size=48)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: device warp_size=48 must be a power of two ...
    """
    if device.max_threads_per_block > device.max_threads_per_sm:
        raise InvalidInputError(f"device max_threads_per_block={device.max_threads_per_block} "
                                f"is above max_threads_per_sm={device.max_threads_per_sm}: "
                                f"a block runs on one SM")
    if device.shared_mem_per_block_bytes > device.shared_mem_per_sm_bytes:
        raise InvalidInputError(f"device shared_mem_per_block_bytes="
                                f"{device.shared_mem_per_block_bytes} is above "
                                f"shared_mem_per_sm_bytes={device.shared_mem_per_sm_bytes}: "
                                f"a block's shared memory is on one SM")
    # twice, not equal: a datasheet's peak may use a boost clock and clock_mhz the base one;
    # beyond that the fields describe no GPU (an SM count changed without the peak: the
    # performance model would give one SM the whole chip's peak)
    from_clock = device.fp32_peak_from_clock_gflops
    if device.fp32_peak_gflops > 2 * from_clock:
        raise InvalidInputError(f"device fp32_peak_gflops={device.fp32_peak_gflops:g} is more "
                                f"than twice sm_count * fp32_cores_per_sm * 2 * clock_mhz / 1000 "
                                f"= {from_clock:g}: change the peak with the SMs, cores or clock")
    w = device.warp_size
    if w & (w - 1) or w > device.max_threads_per_block:
        raise InvalidInputError(f"device warp_size={w} must be a power of two (32 on NVIDIA "
                                f"GPUs, 64 on AMD ones) of at most max_threads_per_block="
                                f"{device.max_threads_per_block}")
