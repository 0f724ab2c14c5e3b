"""Folders a build works in, which nothing killed leaves behind.

A build works in a scratch folder of its own (:func:`scratch_folder`, ``.build-*`` in the
cache folder; the compiler's own temporary files go there too), removed when the build
ends. A builder killed outright (SIGKILL at an executor's timeout) cannot remove it, so
each scratch folder is held under a lock while in use: :func:`remove_orphans`, run before
every build and by the local executor after it kills a worker, removes those no process
holds. A private folder (:func:`private_folder`, for a cache that is unsafe) is removed
when its process ends, or, if the process was killed, by the next process that makes one.

>>> import tempfile
>>> parent = tempfile.mkdtemp()
>>> with scratch_folder(parent) as tmp:
...     _ = (tmp / "kernel.cu").write_text("int k;")
...     tmp.name.startswith(BUILD_PREFIX)
True
>>> list(Path(parent).iterdir())
[]
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from iobound.arg_checks import check_choice, check_path

__all__ = ["BUILD_PREFIX", "PRIVATE_PREFIX", "scratch_folder", "compiler_env", "private_folder",
           "remove_orphans", "remove_all_orphans", "CACHE_KINDS", "check_kind"]


#: Name prefixes of the folders held under a lock while in use (see the module doc).
BUILD_PREFIX = ".build-"
PRIVATE_PREFIX = "iobound-private-"
#: The cache folders (``kernels.cache.cache_dir`` kinds) that builds make scratch folders in.
BUILD_KINDS = ("cubin", "emu")
#: Every kind of cache folder (:func:`kernels.cache.cache_dir`): the builds' and the
#: generated sources' (``src``). A kind is a folder name under the root, never a path.
CACHE_KINDS = (*BUILD_KINDS, "src")


def check_kind(kind) -> str:
    """``kind`` when it is one of :data:`CACHE_KINDS`; else InvalidInputError (``"../x"``
    or ``"/tmp/x"`` would make a folder outside the cache, ``""`` name the root itself).

    >>> check_kind("../esc")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: kind must be one of cubin, emu, src; got '../esc'
    """

    return check_choice("kind", kind, CACHE_KINDS)

#: Locked folders this process holds for its whole life (private folders): path -> fd.
_HELD: dict[str, int] = {}


def _locked_folder(parent: Path | str, prefix: str) -> tuple[Path, int]:
    """A new folder in ``parent`` and an open descriptor holding an exclusive lock on it.

    A sweeper (:func:`remove_orphans`) may lock and remove the folder between its creation
    and our lock; then another is made. Where the file system has no such locks, the
    folder is used unlocked (no sweeper can lock it either: it is never removed by one)."""
    while True:
        path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:  # a sweeper removed it before we could lock it
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # a sweeper holds it: it is the sweeper's to remove
            os.close(fd)
            continue
        except OSError:  # no locks here
            return path, fd
        try:
            st = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:  # a sweeper removed it before we locked it
            os.close(fd)
            continue
        held = os.fstat(fd)
        if (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino):
            return path, fd
        os.close(fd)


def remove_orphans(folder: Path | str, prefix: str = BUILD_PREFIX) -> int:
    """Remove the folders named ``prefix*`` in ``folder`` that are ours and that no process
    holds (their builder was killed); returns how many. ``folder`` must be a path (None
    would be the current folder) and ``prefix`` :data:`BUILD_PREFIX` or
    :data:`PRIVATE_PREFIX` (another would sweep folders that are not ours); else
    InvalidInputError.

    Examples
    --------
    A killed builder's folder goes; one a build holds stays (until its block ends):

    >>> import tempfile
    >>> parent = Path(tempfile.mkdtemp())
    >>> (parent / f"{BUILD_PREFIX}killed").mkdir()
    >>> with scratch_folder(parent):
    ...     remove_orphans(parent)
    1
    >>> list(parent.iterdir())
    []
    """

    folder = check_path("folder", folder)
    check_choice("prefix", prefix, (BUILD_PREFIX, PRIVATE_PREFIX))
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            if os.fstat(fd).st_uid != os.getuid():
                continue
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # in use
            continue
        else:
            shutil.rmtree(entry.path, ignore_errors=True)
            removed += 1
        finally:
            os.close(fd)
    return removed


def remove_all_orphans(root: Path | str | None = None) -> int:
    """:func:`remove_orphans` in every kind of the cache under ``root`` (default
    :func:`cache_root`) and among the private folders; returns how many were removed.
    Never raises for a missing or unreadable folder; a ``root`` that is no path (str or
    os.PathLike) is an InvalidInputError.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "emu" / f"{BUILD_PREFIX}killed").mkdir(parents=True)
    >>> remove_all_orphans(root) >= 1, list((root / "emu").iterdir())
    (True, [])
    >>> remove_all_orphans(root / "missing") >= 0
    True
    """

    from .cache import absolute_root

    if root is not None:
        check_path("root", root)
    base = absolute_root(root)
    removed = remove_orphans(tempfile.gettempdir(), PRIVATE_PREFIX)
    if base is None:  # a root with no home to expand ~ to: nothing of it to sweep
        return removed
    # only the kinds builds work in: the root may hold folders that are not ours
    for kind in BUILD_KINDS:
        try:
            if stat.S_ISDIR(os.lstat(base / kind).st_mode):  # a link is not followed
                removed += remove_orphans(base / kind)
        except OSError:
            pass
    return removed


@contextlib.contextmanager
def scratch_folder(folder: Path | str) -> Iterator[Path]:
    """A new folder in ``folder`` for one build, removed when the block ends (however it
    ends: an error, KeyboardInterrupt); held under a lock meanwhile, so that if the builder
    is killed outright :func:`remove_orphans` removes it later.

    Examples
    --------
    A failed build leaves nothing behind:

    >>> import tempfile
    >>> try:
    ...     with scratch_folder(tempfile.mkdtemp()) as tmp:
    ...         raise RuntimeError("g++ failed")
    ... except RuntimeError:
    ...     tmp.exists()
    False
    """
    path, fd = _locked_folder(folder, BUILD_PREFIX)
    try:
        yield path
    finally:
        try:
            shutil.rmtree(path, ignore_errors=True)
        finally:
            os.close(fd)


def compiler_env(scratch: Path | str) -> dict[str, str]:
    """The environment for a compiler run in ``scratch``: its temporary files (g++'s
    ``cc*.s``, nvcc's ``tmpxft_*``) go there, so they go with the folder even when the
    compiler is killed at a timeout (it cannot remove them then).

    Examples
    --------
    >>> env = compiler_env("/cache/emu/.build-x1")
    >>> env["TMPDIR"], env.get("PATH") == os.environ.get("PATH")
    ('/cache/emu/.build-x1', True)
    """
    return {**os.environ, "TMPDIR": str(scratch)}


def _remove_private(path: str) -> None:
    fd = _HELD.pop(path, None)
    shutil.rmtree(path, ignore_errors=True)
    if fd is not None:
        os.close(fd)


def private_folder(kind: str) -> Path:
    """A folder only this user can write, for this process (used when the cache is unsafe),
    one per ``kind`` (:func:`check_kind`).

    It is removed when the process ends (a multiprocessing worker included); the folders
    of processes that were killed are removed when one is made.

    Examples
    --------
    >>> folder = private_folder("emu")
    >>> folder.name.startswith(f"{PRIVATE_PREFIX}emu-"), private_folder("emu") == folder
    (True, True)
    >>> oct(folder.stat().st_mode & 0o777)
    '0o700'
    """
    return _private_folder(check_kind(kind))


@lru_cache(maxsize=None)
def _private_folder(kind: str) -> Path:
    from multiprocessing import util

    remove_orphans(tempfile.gettempdir(), PRIVATE_PREFIX)
    path, fd = _locked_folder(tempfile.gettempdir(), f"{PRIVATE_PREFIX}{kind}-")
    _HELD[str(path)] = fd
    # exit handlers: atexit's run in the main process, multiprocessing's in its workers too
    util.Finalize(None, _remove_private, args=(str(path),), exitpriority=0)
    return path
