"""A second way to a cubin: NVRTC (CUDA C++ -> PTX) plus ptxas, from the CUDA 12 pip wheels.

CUDA 13's nvcc no longer targets sm_70 (Volta), and the ``nvidia-cuda-nvcc-cu12`` wheel
ships ptxas but no nvcc driver. ``nvidia-cuda-nvrtc-cu12`` (libnvrtc.so.12) compiles
our self-contained kernels to PTX for ``compute_70``, and the wheel's ptxas assembles
that into an sm_70 cubin with the same ``-v`` resource report nvcc prints. The generated
sources need no host compiler and no headers, so nothing else is required.

:func:`find_nvrtc_toolchain` finds the pair (or returns None); :func:`nvrtc_ptx`
compiles source to PTX, returning the log on failure.

Examples
--------
>>> find_nvrtc_toolchain("sm_1") is None   # no toolchain targets a made-up arch
True
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
from dataclasses import dataclass
from typing import ClassVar
from functools import lru_cache
from pathlib import Path

from iobound.errors import InvalidInputError, IoboundError

from .compiler_process import check_compiler_text
from .toolchains import arch_supported, check_arch, cuda_release

__all__ = ["NvrtcToolchain", "find_nvrtc_toolchain", "nvrtc_ptx", "NvrtcError"]


class NvrtcError(IoboundError):
    """NVRTC rejected the source; the message is NVRTC's log."""


@dataclass(frozen=True)
class NvrtcToolchain:
    """libnvrtc + ptxas of one CUDA release, and the sm_XX they can target.

    >>> tc = NvrtcToolchain(nvrtc="libnvrtc.so.12", ptxas="ptxas", version_text="",
    ...                     release="12.9", archs=("sm_70", "sm_80"))
    >>> tc.kind, tc.path, tc.supports("sm_70")
    ('nvrtc', 'libnvrtc.so.12 + ptxas', True)
    """

    nvrtc: str
    ptxas: str
    version_text: str
    release: str
    archs: tuple[str, ...]
    kind: ClassVar[str] = "nvrtc"

    @property
    def path(self) -> str:
        return f"{self.nvrtc} + {self.ptxas}"

    def supports(self, arch: str) -> bool:
        """Whether NVRTC and ptxas target ``arch`` (:func:`kernels.toolchains.arch_supported`)."""
        return arch_supported(arch, self.archs, self.release)


def _wheel_files() -> tuple[Path, Path] | None:
    """(libnvrtc.so.12, ptxas) from the cu12 wheels on sys.path, or None."""
    for entry in sys.path:
        base = Path(entry or ".") / "nvidia"
        lib = base / "cuda_nvrtc" / "lib" / "libnvrtc.so.12"
        ptxas = base / "cuda_nvcc" / "bin" / "ptxas"
        if lib.is_file() and ptxas.is_file():
            return lib, ptxas
    return None


@lru_cache(maxsize=None)
def _load(lib_path: str):
    return ctypes.CDLL(lib_path)


@lru_cache(maxsize=None)
def _toolchain(lib_path: str, ptxas: str) -> NvrtcToolchain | None:
    try:
        lib = _load(lib_path)
        major, minor, count = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
        lib.nvrtcGetNumSupportedArchs(ctypes.byref(count))
        archs = (ctypes.c_int * count.value)()
        lib.nvrtcGetSupportedArchs(archs)
        ptxas_version = subprocess.run([ptxas, "--version"], capture_output=True, text=True,
                                       timeout=60, check=False).stdout
    except (OSError, AttributeError, subprocess.TimeoutExpired):
        return None
    # ptxas must accept what NVRTC emits: keep the archs both know (ptxas has no list option).
    ptxas_release = cuda_release(ptxas_version)
    release = f"{major.value}.{minor.value}"
    if ptxas_release is None or ptxas_release.split(".")[0] != str(major.value):
        return None
    return NvrtcToolchain(nvrtc=lib_path, ptxas=ptxas, release=release,
                          version_text=f"nvrtc {release}\n{ptxas_version}",
                          archs=tuple(f"sm_{a}" for a in archs))


def find_nvrtc_toolchain(arch: str | None = None) -> NvrtcToolchain | None:
    """The CUDA 12 wheels' NVRTC + ptxas (supporting ``arch`` when given), or None."""
    files = _wheel_files()
    if files is None:
        return None
    tc = _toolchain(str(files[0]), str(files[1]))
    if tc is None or (arch is not None and not tc.supports(arch)):
        return None
    return tc


def nvrtc_ptx(tc: NvrtcToolchain, code: str, arch: str, name: str = "kernel.cu") -> str:
    """PTX of ``code`` for ``arch`` (compute_XX); raises NvrtcError with NVRTC's log, and
    InvalidInputError for a ``code`` or ``name`` no compiler can be given (not text, a NUL,
    which NVRTC would take as the end of the text, or a lone surrogate:
    :func:`kernels.compiler_process.check_compiler_text`) or an ``arch`` not ``sm_XX``.

    >>> tc = NvrtcToolchain("libnvrtc.so.12", "ptxas", "", "12.9", ("sm_70", "sm_80"))
    >>> nvrtc_ptx(tc, "int k;" + chr(0), "sm_80")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: source: 'int k;\\x00' holds a NUL character, ...
    """
    for what, text in (("source", code), ("name", name)):
        if not isinstance(text, str):
            raise InvalidInputError(f"{what} must be text, got "
                                    f"{type(text).__name__} {text!r:.60}")
        check_compiler_text(what, text)
    check_arch(arch)
    if not isinstance(tc, NvrtcToolchain):
        raise InvalidInputError(f"tc must be an NvrtcToolchain, got {type(tc).__name__}")
    lib = _load(tc.nvrtc)
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), code.encode(), name.encode(), 0, None, None):
        raise NvrtcError("nvrtcCreateProgram failed")
    try:
        opts = [f"--gpu-architecture=compute_{arch[3:]}".encode(), b"-std=c++17"]
        status = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        if status != 0:
            raise NvrtcError(log.value.decode(errors="replace"))
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        ptx = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetPTX(prog, ptx)
        return ptx.value.decode()
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
