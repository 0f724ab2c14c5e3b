"""Device presets (:class:`~iobound.device_spec.Device` values) and their lookup by name.

Two kinds of numbers, from two kinds of sources:

* per compute capability (shared memory per SM and per block, threads and blocks
  per SM, registers): the CUDA C++ Programming Guide, table "Technical
  Specifications per Compute Capability" (``_CC_LIMITS`` below);
* per product (SM count, FP32 cores per SM, boost clock, DRAM bandwidth, L2 size,
  FP32 peak): NVIDIA's architecture whitepapers and product datasheets, cited in
  each preset's ``source``.

``fp32_peak_gflops`` is the vendor's published figure; it agrees with
``sm_count * fp32_cores_per_sm * 2 * clock_mhz / 1000`` to within rounding (tested).
Sizes are bytes; :meth:`~iobound.device_spec.Device.shared_mem_per_block_words` converts
to words.

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

from .device_checks import arch_of, check_arch_of, check_device_name
from .device_spec import KIB, MIB, Device
from .errors import InvalidInputError, UnknownPresetError

__all__ = ["DEVICES", "device_names", "get_device", "canonical_device_name",
           "check_device_name", "check_arch_of"]

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
    """Canonical names of all device presets, in table order.

    >>> device_names()[:3], len(device_names())
    (['V100-SXM2', 'A100-SXM4-40GB', 'A100-PCIE-40GB'], 10)
    """
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
