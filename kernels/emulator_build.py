"""Build what the CPU emulator runs: a kernel's source as a shared library against
``cuda_emu.h`` (:func:`build_emulator`) and the launcher that runs each launch in a
process of its own (:func:`build_launcher`, :mod:`kernels.emulator_launch`), both with
``$CXX`` or g++ into the emulator cache.

Each build is cached by the hash of its source, the header, the compiler's version and
its flags, and loaded from the cache only when :func:`kernels.cache.is_trusted` (the
sha256 recorded at build time matches, in a folder only this user can write) and the
file is no ELF cut short. ``cuda_emu.h`` is precompiled once per compiler (half a build).

Examples
--------
>>> lib, seconds, cached = build_emulator('extern "C" int k() { return 1; }')
>>> lib.suffix, build_emulator('extern "C" int k() { return 1; }')[2]
('.so', True)
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from iobound.errors import InvalidInputError, IoboundError, ToolchainError

from .cache import (cache_dir, compiler_env, content_key, file_digest, is_trusted, record_digest,
                    remove_orphans, scratch_folder)
from .compiler_process import check_compiler_text, run_compiler
from .emulator_launch import LAUNCHER_SOURCE
from .limits import COMPILE_TIMEOUT_S, check_timeout

__all__ = ["EmulatorBuildError", "build_emulator", "build_launcher", "compiler_version",
           "emulated_source", "HEADER", "CXX_FLAGS", "VERSION_TIMEOUT_S"]

log = logging.getLogger(__name__)

HEADER = Path(__file__).with_name("cuda_emu.h")
CXX_FLAGS = ("-O2", "-std=c++20", "-pthread", "-shared", "-fPIC", "-DIOBOUND_EMULATOR")


class EmulatorBuildError(IoboundError):
    """g++ rejected the emulator build (or, ``timed_out``, ran past its timeout: nothing was
    rejected); ``log`` holds the compiler output.

    Examples
    --------
    :func:`build_emulator` raises it; the message is short, the log has g++'s words:

    >>> err = EmulatorBuildError("g++ failed (exit 1)", "kernel.cu:3:1: error: expected ';'")
    >>> str(err), err.log, err.timed_out
    ('g++ failed (exit 1)', "kernel.cu:3:1: error: expected ';'", False)
    """

    def __init__(self, message: str, log_text: str, timed_out: bool = False):
        super().__init__(message)
        self.log = log_text
        self.timed_out = timed_out


def _cxx() -> str:
    """The emulator's compiler: ``$CXX`` when set (a program on PATH or a path), else g++."""
    cxx = os.environ.get("CXX") or shutil.which("g++")
    if not cxx:
        raise ToolchainError("g++ not found (set CXX or install g++ >= 11 for -std=c++20)")
    if not shutil.which(cxx):
        raise ToolchainError(f"CXX={cxx[:200]!r} is not a program that can be run (set CXX to "
                             "a g++ >= 11, or unset it to use g++ from PATH)")
    return cxx


#: Seconds ``$CXX --version`` may take (a compiler that hangs is no compiler).
VERSION_TIMEOUT_S = 60.0


@lru_cache(maxsize=None)
def _cxx_version(cxx: str) -> str:
    try:
        return run_compiler([cxx, "--version"], timeout=VERSION_TIMEOUT_S).stdout
    except OSError as exc:  # not an executable file after all (a script without #!, ...)
        raise ToolchainError(f"the emulator compiler {cxx[:200]!r} cannot be run: "
                             f"{exc.strerror or exc}") from None
    except subprocess.TimeoutExpired:
        raise ToolchainError(f"the emulator compiler {cxx[:200]!r} did not answer --version "
                             f"within {VERSION_TIMEOUT_S:g} s") from None


def compiler_version() -> str:
    """First line of the emulator compiler's ``--version`` (ToolchainError without g++)."""
    return _cxx_version(_cxx()).splitlines()[0]


def _pch_dir(cxx: str, folder: Path, timeout: float | None = None) -> Path | None:
    """A folder holding ``cuda_emu.h.gch`` (precompiled header), built once per header and g++.

    The C++ standard headers dominate a build; precompiling them halves it. None when the
    header cannot be precompiled (the build then simply includes the header).
    """
    flags = [f for f in CXX_FLAGS if f != "-shared"]
    key = content_key(HEADER.read_text(), _cxx_version(cxx), " ".join(flags))
    pch = folder / f"pch-{key[:20]}"
    if is_trusted(pch / "cuda_emu.h.gch"):
        return pch
    with scratch_folder(folder) as tmp:
        proc = run_compiler([cxx, *flags, "-x", "c++-header", str(HEADER), "-o",
                             str(tmp / "cuda_emu.h.gch")], timeout=timeout, env=compiler_env(tmp))
        if proc.returncode != 0:
            log.debug("precompiling cuda_emu.h failed, building without it:\n%s", proc.stderr[-4000:])
            return None
        record_digest(tmp / "cuda_emu.h.gch")
        for _ in range(2):
            try:
                tmp.rename(pch)  # the scratch folder becomes the pch folder (nothing to remove)
                return pch
            except OSError:  # another process won the race (use theirs), or a stale folder
                if is_trusted(pch / "cuda_emu.h.gch"):
                    return pch
                shutil.rmtree(pch, ignore_errors=True)
    return None


def _truncated_elf(path: Path) -> bool:
    """Whether ``path`` is an ELF file cut short: a header, segment or section it names
    lies past its end. Such a library is never loaded: the dynamic loader maps the missing
    pages and the process dies of SIGBUS when it touches them (a recorded digest vouches
    only for the bytes it was computed on). A file that is no ELF at all is not one (the
    loader refuses it with an error)."""
    import struct

    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
            size = os.fstat(fh.fileno()).st_size
            if head[:4] != b"\x7fELF":
                return False
            wide = len(head) > 4 and head[4] == 2
            if len(head) < (64 if wide else 52) or head[5:6] not in (b"\x01", b"\x02"):
                return True
            end = "<" if head[5] == 1 else ">"
            if wide:
                phoff, shoff = struct.unpack_from(end + "QQ", head, 32)
                phentsize, phnum, shentsize, shnum = struct.unpack_from(end + "HHHH", head, 54)
                entry, at = end + "IIQQQQQQ", (2, 5)  # p_offset, p_filesz
            else:
                phoff, shoff = struct.unpack_from(end + "II", head, 28)
                phentsize, phnum, shentsize, shnum = struct.unpack_from(end + "HHHH", head, 42)
                entry, at = end + "IIIIIIII", (1, 4)
            if phoff + phentsize * phnum > size or (shnum and shoff + shentsize * shnum > size):
                return True
            if phnum and phentsize < struct.calcsize(entry):
                return True
            fh.seek(phoff)
            table = fh.read(phentsize * phnum)
    except OSError:
        return True
    for i in range(phnum):
        fields = struct.unpack_from(entry, table, i * phentsize)
        if fields[at[0]] + fields[at[1]] > size:
            return True
    return False


def build_emulator(code: str, cache_root: str | Path | None = None,
                   timeout: float = COMPILE_TIMEOUT_S) -> tuple[Path, float, bool]:
    """Compile ``code``, a source that includes ``cuda_emu.h`` as generated kernels do, for
    the emulator (:func:`emulated_source` of it: its floats count their arithmetic);
    returns (library path, build seconds, cache hit).

    Raises
    ------
    InvalidInputError
        ``code`` is no string or ``timeout`` no number of seconds > 0.
    ToolchainError
        No g++.
    EmulatorBuildError
        The source does not compile (``.log`` has g++'s messages), g++ timed out, or the
        build could not be written (a full disk).

    Examples
    --------
    What is no source text is refused before g++ runs:

    >>> build_emulator(b'extern "C" int k() { return 1; }')
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: code must be the kernel's source text, got bytes
    """
    if not isinstance(code, str):
        raise InvalidInputError(f"code must be the kernel's source text, got {type(code).__name__}")
    check_compiler_text("code", code)
    check_timeout("timeout", timeout)
    return _cached_build(_cxx(), emulated_source(code), KERNEL_BUILD, cache_root, timeout)


def emulated_source(code: str) -> str:
    r"""``code`` as the emulator compiles it: every ``float`` the ``emu::real`` of
    ``cuda_emu.h``, a float that counts each binary operation done on it (the launch's flops
    counter). The same arithmetic in the same order (a double operand, which nvcc would
    compute in double, does not compile); a word-bounded rename of one type, outside
    ``#include`` lines.

    >>> emulated_source("#include <float.h>\nfloat a = 0.5f * b[i]; // floats")
    '#include <float.h>\nemu::real a = 0.5f * b[i]; // floats'
    """
    if not isinstance(code, str):
        raise InvalidInputError(f"code must be CUDA source text, got {type(code).__name__} "
                                f"{code!r:.60}")
    return "".join(line if _INCLUDE.match(line) else _FLOAT.sub("emu::real", line)
                   for line in code.splitlines(keepends=True))


_INCLUDE = re.compile(r"\s*#\s*include\b")
_FLOAT = re.compile(r"\bfloat\b")


def build_launcher(cache_root: str | Path | None = None,
                   timeout: float = COMPILE_TIMEOUT_S) -> Path:
    """The launcher that runs each emulated launch in a process of its own
    (:mod:`kernels.emulator_launch`), built once per compiler into the emulator cache.

    Raises ToolchainError without g++ and EmulatorBuildError when it cannot be built.

    Examples
    --------
    A timeout that is no positive number of seconds is refused before g++ runs:

    >>> build_launcher(timeout=0)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: timeout must be a finite number in (0, 1e+06], got 0
    """
    check_timeout("timeout", timeout)
    return _cached_build(_cxx(), LAUNCHER_SOURCE.read_text(), LAUNCHER_BUILD, cache_root,
                         timeout)[0]


@dataclass(frozen=True)
class _Recipe:
    """How one kind of emulator artefact is built: g++'s flags before the source and the
    libraries after it, whether cuda_emu.h (and its precompiled form) is included, and
    the names of the source and of the cached file's suffix."""

    flags: tuple[str, ...]
    libraries: tuple[str, ...]
    header: bool
    source: str
    suffix: str


KERNEL_BUILD = _Recipe(CXX_FLAGS, (), True, "kernel.cu", ".so")
LAUNCHER_BUILD = _Recipe(("-O2", "-std=c++17"), ("-ldl",), False, "launcher.cpp", ".launcher")


def _cached_build(cxx: str, code: str, recipe: _Recipe, cache_root, timeout: float):
    """(path, build seconds, cache hit) of ``code`` built by ``recipe`` in the emulator
    cache, reused when the trusted cache holds it (:func:`kernels.cache.is_trusted`)."""
    key = content_key(code, HEADER.read_text(), _cxx_version(cxx), " ".join(recipe.flags))
    start = time.perf_counter()
    for attempt in range(2):  # again once when the cache folder went away under the build
        folder = cache_dir("emu", cache_root)
        target = folder / f"{key}{recipe.suffix}"
        if is_trusted(target) and not _truncated_elf(target):  # only what we built, unchanged
            return target, 0.0, True
        remove_orphans(folder)  # the scratch folders of builders that were killed
        try:
            if _build(cxx, code, recipe, folder, target, start, timeout):
                break
        except OSError as exc:  # a full disk, a file-size limit: not the kernel's fault
            if attempt == 0 and isinstance(exc, FileNotFoundError):  # the folder went away
                continue
            raise EmulatorBuildError(f"cannot build in {folder}: {exc.strerror or exc}",
                                     f"{type(exc).__name__}: {exc}") from None
    else:
        raise EmulatorBuildError(f"cannot build in {folder}: it was removed during the build "
                                 "twice", "")
    seconds = time.perf_counter() - start
    log.debug("built emulator %s in %.2f s", target.name, seconds)
    return target, seconds, False


def _build(cxx: str, code: str, recipe: _Recipe, folder: Path, target: Path, start: float,
           timeout: float | None) -> bool:
    """Build ``code`` into ``target`` in a scratch folder of ``folder``; False when g++
    failed because that scratch folder was removed under it (the cache deleted by another
    process: nothing the kernel did), else EmulatorBuildError for a failed build."""
    with scratch_folder(folder) as tmp:
        try:
            src = tmp / recipe.source
            src.write_text(code)
            out = tmp / f"build{recipe.suffix}"
            try:
                includes = []
                if recipe.header:  # the build's one timeout covers the precompiled header too
                    pch = _pch_dir(cxx, folder, timeout)
                    includes = ([f"-I{pch}"] if pch else []) + [f"-I{HEADER.parent}"]
                cmd = [cxx, *recipe.flags, *includes, "-x", "c++", str(src), "-x", "none",
                       *recipe.libraries, "-o", str(out)]
                left = None if timeout is None else max(timeout - (time.perf_counter() - start), 1e-3)
                proc = run_compiler(cmd, timeout=left, env=compiler_env(tmp))
            except subprocess.TimeoutExpired as exc:
                raise EmulatorBuildError(f"g++ timed out after {timeout} s", str(exc),
                                         timed_out=True) from None
            if proc.returncode != 0:
                if not tmp.is_dir():  # g++ could not read or write its files: they were removed
                    return False
                raise EmulatorBuildError(f"g++ failed (exit {proc.returncode})",
                                         proc.stdout + proc.stderr)
            digest = file_digest(out)
            os.replace(out, target)  # atomic: concurrent builders of one key agree
            record_digest(target, digest)
        except OSError:
            if not tmp.is_dir():
                return False
            raise
    return True
