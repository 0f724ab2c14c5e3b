"""Compile generated kernels to cubins with nvcc, parse ptxas' resource usage, cache results.

* :func:`find_nvcc` and :func:`find_toolchain` (:mod:`kernels.toolchains`, re-exported
  here) find the compiler for an arch.
* :func:`compile_cubin` runs ``nvcc -cubin -arch=sm_XX -O3 -Xptxas -v`` (or, for an arch
  no nvcc supports, such as sm_70 under CUDA 13, NVRTC + ptxas from the CUDA 12 wheels,
  :mod:`kernels.nvrtc`) and returns a :class:`CompileResult` (status ``OK``,
  ``COMPILE_ERROR`` or ``TIMEOUT``, with the log): a failure never raises. Results are cached in
  ``$IOBOUND_CACHE/cubin`` keyed by sha256(source, arch, flags, ``nvcc --version``), and
  used only when the record and cubin match the sha256 recorded at build time in a
  folder only this user can write (:func:`kernels.cache.is_trusted`).
* :func:`compile_many` compiles in parallel (threads driving nvcc processes).
* :func:`parse_ptxas` (:mod:`kernels.ptxas`) reads registers, shared memory, spills
  from ``-Xptxas -v`` output.

Examples
--------
>>> compile_cubin("int k;", "80")
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: arch must look like sm_80, got '80'
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Sequence

from iobound import limits
from iobound.errors import InvalidInputError

from .cache import (cache_dir, compiler_env, content_key, file_digest, is_trusted, record_digest,
                    remove_orphans, scratch_folder)
from .compiler_process import check_compiler_text, run_compiler
from .limits import COMPILE_TIMEOUT_S, check_timeout
from .nvcc_flags import MANAGED_FLAGS, check_extra_flags
from .ptxas import PtxasInfo, parse_ptxas
from .source import KernelSource
from .status import Status
from .toolchains import Toolchain, check_arch, find_nvcc, find_toolchain, nvcc_candidates, toolchain

__all__ = ["find_nvcc", "nvcc_candidates", "Toolchain", "toolchain", "PtxasInfo", "parse_ptxas",
           "CompileResult", "compile_cubin", "compile_many", "find_toolchain", "check_arch",
           "NVCC_FLAGS", "MANAGED_FLAGS", "check_extra_flags"]

log = logging.getLogger(__name__)

NVCC_FLAGS = ("-cubin", "-O3", "-std=c++17", "-Xptxas", "-v")

#: Threads compile_many may run, each driving one compiler process.
_WORKERS = limits.Limit(1, 1 << 10, "compile workers: each drives an nvcc process")


# -- compiling ---------------------------------------------------------------------

@dataclass(frozen=True)
class CompileResult:
    """Outcome of one nvcc run: ``Status.OK``, ``COMPILE_ERROR`` or ``TIMEOUT``.

    Resource fields are None unless the status is ``OK``. :meth:`to_dict` writes the
    status as its string value; the constructor parses one back.

    >>> r = CompileResult(status="timeout", arch="sm_80", log="timed out", seconds=120.0)
    >>> r.status, r.ok, r.to_dict()["status"], CompileResult(**r.to_dict()) == r
    (<Status.TIMEOUT: 'timeout'>, False, 'timeout', True)
    """

    status: Status
    arch: str
    log: str
    seconds: float
    cached: bool = False
    cubin_path: str | None = None
    registers: int | None = None
    shared_bytes: int | None = None
    spill_stores: int | None = None
    spill_loads: int | None = None
    toolchain: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", Status.parse(self.status))

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    def to_dict(self) -> dict:
        return {**asdict(self), "status": self.status.value}


def _unsupported(arch: str) -> CompileResult:
    """The result for an ``arch`` no toolchain supports, listing the arches each supports.

    Raises ToolchainError when there is no CUDA compiler at all (not a property of the kernel).
    """
    from iobound.errors import ToolchainError

    from .nvrtc import find_nvrtc_toolchain

    found = [toolchain(p) for p in nvcc_candidates()]
    wheels = find_nvrtc_toolchain()
    if not found and wheels is None:
        raise ToolchainError("nvcc not found on PATH, IOBOUND_NVCC, CUDA_HOME or the "
                             "nvidia-cuda-nvcc wheel")
    lines = [f"no nvcc found supports {arch}" + (" (nor NVRTC + ptxas of the CUDA 12 wheels)."
                                                 if wheels is not None else ".")]
    for t in [*found, *([wheels] if wheels is not None else [])]:
        kind = "NVRTC" if t.kind == "nvrtc" else "CUDA"
        lines.append(f"{t.path} ({kind} {t.release}) supports: {', '.join(t.archs) or 'unknown'}")
    if arch == "sm_70":
        lines.append("CUDA 13 dropped sm_70 (Volta); compile for it with a CUDA 12.x toolkit "
                     "(set IOBOUND_NVCC or CUDA_HOME to it), or pip install "
                     "nvidia-cuda-nvrtc-cu12 nvidia-cuda-nvcc-cu12 (NVRTC + ptxas).")
    return CompileResult(status=Status.COMPILE_ERROR, arch=arch, log="\n".join(lines), seconds=0.0)


def _run(tc, code: str, arch: str, flags: Sequence[str], tmp: Path, timeout: float):
    """Run the toolchain in ``tmp``; returns (exit code, log text, cubin path)."""
    from .nvrtc import NvrtcError, NvrtcToolchain, nvrtc_ptx

    out = tmp / "kernel.cubin"
    if isinstance(tc, NvrtcToolchain):
        try:
            ptx = nvrtc_ptx(tc, code, arch)
        except NvrtcError as exc:
            return 1, str(exc), out
        (tmp / "kernel.ptx").write_text(ptx)
        cmd = [tc.ptxas, f"-arch={arch}", "-O3", "-v", "kernel.ptx", "-o", out.name]
    else:
        (tmp / "kernel.cu").write_text(code)
        cmd = [tc.path, *flags, "kernel.cu", "-o", out.name]
    # every path relative to ``tmp``, its temporary files too: nvcc runs its stages
    # through sh with the paths in double quotes, so a cache folder whose path holds
    # a $, ` or " would be expanded by the shell (and the build fail)
    proc = run_compiler(cmd, timeout=timeout, cwd=tmp, env={**compiler_env(tmp), "TMPDIR": "."})
    return proc.returncode, proc.stdout + proc.stderr, out


def compile_cubin(source: KernelSource | str, arch: str = "sm_80", *, nvcc: str | None = None,
                  cache_root: str | Path | None = None, timeout: float = COMPILE_TIMEOUT_S,
                  extra_flags: Sequence[str] | None = ()) -> CompileResult:
    """Compile ``source`` to a cubin for ``arch``; never raises for a bad kernel.

    Uses the first nvcc that supports ``arch`` (or ``nvcc``), else NVRTC + ptxas from the
    CUDA 12 wheels; with neither, a ``compile_error`` result says which arches exist.

    Raises
    ------
    InvalidInputError
        (a ValueError) ``arch`` is not of the form ``sm_XX``, ``timeout`` is no number of
        seconds > 0, ``source`` or ``extra_flags`` is of the wrong type, or an extra flag
        sets what compile_cubin sets (:func:`check_extra_flags`; None is no flags).
    ToolchainError
        No CUDA compiler at all (not a property of the kernel).

    Examples
    --------
    >>> compile_cubin("int k;", "sm_80", extra_flags=["-arch=sm_90"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: extra_flags: '-arch=sm_90' sets -arch, which compile_cubin ...
    """
    check_arch(arch)
    check_timeout("timeout", timeout)
    if not isinstance(source, (KernelSource, str)):
        raise InvalidInputError(f"source must be a KernelSource or CUDA source text, "
                                f"got {type(source).__name__}")
    extra_flags = check_extra_flags(extra_flags)
    code = source.code if isinstance(source, KernelSource) else source
    check_compiler_text("source", code)
    name = source.name if isinstance(source, KernelSource) else None
    tc = find_toolchain(arch, nvcc)
    if tc is None:
        return _unsupported(arch)
    flags = (*NVCC_FLAGS, f"-arch={arch}", *extra_flags)
    key = content_key(code, arch, " ".join(flags), tc.version_text)
    for attempt in range(2):  # again once when the cache folder went away under the compile
        folder = cache_dir("cubin", cache_root)
        meta, cubin = folder / f"{key}.json", folder / f"{key}.cubin"
        cached = _cached_result(meta, cubin)
        if cached is not None:
            return cached
        remove_orphans(folder)  # the scratch folders of compilers whose process was killed
        try:
            result, keep = _compile(tc, code, name, arch, flags, cubin, timeout)
        except FileNotFoundError as exc:  # the folder went away before a scratch was made
            result, keep = CompileResult(status=Status.COMPILE_ERROR, arch=arch, seconds=0.0,
                                         toolchain=tc.release,
                                         log=f"cannot build in {folder}: {exc}"), False
            if attempt == 0:
                continue
        if result is not _GONE:
            break
    else:
        result, keep = CompileResult(status=Status.COMPILE_ERROR, arch=arch, seconds=0.0,
                                     toolchain=tc.release, log=f"cannot build in {folder}: it "
                                     "was removed during the compile twice"), False
    if keep:
        _write_record(meta, result)
        log.debug("compiled %s for %s in %.2f s: %s", name, arch, result.seconds, result.status.value)
    return result


def _compile(tc, code: str, name: str | None, arch: str, flags: Sequence[str], cubin: Path,
             timeout: float) -> tuple[CompileResult, bool]:
    """Compile in a scratch folder beside ``cubin``; the result and whether to cache it
    (not when the compiler timed out or could not be run, nor a failure that is not the
    kernel's: :func:`kernel_at_fault`)."""
    start = time.perf_counter()
    with scratch_folder(cubin.parent) as tmp:
        try:
            code_rc, text, out = _run(tc, code, arch, flags, tmp, timeout)
        except subprocess.TimeoutExpired:
            return CompileResult(status=Status.TIMEOUT, arch=arch, seconds=time.perf_counter() - start,
                                 log=f"compiler timed out after {timeout} s", toolchain=tc.release), False
        except OSError as exc:  # the compiler vanished or cannot execute
            if not tmp.is_dir():  # or its folder was removed (the cache deleted meanwhile)
                return _GONE, False
            return CompileResult(status=Status.COMPILE_ERROR, arch=arch, toolchain=tc.release,
                                 seconds=time.perf_counter() - start,
                                 log=f"could not run the compiler {tc.path}: {exc}"), False
        seconds = time.perf_counter() - start
        if code_rc != 0 or not out.exists():
            if not tmp.is_dir():  # its files were removed under it: nothing the kernel did
                return _GONE, False
            return CompileResult(status=Status.COMPILE_ERROR, arch=arch, log=text, seconds=seconds,
                                 toolchain=tc.release), kernel_at_fault(code_rc, text)
        try:
            return _install(out, cubin, text, name, arch, seconds, tc.release), True
        except FileNotFoundError:
            if not tmp.is_dir():
                return _GONE, False
            raise


#: What :func:`_compile` returns when the scratch folder was removed under the compiler
#: (the cache deleted by another process): compiled again, never the kernel's failure.
_GONE = CompileResult(status=Status.COMPILE_ERROR, arch="", log="scratch folder removed",
                      seconds=0.0)


#: What a compiler says when the kernel itself is wrong: an error at a line of the source
#: (nvcc, NVRTC) or ptxas refusing the code (too much shared memory, too many registers).
_KERNEL_FAULT = re.compile(r"\(\d+\): (?:catastrophic )?error|ptxas (?:error|fatal)\s*:")


def kernel_at_fault(returncode: int, log_text: str) -> bool:
    """Whether a failed compile is the kernel's fault, so that compiling it again would fail
    again and the failure may be cached: the compiler exited with an error it tied to the
    code (:data:`_KERNEL_FAULT`). Anything else (a signal, a file it could not write, a
    full disk) may pass: cached, it would fail that kernel in every later run.

    >>> kernel_at_fault(1, 'kernel.cu(12): error: identifier "q" is undefined')
    True
    >>> kernel_at_fault(1, "Could not open output file 'kernel.cubin'"), kernel_at_fault(-9, "")
    (False, False)
    """
    return returncode > 0 and _KERNEL_FAULT.search(log_text) is not None


def _install(out: Path, cubin: Path, text: str, name: str | None, arch: str, seconds: float,
             release: str) -> CompileResult:
    """Move the built ``out`` to ``cubin`` (digest recorded); the ``OK`` result with the
    resources ptxas reported in ``text`` for entry ``name`` (else the first entry)."""
    infos = parse_ptxas(text)
    info = infos.get(name) if name else next(iter(infos.values()), None)
    digest = file_digest(out)
    os.replace(out, cubin)
    record_digest(cubin, digest)
    return CompileResult(
        status=Status.OK, arch=arch, log=text, seconds=seconds, cubin_path=str(cubin),
        registers=info.registers if info else None, shared_bytes=info.shared_bytes if info else None,
        spill_stores=info.spill_stores if info else None,
        spill_loads=info.spill_loads if info else None, toolchain=release)


def _write_record(meta: Path, result: CompileResult) -> None:
    """Write ``result`` to ``meta`` atomically (a concurrent reader sees all or nothing)
    and record its digest."""
    tmp_meta = meta.with_suffix(f".{os.getpid()}.{time.monotonic_ns()}.tmp")
    tmp_meta.write_text(json.dumps(result.to_dict()))
    digest = file_digest(tmp_meta)
    os.replace(tmp_meta, meta)
    record_digest(meta, digest)


def _cached_result(meta: Path, cubin: Path) -> CompileResult | None:
    """The cached result when its record and cubin are what we built (digests match) and,
    for a failure, the failure is the kernel's (:func:`kernel_at_fault`), else None (the
    caller rebuilds)."""
    if not is_trusted(meta):
        return None
    try:
        stored = json.loads(meta.read_text())
        result = replace(CompileResult(**stored), cached=True)
    except (ValueError, TypeError):  # not our record after all: rebuild
        return None
    if result.status.is_ok and not (is_trusted(cubin) and result.cubin_path == str(cubin)):
        return None
    if result.status is Status.COMPILE_ERROR and not kernel_at_fault(1, result.log):
        return None  # cached by an older version, though not the kernel's fault: try again
    return result


def compile_many(sources: Sequence[KernelSource | str], arch: str = "sm_80", *,
                 workers: int | None = None, **kwargs) -> list[CompileResult]:
    """Compile several sources in parallel (results in input order).

    nvcc spends much of its wall time starting its sub-tools, so the default runs two
    compilations per core.

    >>> compile_many([])
    []
    >>> compile_many("int k;")  # one source is no sequence of them
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: sources must be a sequence of sources, got one str
    """
    if isinstance(sources, (str, bytes, KernelSource)):
        raise InvalidInputError("sources must be a sequence of sources, got one "
                                f"{type(sources).__name__}")
    try:
        sources = list(sources)
    except TypeError:
        raise InvalidInputError(f"sources must be a sequence of sources, got "
                                f"{type(sources).__name__}") from None
    if workers is not None:
        workers = limits.check_int("workers", workers, _WORKERS)
    workers = workers or max(1, min(len(sources), 2 * (os.cpu_count() or 1)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda s: compile_cubin(s, arch, **kwargs), sources))
