"""Finding the CUDA toolchains on this machine, and which arches each can target.

:func:`find_nvcc` looks on ``$IOBOUND_NVCC`` (a choice: naming no program is an error),
PATH, ``$CUDA_HOME``/``$CUDA_PATH``, ``/usr/local/cuda`` and the ``nvidia-cuda-nvcc`` pip
wheel's bin folder; with ``arch`` it returns the first nvcc whose ``--list-gpu-arch``
supports it. :func:`find_toolchain` is what :func:`kernels.nvcc.compile_cubin` compiles
with: that nvcc, else NVRTC + ptxas from the CUDA 12 wheels (:mod:`kernels.nvrtc`).

Examples
--------
>>> check_arch("sm_90a")
'sm_90a'
>>> find_nvcc("sm_10") is None  # no toolchain targets a made-up arch
True
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import ClassVar, Sequence
from functools import lru_cache
from pathlib import Path

from iobound.device_checks import ARCH_PATTERN
from iobound.errors import InvalidInputError

__all__ = ["nvcc_candidates", "Toolchain", "toolchain", "check_arch", "find_nvcc",
           "find_toolchain", "cuda_release", "arch_supported", "ARCH_VARIANTS"]


def cuda_release(version_text: str) -> str | None:
    """The CUDA release (``"13.0"``) a tool's ``--version`` prints (nvcc's, ptxas'), or None.

    >>> cuda_release("Cuda compilation tools, release 13.0, V13.0.48")
    '13.0'
    """
    if not isinstance(version_text, str):
        raise InvalidInputError(f"version_text must be a tool's --version text, got "
                                f"{type(version_text).__name__} {version_text!r:.60}")
    m = re.search(r"release (\d+\.\d+)", version_text)
    return m.group(1) if m else None



def _wheel_bins() -> list[Path]:
    """bin folders of the nvidia-cuda-nvcc wheels (cu12 layout and cu13 layout)."""
    found = []
    for entry in sys.path:
        base = Path(entry or ".") / "nvidia"
        for sub in ("cuda_nvcc/bin", "cu13/bin", "cu12/bin"):
            if (base / sub / "nvcc").is_file():
                found.append(base / sub)
    return found


def nvcc_candidates() -> list[str]:
    """Every nvcc found, in lookup order, duplicates (same real file) removed.

    ``$IOBOUND_NVCC`` is a choice: naming no executable file, or a program whose
    ``--version`` names no CUDA release, is a :class:`~iobound.errors.ToolchainError`, not
    a silent fall-back to another nvcc (an nvcc that cannot target an arch is passed over
    for one that can, as the README says).

    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"IOBOUND_NVCC": "/no/such/nvcc"}):
    ...     nvcc_candidates()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.ToolchainError: IOBOUND_NVCC='/no/such/nvcc' is not an executable file ...
    """
    paths: list[Path] = []
    chosen = os.environ.get("IOBOUND_NVCC")
    if chosen:
        if not (Path(chosen).is_file() and os.access(chosen, os.X_OK)):
            from iobound.errors import ToolchainError
            raise ToolchainError(f"IOBOUND_NVCC={chosen[:200]!r} is not an executable file (set "
                                 "it to an nvcc, or unset it to look on PATH and CUDA_HOME)")
        if toolchain(chosen).release == "unknown":  # /bin/false: not an nvcc, not a choice
            from iobound.errors import ToolchainError
            raise ToolchainError(f"IOBOUND_NVCC={chosen[:200]!r} is no nvcc: its --version names "
                                 "no CUDA release (set it to an nvcc, or unset it to look on "
                                 "PATH and CUDA_HOME)")
        paths.append(Path(chosen))
    which = shutil.which("nvcc")
    if which:
        paths.append(Path(which))
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            paths.append(Path(os.environ[var]) / "bin" / "nvcc")
    paths.append(Path("/usr/local/cuda/bin/nvcc"))
    paths.extend(b / "nvcc" for b in _wheel_bins())
    seen, result = set(), []
    for p in paths:
        if p.is_file() and os.access(p, os.X_OK):
            real = p.resolve()
            if real not in seen:
                seen.add(real)
                result.append(str(p))
    return result


#: Arch-specific suffixes, each with the first base arch that has it and the first CUDA
#: release that compiles it: ``a`` (sm_90a, 12.0) and ``f`` (family, sm_100f, 12.9). The
#: compilers list their base arches only (``--list-gpu-arch`` prints compute_90, never
#: compute_90a; ``--list-gpu-code`` sm_90), so a variant is matched through its base.
ARCH_VARIANTS = {"a": (90, (12, 0)), "f": (100, (12, 9))}


def arch_supported(arch: str, archs: Sequence[str], release: str) -> bool:
    """Whether a compiler of CUDA ``release`` whose base arches are ``archs`` targets
    ``arch``: listed, or an arch-specific variant (:data:`ARCH_VARIANTS`) of a listed base
    arch that has the variant, in a release that knows it.

    >>> arch_supported("sm_90a", ("sm_80", "sm_90"), "13.0")
    True
    >>> arch_supported("sm_80a", ("sm_80",), "13.0"), arch_supported("sm_90f", ("sm_90",), "13.0")
    (False, False)
    """
    if arch in archs:
        return True
    m = re.fullmatch(r"(sm_(\d+))([a-z])", arch) if isinstance(arch, str) else None
    if m is None or m.group(3) not in ARCH_VARIANTS or m.group(1) not in archs:
        return False
    first_base, first_release = ARCH_VARIANTS[m.group(3)]
    got = re.fullmatch(r"(\d+)\.(\d+)", release or "")
    return (int(m.group(2)) >= first_base and got is not None
            and (int(got.group(1)), int(got.group(2))) >= first_release)


@dataclass(frozen=True)
class Toolchain:
    """One nvcc: its path, ``--version`` text, release and the sm_XX it can target.

    >>> tc = Toolchain(path="/opt/cuda/bin/nvcc", version_text="", release="12.4",
    ...                archs=("sm_70", "sm_80", "sm_90"))
    >>> tc.kind, tc.supports("sm_90a"), tc.supports("sm_100")
    ('nvcc', True, False)
    """

    path: str
    version_text: str
    release: str
    archs: tuple[str, ...]
    #: the compiler's name in labels (``"nvcc 13.0"``, ``"nvrtc 12.9"``: history and --reuse key on them)
    kind: ClassVar[str] = "nvcc"

    def supports(self, arch: str) -> bool:
        """Whether this nvcc targets ``arch`` (:func:`arch_supported`: ``sm_90a`` too)."""
        return arch_supported(arch, self.archs, self.release)


def toolchain(path: str) -> Toolchain:
    """Ask ``path`` (an nvcc) for its version and supported architectures.

    >>> toolchain(80)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: path must be the path of an nvcc, got int 80
    """
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidInputError(f"path must be the path of an nvcc, got {type(path).__name__} "
                                f"{path!r:.60}")
    return _toolchain(os.fspath(path))


@lru_cache(maxsize=None)
def _toolchain(path: str) -> Toolchain:
    def run(*args):
        try:
            return subprocess.run([path, *args], capture_output=True, text=True, timeout=60,
                                  check=False).stdout
        except (OSError, subprocess.TimeoutExpired):
            return ""
    version = run("--version")
    archs = tuple(f"sm_{n}" for n in re.findall(r"compute_(\d+)", run("--list-gpu-arch")))
    return Toolchain(path=path, version_text=version, release=cuda_release(version) or "unknown",
                     archs=archs)


toolchain.cache_clear = _toolchain.cache_clear  # type: ignore[attr-defined]


def check_arch(arch) -> str:
    """``arch`` when it is spelled ``sm_XX`` (``sm_80``, ``sm_90a``); else InvalidInputError.

    >>> check_arch("sm_86")
    'sm_86'
    >>> check_arch(80)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: arch must look like sm_80, got 80
    """
    if not isinstance(arch, str) or not ARCH_PATTERN.fullmatch(arch):
        raise InvalidInputError(f"arch must look like sm_80, got {arch!r:.60}")
    return arch


def find_nvcc(arch: str | None = None) -> str | None:
    """Path of an nvcc (supporting ``arch`` when given), or None when there is none.

    >>> find_nvcc("sm_10") is None  # no toolchain targets a made-up arch
    True
    >>> find_nvcc("compute_80")     # spelled as find_toolchain and compile_cubin take it
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: arch must look like sm_80, got 'compute_80'
    """
    if arch is not None:
        check_arch(arch)
    for path in nvcc_candidates():
        if arch is None or toolchain(path).supports(arch):
            return path
    return None


def find_toolchain(arch: str, nvcc: str | None = None):
    """The toolchain :func:`compile_cubin` uses for ``arch``: an nvcc supporting it, else
    the CUDA 12 wheels' NVRTC + ptxas (:mod:`kernels.nvrtc`), else None.

    ``arch`` must be spelled ``sm_XX`` (InvalidInputError otherwise).

    >>> find_toolchain("sm_80", nvcc=12.4)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: nvcc must be a path to an nvcc, got float
    """
    from .nvrtc import find_nvrtc_toolchain

    check_arch(arch)
    if nvcc is not None and not isinstance(nvcc, (str, os.PathLike)):
        raise InvalidInputError(f"nvcc must be a path to an nvcc, got {type(nvcc).__name__}")
    path = os.fspath(nvcc) if nvcc else find_nvcc(arch)
    if path is not None:
        return toolchain(path)
    return find_nvrtc_toolchain(arch)
