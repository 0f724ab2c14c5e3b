"""Device presets: the GPU numbers that bounds, occupancy and roofline models need.

Two kinds of numbers, from two kinds of sources:

* per compute capability (shared memory per SM and per block, threads and blocks
  per SM, registers): the CUDA C++ Programming Guide, table "Technical
  Specifications per Compute Capability" (``_CC_LIMITS`` below);
* per product (SM count, FP32 cores per SM, boost clock, DRAM bandwidth, L2 size,
  FP32 peak): NVIDIA's architecture whitepapers and product datasheets, cited in
  each preset's ``source``.

``fp32_peak_gflops`` is the vendor's published figure; it agrees with
``sm_count * fp32_cores_per_sm * 2 * clock_mhz / 1000`` to within rounding (tested).
Sizes are bytes; :meth:`Device.shared_mem_per_block_words` converts to words.

Look-ups ignore case, spaces, hyphens and underscores and a leading vendor word
("NVIDIA", "GeForce", "Tesla", "Quadro"), so the names CUDA reports work too.

Examples
--------
>>> d = get_device("NVIDIA A100-PCIE-40GB")
>>> d.name, d.arch, d.sm_count, d.dram_bandwidth_gbs
('A100-PCIE-40GB', 'sm_80', 108, 1555.0)
>>> get_device("v100").shared_mem_per_block_words("fp32")   # static 48 KiB
12288
>>> get_device("v100").shared_mem_per_block_words("fp32", opt_in=True)
24576
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, fields

from .device_checks import (arch_of, check_arch_of, check_consistent, check_device_name,
                            check_new_device_name)
from .errors import InvalidInputError, UnknownPresetError
from .units import dtype_bytes

__all__ = ["Device", "DEVICES", "device_names", "get_device", "canonical_device_name",
           "check_device_name", "check_arch_of", "CUDA_MAX_THREADS_PER_BLOCK",
           "CUDA_MAX_REGISTERS_PER_THREAD"]

KIB = 1024
MIB = 1024 * KIB

#: Most threads one CUDA block may have (every compute capability from 2.0): the default of
#: :attr:`Device.max_threads_per_block` and the emulator's limit (kernels/cuda_emu.h).
CUDA_MAX_THREADS_PER_BLOCK = 1024
#: Most registers ptxas gives one thread (every compute capability from 3.5): the default
#: of :attr:`Device.registers_per_thread_max` and the cap of the pruning rule's register
#: need (:func:`kernels.limits.thread_registers`).
CUDA_MAX_REGISTERS_PER_THREAD = 255

_CUDA_GUIDE = ("CUDA C++ Programming Guide, 'Technical Specifications per Compute "
               "Capability' table")

# (shared/SM, opt-in shared/block, max threads/SM, max resident blocks/SM) per
# compute capability, from the CUDA C++ Programming Guide table named above.
_CC_LIMITS: dict[tuple[int, int], tuple[int, int, int, int]] = {
    (5, 2): (96 * KIB, 48 * KIB, 2048, 32),
    (6, 1): (96 * KIB, 48 * KIB, 2048, 32),
    (7, 0): (96 * KIB, 96 * KIB, 2048, 32),
    (7, 5): (64 * KIB, 64 * KIB, 1024, 16),
    (8, 0): (164 * KIB, 163 * KIB, 2048, 32),
    (8, 6): (100 * KIB, 99 * KIB, 1536, 16),
    (9, 0): (228 * KIB, 227 * KIB, 2048, 32),
}


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
        Other names :func:`get_device` accepts.
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
        cc = self.compute_capability
        if not (isinstance(cc, (tuple, list)) and len(cc) == 2):
            raise InvalidInputError(f"device compute_capability must be a pair of ints, got {cc!r:.60}")
        object.__setattr__(self, "compute_capability", tuple(
            limits.check_int("device compute_capability", v, limits.Limit(0, 1 << 10, "a version"))
            for v in cc))
        if self.compute_capability[0] < 1:  # CUDA's first GPUs were 1.0
            raise InvalidInputError(f"device compute_capability must be at least (1, 0), "
                                    f"got {self.compute_capability}")
        check_arch_of(self.arch, self.compute_capability)
        for f in ("sm_count", "fp32_cores_per_sm", "shared_mem_per_sm_bytes",
                  "shared_mem_per_block_optin_bytes", "registers_per_sm", "max_threads_per_sm",
                  "max_blocks_per_sm", "l2_bytes", "clock_mhz", "shared_mem_per_block_bytes",
                  "registers_per_thread_max", "max_threads_per_block", "warp_size"):
            object.__setattr__(self, f, limits.check_int(
                f"device {f}", getattr(self, f), limits.Limit(1, 1 << 48, "a hardware size")))
        for f in ("dram_bandwidth_gbs", "fp32_peak_gflops"):
            limits.check_number(f"device {f}", getattr(self, f), 0, low_open=True)
        if isinstance(self.aliases, (str, bytes)) or not isinstance(self.aliases, (tuple, list)) \
                or not all(isinstance(a, str) for a in self.aliases):
            raise InvalidInputError(f"device aliases must be a tuple of strings, got "
                                    f"{self.aliases!r:.60}")
        object.__setattr__(self, "aliases", tuple(self.aliases))
        check_consistent(self)

    def shared_mem_per_block_words(self, dtype: str = "fp32", opt_in: bool = False) -> int:
        """Shared memory one block can use, in values of ``dtype``.

        ``opt_in=False`` gives the static limit (what a kernel with static
        ``__shared__`` arrays gets); ``opt_in=True`` the dynamic opt-in maximum.

        Examples
        --------
        >>> get_device("h100").shared_mem_per_block_words("fp16", opt_in=True)
        116224
        """
        if not isinstance(opt_in, bool):  # "no" is truthy: not taken for True
            raise InvalidInputError(f"opt_in must be True or False, got {opt_in!r}")
        size = self.shared_mem_per_block_optin_bytes if opt_in else self.shared_mem_per_block_bytes
        return size // dtype_bytes(dtype)

    @property
    def fp32_peak_from_clock_gflops(self) -> float:
        """``sm_count * fp32_cores_per_sm * 2 * clock_mhz / 1000`` (FMA = 2 FLOP)."""
        return self.sm_count * self.fp32_cores_per_sm * 2 * self.clock_mhz / 1000

    def memory_time_ms(self, nbytes):
        """Milliseconds to move ``nbytes`` at the DRAM bandwidth (a number or a numpy array):
        the roofline's memory floor.

        >>> get_device("v100").memory_time_ms(9e8)   # 0.9 GB at 900 GB/s
        1.0
        """
        return nbytes / (self.dram_bandwidth_gbs * 1e9) * 1e3

    def compute_time_ms(self, flops):
        """Milliseconds to execute ``flops`` at the FP32 peak (a number or a numpy array): the
        roofline's compute floor.

        >>> get_device("v100").compute_time_ms(15.7e9)
        1.0
        """
        return flops / (self.fp32_peak_gflops * 1e9) * 1e3

    @property
    def machine_balance_flop_per_byte(self) -> float:
        """FP32 peak over DRAM bandwidth: the roofline ridge point."""
        return self.fp32_peak_gflops / self.dram_bandwidth_gbs

    def to_dict(self) -> dict:
        """All fields, JSON-ready (tuples become lists)."""
        d = asdict(self)
        d["compute_capability"] = list(self.compute_capability)
        d["aliases"] = list(self.aliases)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Device":
        """Inverse of :meth:`to_dict`."""
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
        d["aliases"] = tuple(d.get("aliases", ()))
        return cls(**d)


def _preset(name: str, cc: tuple[int, int], sm_count: int, cores_per_sm: int,
            clock_mhz: int, bandwidth_gbs: float, peak_gflops: float, l2_bytes: int,
            source: str, aliases: tuple[str, ...]) -> Device:
    per_sm, optin, threads, blocks = _CC_LIMITS[cc]
    return Device(
        name=name, arch=arch_of(cc), compute_capability=cc, sm_count=sm_count,
        fp32_cores_per_sm=cores_per_sm, shared_mem_per_sm_bytes=per_sm,
        shared_mem_per_block_optin_bytes=optin, registers_per_sm=64 * 1024,
        max_threads_per_sm=threads, max_blocks_per_sm=blocks,
        dram_bandwidth_gbs=float(bandwidth_gbs), fp32_peak_gflops=float(peak_gflops),
        l2_bytes=l2_bytes, clock_mhz=clock_mhz,
        source=f"{source}; per-SM limits: {_CUDA_GUIDE} (CC {cc[0]}.{cc[1]})",
        aliases=aliases,
    )


_PRESETS = (
    _preset("V100-SXM2", (7, 0), 80, 64, 1530, 900, 15_700, 6 * MIB,
            "NVIDIA Tesla V100 GPU Architecture whitepaper (WP-08608-001), Table 1 "
            "(V100 SXM2; the 16 GB and 32 GB boards differ only in DRAM size)",
            ("v100", "v100-sxm2-16gb", "v100-sxm2-32gb", "v100-16gb", "v100-32gb")),
    _preset("A100-SXM4-40GB", (8, 0), 108, 64, 1410, 1555, 19_500, 40 * MIB,
            "NVIDIA A100 Tensor Core GPU Architecture whitepaper, Table 3; "
            "NVIDIA A100 datasheet (A100 40GB SXM)",
            ("a100", "a100-sxm4", "a100-40gb")),
    _preset("A100-PCIE-40GB", (8, 0), 108, 64, 1410, 1555, 19_500, 40 * MIB,
            "NVIDIA A100 datasheet (A100 40GB PCIe); NVIDIA A100 Tensor Core GPU "
            "Architecture whitepaper, Table 3",
            ("a100-pcie",)),
    _preset("H100-SXM5-80GB", (9, 0), 132, 128, 1980, 3350, 67_000, 50 * MIB,
            "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM); NVIDIA H100 Tensor "
            "Core GPU Architecture whitepaper (SM count, L2)",
            ("h100", "h100-sxm5", "h100-sxm", "h100-80gb-hbm3")),  # the driver's name
    _preset("RTX-A4000", (8, 6), 48, 128, 1560, 448, 19_200, 4 * MIB,
            "NVIDIA RTX A4000 datasheet (6144 CUDA cores, 448 GB/s, 19.2 TFLOPS FP32); "
            "NVIDIA Ampere GA102 GPU Architecture whitepaper (GA10x SM)",
            ("a4000",)),
    _preset("RTX-A6000", (8, 6), 84, 128, 1800, 768, 38_700, 6 * MIB,
            "NVIDIA RTX A6000 datasheet (10752 CUDA cores, 768 GB/s, 38.7 TFLOPS FP32); "
            "NVIDIA Ampere GA102 GPU Architecture whitepaper",
            ("a6000",)),
    _preset("RTX-3090", (8, 6), 82, 128, 1695, 936, 35_580, 6 * MIB,
            "NVIDIA Ampere GA102 GPU Architecture whitepaper, Table (GeForce RTX 3090)",
            ("3090", "rtx3090")),
    _preset("T4", (7, 5), 40, 64, 1590, 320, 8_100, 4 * MIB,
            "NVIDIA T4 Tensor Core GPU datasheet; NVIDIA Turing GPU Architecture "
            "whitepaper (TU104)",
            ()),
    _preset("GTX-1080-Ti", (6, 1), 28, 128, 1582, 484, 11_340, 2816 * KIB,
            "NVIDIA GeForce GTX 1080 Ti specifications (3584 CUDA cores, 1582 MHz boost, "
            "11 Gbps GDDR5X on 352 bits = 484 GB/s); L2 = 11 of GP102's 12 x 256 KB slices",
            ("gtx1080ti", "1080ti")),
    _preset("TITAN-X-Maxwell", (5, 2), 24, 128, 1075, 336.5, 6_605, 3 * MIB,
            "NVIDIA GeForce GTX TITAN X specifications (3072 CUDA cores, 1075 MHz boost, "
            "7 Gbps GDDR5 on 384 bits); FP32 peak = cores x 2 x boost clock",
            ("gtx-titan-x", "titan-x-maxwell", "titanx-maxwell")),
)

DEVICES: dict[str, Device] = {d.name: d for d in _PRESETS}

_VENDOR_WORDS = ("nvidia", "geforce", "tesla", "quadro")


def _key(text: str) -> str:
    key = re.sub(r"[^a-z0-9]", "", text.lower())
    stripped = True
    while stripped:
        stripped = False
        for word in _VENDOR_WORDS:
            if key.startswith(word) and len(key) > len(word):
                key, stripped = key[len(word):], True
    return key


def _index() -> dict[str, Device]:
    index: dict[str, Device] = {}
    for dev in _PRESETS:
        for label in (dev.name, *dev.aliases):
            key = _key(label)
            if key in index and index[key] is not dev:
                raise RuntimeError(f"device alias {label!r} names two presets")
            index[key] = dev
    return index


_INDEX = _index()


def device_names() -> list[str]:
    """Canonical names of all device presets, in table order."""
    return list(DEVICES)


def get_device(name: str) -> Device:
    """The device preset called ``name`` (canonical name or alias, any case).

    Raises
    ------
    iobound.errors.UnknownPresetError
        Listing the known names.

    Examples
    --------
    >>> get_device("NVIDIA GeForce GTX 1080 Ti").name
    'GTX-1080-Ti'
    """
    if not isinstance(name, str):  # str() of a list or an object is no name
        raise InvalidInputError(f"a device name must be a string, got {name!r:.60}")
    dev = _INDEX.get(_key(name))
    if dev is None:
        raise UnknownPresetError(
            f"unknown device {name!r:.60}; choose one of {', '.join(device_names())}"
        )
    return dev


def canonical_device_name(name: str) -> str:
    """The preset's name when ``name`` names a preset (its name or an alias, any case,
    vendor words ignored: what :func:`get_device` accepts); otherwise ``name`` unchanged.

    ``iobound tune --device v100`` records its measurements under ``V100-SXM2``: a
    device named by the user (e.g. ``history import --device``) should be stored under
    this name too, so one device has one name in a tuning database. Names read from
    files (a Kernel Tuner cache's ``device_name``) are the file's and are best kept.

    Examples
    --------
    >>> canonical_device_name("v100"), canonical_device_name("NVIDIA RTX A4000")
    ('V100-SXM2', 'RTX-A4000')
    >>> canonical_device_name("my lab GPU")
    'my lab GPU'
    """
    if not isinstance(name, str):
        raise InvalidInputError(f"a device name must be a string, got {name!r:.60}")
    dev = _INDEX.get(_key(name))
    return name if dev is None else dev.name
