"""One GPU's numbers as a checked type (:class:`Device`), and CUDA's per-block limits.

The numbers bounds, occupancy and roofline models need: per-SM limits and whole-chip
throughput, every field checked when a Device is built (by a preset, by hand, with
``dataclasses.replace`` or :meth:`Device.from_dict`), so an odd field is one line naming
it. The presets and the lookup by name are :mod:`iobound.devices`'.

Examples
--------
>>> from iobound.devices import get_device
>>> v100 = get_device("v100")
>>> isinstance(v100, Device), v100.max_threads_per_block == CUDA_MAX_THREADS_PER_BLOCK
(True, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, fields

from .device_checks import (check_arch_of, check_compute_capability, check_consistent,
                            check_device_name, check_new_device_name)
from .errors import InvalidInputError
from .units import dtype_bytes

__all__ = ["Device", "KIB", "MIB", "CUDA_MAX_THREADS_PER_BLOCK", "CUDA_MAX_REGISTERS_PER_THREAD",
           "RATE_RANGE"]

KIB = 1024
MIB = 1024 * KIB

#: Most threads one CUDA block may have (every compute capability from 2.0): the default of
#: :attr:`Device.max_threads_per_block` and the emulator's limit (kernels/cuda_emu.h).
CUDA_MAX_THREADS_PER_BLOCK = 1024
#: Most registers ptxas gives one thread (every compute capability from 3.5): the default
#: of :attr:`Device.registers_per_thread_max` and the cap of the pruning rule's register
#: need (:func:`kernels.limits.thread_registers`).
CUDA_MAX_REGISTERS_PER_THREAD = 255
#: The range taken for a device's DRAM bandwidth (GB/s) and FP32 peak (GFLOP/s): GPUs sit
#: between tens and tens of thousands; far outside it a roofline time is 0 or inf.
RATE_RANGE = (1e-3, 1e9)


def _amount(name: str, value):
    """A byte or flop count, a number or a numpy array (:func:`iobound.limits.check_amounts`;
    a list is neither), as a float or a float array."""
    import numbers

    import numpy as np

    from . import limits
    if not isinstance(value, (np.ndarray, numbers.Real)):
        raise InvalidInputError(f"{name} must be finite numbers >= 0 (a number or an array), "
                                f"got {value!r:.60}")
    amounts = limits.check_amounts(name, value)
    return amounts if isinstance(value, np.ndarray) else float(amounts)


@dataclass(frozen=True)
class Device:
    """One GPU model: per-SM limits and whole-chip throughput.

    Parameters
    ----------
    name : str
        Canonical preset name, e.g. ``"A100-PCIE-40GB"``.
    arch, compute_capability : str, (int, int)
        ``"sm_80"`` and ``(8, 0)``.
    sm_count, fp32_cores_per_sm : int
        Streaming multiprocessors and FP32 lanes in each.
    shared_mem_per_sm_bytes : int
        Largest shared-memory carve-out of one SM.
    shared_mem_per_block_optin_bytes : int
        Largest dynamic shared memory one block may request (after opting in).
    registers_per_sm, max_threads_per_sm, max_blocks_per_sm : int
        32-bit registers, resident threads and resident blocks per SM.
    dram_bandwidth_gbs, fp32_peak_gflops : float
        Peak DRAM bandwidth (GB/s, 1e9 bytes) and FP32 FMA peak (GFLOP/s).
    l2_bytes, clock_mhz : int
        L2 cache size and boost clock.
    source : str
        Where the numbers come from.
    shared_mem_per_block_bytes : int
        Static shared memory limit of one block (48 KiB on every listed device).
    registers_per_thread_max, max_threads_per_block, warp_size : int
        255, 1024 and 32 on every listed device.
    aliases : tuple of str
        Other names :func:`iobound.devices.get_device` accepts.

    Examples
    --------
    >>> from dataclasses import replace
    >>> from iobound.devices import get_device
    >>> a100 = get_device("a100")
    >>> a100.name, a100.sm_count, a100.compute_capability, round(a100.fp32_peak_gflops)
    ('A100-SXM4-40GB', 108, (8, 0), 19500)
    >>> mine = replace(a100, name="my-A100", sm_count=100, aliases=())   # checked again
    >>> mine.sm_count, Device.from_dict(mine.to_dict()) == mine
    (100, True)
    """

    name: str
    arch: str
    compute_capability: tuple[int, int]
    sm_count: int
    fp32_cores_per_sm: int
    shared_mem_per_sm_bytes: int
    shared_mem_per_block_optin_bytes: int
    registers_per_sm: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    dram_bandwidth_gbs: float
    fp32_peak_gflops: float
    l2_bytes: int
    clock_mhz: int
    source: str
    shared_mem_per_block_bytes: int = 48 * KIB
    registers_per_thread_max: int = CUDA_MAX_REGISTERS_PER_THREAD
    max_threads_per_block: int = CUDA_MAX_THREADS_PER_BLOCK
    warp_size: int = 32
    aliases: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # a Device built by hand (or with dataclasses.replace / from_dict) is checked here,
        # so an odd field is one line naming it, never a TypeError inside a kernel check
        from . import limits
        for f in ("name", "arch", "source"):
            if not isinstance(getattr(self, f), str):
                raise InvalidInputError(f"device {f} must be a string, got {getattr(self, f)!r:.60}")
        # a blank name would be stored nowhere (a tune measures everything, then cannot
        # log it): refused here, as the tuning database refuses it
        check_new_device_name(self.name)
        object.__setattr__(self, "compute_capability",
                           check_compute_capability(self.compute_capability))
        check_arch_of(self.arch, self.compute_capability)
        for f in ("sm_count", "fp32_cores_per_sm", "shared_mem_per_sm_bytes",
                  "shared_mem_per_block_optin_bytes", "registers_per_sm", "max_threads_per_sm",
                  "max_blocks_per_sm", "l2_bytes", "clock_mhz", "shared_mem_per_block_bytes",
                  "registers_per_thread_max", "max_threads_per_block", "warp_size"):
            object.__setattr__(self, f, limits.check_int(
                f"device {f}", getattr(self, f), limits.Limit(1, 1 << 48, "a hardware size")))
        for f in ("dram_bandwidth_gbs", "fp32_peak_gflops"):
            # stored as float (a numpy float is no JSON); within RATE_RANGE, so a time
            # from it is never 0 or inf
            object.__setattr__(self, f, float(limits.check_number(
                f"device {f}", getattr(self, f), *RATE_RANGE)))
        if isinstance(self.aliases, (str, bytes)) or not isinstance(self.aliases, (tuple, list)) \
                or not all(isinstance(a, str) for a in self.aliases):
            raise InvalidInputError(f"device aliases must be a tuple of strings, got "
                                    f"{self.aliases!r:.60}")
        object.__setattr__(self, "aliases", tuple(check_device_name(a) for a in self.aliases))
        check_consistent(self)

    def shared_mem_per_block_words(self, dtype: str = "fp32", opt_in: bool = False) -> int:
        """Shared memory one block can use, in values of ``dtype``.

        ``opt_in=False`` gives the static limit (what a kernel with static
        ``__shared__`` arrays gets); ``opt_in=True`` the dynamic opt-in maximum.

        Examples
        --------
        >>> from iobound.devices import get_device
        >>> get_device("h100").shared_mem_per_block_words("fp16", opt_in=True)
        116224
        """
        if not isinstance(opt_in, bool):  # "no" is truthy: not taken for True
            raise InvalidInputError(f"opt_in must be True or False, got {opt_in!r}")
        size = self.shared_mem_per_block_optin_bytes if opt_in else self.shared_mem_per_block_bytes
        return size // dtype_bytes(dtype)

    @property
    def fp32_peak_from_clock_gflops(self) -> float:
        """``sm_count * fp32_cores_per_sm * 2 * clock_mhz / 1000`` (FMA = 2 FLOP).

        >>> from iobound.devices import get_device
        >>> v100 = get_device("v100")   # 80 SMs x 64 lanes x 2 x 1530 MHz, near the listed peak
        >>> round(v100.fp32_peak_from_clock_gflops, 1), v100.fp32_peak_gflops
        (15667.2, 15700.0)
        """
        return self.sm_count * self.fp32_cores_per_sm * 2 * self.clock_mhz / 1000

    def memory_time_ms(self, nbytes):
        """Milliseconds to move ``nbytes`` at the DRAM bandwidth (a number or a numpy array):
        the roofline's memory floor.

        >>> from iobound.devices import get_device
        >>> get_device("v100").memory_time_ms(9e8)   # 0.9 GB at 900 GB/s
        1.0
        """
        return _amount("nbytes", nbytes) / (self.dram_bandwidth_gbs * 1e9) * 1e3

    def compute_time_ms(self, flops):
        """Milliseconds to execute ``flops`` at the FP32 peak (a number or a numpy array): the
        roofline's compute floor.

        >>> from iobound.devices import get_device
        >>> get_device("v100").compute_time_ms(15.7e9)
        1.0
        """
        return _amount("flops", flops) / (self.fp32_peak_gflops * 1e9) * 1e3

    @property
    def machine_balance_flop_per_byte(self) -> float:
        """FP32 peak over DRAM bandwidth: the roofline ridge point.

        >>> from iobound.devices import get_device
        >>> round(get_device("v100").machine_balance_flop_per_byte, 2)   # 15700 / 900
        17.44
        """
        return self.fp32_peak_gflops / self.dram_bandwidth_gbs

    def to_dict(self) -> dict:
        """All fields, JSON-ready (tuples become lists).

        >>> from iobound.devices import get_device
        >>> d = get_device("v100").to_dict()
        >>> d["name"], d["compute_capability"], d["aliases"][:2]
        ('V100-SXM2', [7, 0], ['v100', 'v100-sxm2-16gb'])
        """
        d = asdict(self)
        d["compute_capability"] = list(self.compute_capability)
        d["aliases"] = list(self.aliases)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Device":
        """Inverse of :meth:`to_dict`.

        >>> from iobound.devices import get_device
        >>> Device.from_dict({**get_device("v100").to_dict(), "speed": 1})
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: device fields: missing none; unknown speed
        """
        if not isinstance(d, Mapping):
            raise InvalidInputError(f"a device must be a mapping of its fields, got {type(d).__name__}")
        missing = [f.name for f in fields(cls) if f.default is MISSING and f.name not in d]
        unknown = sorted(str(k)[:40] for k in d if k not in {f.name for f in fields(cls)})
        if missing or unknown:
            raise InvalidInputError(f"device fields: missing {', '.join(missing) or 'none'}; "
                                    f"unknown {', '.join(unknown) or 'none'}")
        d = dict(d)
        d["compute_capability"] = tuple(d["compute_capability"]) if isinstance(
            d["compute_capability"], (list, tuple)) else d["compute_capability"]
        if isinstance(d.get("aliases"), list):   # to_dict's list; anything else is checked
            d["aliases"] = tuple(d["aliases"])
        return cls(**d)
