"""Where compiled artefacts (cubins, emulator libraries, precompiled headers) are cached.

Entries are keyed by content hash. The root is ``$IOBOUND_CACHE`` when set, else
``~/.cache/iobound``.

A cached artefact is executed (a shared library is loaded into this process, a cubin
onto the GPU, a precompiled header into g++), so it is used only when it is what we
built:

* the cache folder (and the root above it) is owned by this user and writable by no
  one else, and no folder above them can be changed by anyone but this user and root
  (the folder is used by its path without symlinks, so none can be re-pointed after the
  check); otherwise the artefacts go to a private temporary folder for this process,
  i.e. everything is rebuilt (:func:`cache_dir` logs a warning once);
* each artefact's sha256 is recorded beside it at build time (:func:`record_digest`,
  a ``.sha256`` file) and checked before use (:func:`is_trusted`); a missing, changed,
  truncated or foreign-owned artefact is rebuilt.

Builds work in scratch folders and, when the cache is unsafe, in private folders
(:mod:`kernels.build_folders`), which nothing killed leaves behind.

Examples
--------
>>> import tempfile
>>> folder = cache_dir("cubin", root=tempfile.mkdtemp())
>>> folder.name
'cubin'
>>> len(content_key("a", "b")), content_key("a", "b") == content_key("ab")
(64, False)
>>> art = folder / "k.bin"; _ = art.write_bytes(b"built"); record_digest(art)
>>> is_trusted(art)
True
>>> _ = art.write_bytes(b"tampered"); is_trusted(art)
False
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import stat
import tempfile
from functools import lru_cache
from pathlib import Path

from iobound.arg_checks import check_path, check_type

from .build_folders import (CACHE_KINDS, check_kind, compiler_env, private_folder,
                            remove_all_orphans, remove_orphans, scratch_folder)

__all__ = ["cache_root", "cache_dir", "check_cache_root", "content_key", "file_digest",
           "record_digest", "is_trusted", "private_folder", "scratch_folder", "remove_orphans",
           "remove_all_orphans", "compiler_env",  # these five and the two below: build_folders
           "CACHE_KINDS", "check_kind"]

log = logging.getLogger(__name__)

DIGEST_SUFFIX = ".sha256"


def cache_root() -> Path:
    """The cache root folder (not created).

    Examples
    --------
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"IOBOUND_CACHE": "/data/iobound-cache"}):
    ...     cache_root()
    PosixPath('/data/iobound-cache')
    >>> with mock.patch.dict(os.environ):
    ...     _ = os.environ.pop("IOBOUND_CACHE", None)
    ...     str(cache_root())
    '~/.cache/iobound'
    """
    env = os.environ.get("IOBOUND_CACHE")
    return Path(env) if env else Path("~") / ".cache" / "iobound"  # expanded by its users


def absolute_root(root: Path | str | None = None) -> Path | None:
    """``root`` (default :func:`cache_root`) absolute, ``~`` expanded; None when ``~``
    names no home (``~nosuchuser``, or no ``$HOME`` and no passwd entry for this user,
    as in a container run under an arbitrary uid).

    Examples
    --------
    >>> absolute_root("~/cache") == Path.home() / "cache", absolute_root("cache").is_absolute()
    (True, True)
    >>> absolute_root("~nosuchuser/cache") is None
    True
    """
    try:
        return (Path(root) if root is not None else cache_root()).expanduser().absolute()
    except RuntimeError:  # pathlib: "Could not determine home directory."
        return None


def _owned_and_private(path: Path, follow: bool = True) -> bool:
    """Owned by this user and not writable by group or others."""
    try:
        st = path.stat() if follow else path.lstat()
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def check_cache_root(root: Path | str) -> None:
    """InvalidInputError unless ``root``, a cache root a caller gives, is a path whose parent
    folder exists: the cache creates its root, never the folders above it (a mistyped
    ``/nonexistent/x/y`` must not become a tree of new folders).

    >>> check_cache_root("/nonexistent/x/y")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: cache root '/nonexistent/x/y': the folder '/nonexistent/x' does not exist (the cache creates its root folder, not the folders above it)
    """
    from iobound.errors import InvalidInputError

    if not isinstance(root, (str, os.PathLike)):
        raise InvalidInputError(f"cache root must be a path, got {type(root).__name__} "
                                f"{root!r:.60}")
    text = os.fspath(root)
    if isinstance(text, str) and (not text.strip() or "\0" in text):  # "" is the working folder
        raise InvalidInputError(f"cache root {text[:40]!r}: give a folder (not an empty path or "
                                "one with a NUL character)")
    base = absolute_root(root)
    if base is not None and not base.parent.is_dir():  # None: ~user unknown, cache_dir says so
        raise InvalidInputError(f"cache root {str(root)!r}: the folder {str(base.parent)!r} does "
                                "not exist (the cache creates its root folder, not the folders "
                                "above it)")


def cache_dir(kind: str, root: Path | str | None = None) -> Path:
    """The cache folder for ``kind`` ("cubin", "emu", "src"), created (mode 0700) if missing.

    A ``root`` given here must have an existing parent folder (:func:`check_cache_root`);
    the default root (``$IOBOUND_CACHE`` or ``~/.cache/iobound``) is created with its parents.

    When the folder or the root is not owned by this user or is writable by others,
    a private per-process folder is returned instead (so nothing cached there is used);
    so it is when the folder cannot be created or written (a file, a read-only folder).
    The folder is absolute (``~`` expanded): compilers run in scratch folders of their own.
    Another ``kind`` is an InvalidInputError (:func:`check_kind`: a kind is a folder name
    under the root, ``"../x"`` no kind).

    Examples
    --------
    >>> import tempfile
    >>> folder = cache_dir("src", root=tempfile.mkdtemp())
    >>> folder.name, oct(folder.stat().st_mode & 0o777)   # only this user may enter
    ('src', '0o700')
    """
    check_kind(kind)
    if root is not None:
        check_cache_root(root)
    base = absolute_root(root)
    if base is None:
        _warn_once(f"cannot find the home folder of the cache root {str(root or cache_root())!r}; "
                   "using a private folder")
        return _fallback(kind)
    path = base / kind
    try:
        # the root too is made 0700 (as a parent, mkdir would give it the umask's mode, and
        # under a umask of 002 the cache would then fail its own check below, every time)
        base.mkdir(parents=root is None, exist_ok=True, mode=0o700)
        path.mkdir(exist_ok=True, mode=0o700)
    except OSError as exc:
        _warn_once(f"cannot create the cache folder {path} ({exc}); using a private folder")
        return _fallback(kind)
    if not os.access(path, os.W_OK | os.X_OK):
        _warn_once(f"cannot write to the cache folder {path}; using a private folder")
        return _fallback(kind)
    # what is checked must be what is used: the folder without symlinks (another user's
    # link, or one in a folder others may write, could be re-pointed after the checks)
    real = Path(os.path.realpath(path))
    if not (_owned_and_private(Path(os.path.realpath(base))) and _owned_and_private(real)
            and _only_ours_can_change(real)):
        # sources are only written, never loaded, but a folder others may write is no
        # place for them either: a link planted at a name would be written through
        _warn_unsafe(str(path))
        return _fallback(kind)
    return real


def _only_ours_can_change(path: Path) -> bool:
    """Whether no one but this user and root can change what the absolute, symlink-free
    ``path`` names: every folder above it is owned by one of them and writable by no one
    else, or is sticky (``/tmp``) and its entry on the way is owned by one of them."""
    ours = (0, os.getuid())
    parts = path.parts
    for i in range(1, len(parts)):
        try:
            folder, entry = os.lstat(Path(*parts[:i])), os.lstat(Path(*parts[:i + 1]))
        except OSError:
            return False
        if folder.st_uid not in ours or stat.S_ISLNK(entry.st_mode):
            return False
        shared = folder.st_mode & stat.S_IWOTH or (folder.st_mode & stat.S_IWGRP
                                                   and not _private_group(folder.st_gid))
        if shared and not (folder.st_mode & stat.S_ISVTX and entry.st_uid in ours):
            return False
    return True


def _private_group(gid: int) -> bool:
    """Whether group ``gid`` is this user's own (a user private group, as a umask of 002
    assumes: named after the user, the user's primary group, no other members)."""
    import grp
    import pwd

    try:
        group = grp.getgrgid(gid)
        user = pwd.getpwnam(group.gr_name)
    except (KeyError, OverflowError):
        return False
    return (user.pw_uid == os.getuid() and user.pw_gid == gid
            and all(member == group.gr_name for member in group.gr_mem))


@lru_cache(maxsize=None)
def _fallback(kind: str) -> Path:
    """Where ``kind`` goes when the cache cannot be used: a private folder removed when
    the process ends, but for sources (``iobound kernel`` without ``--emit`` prints the
    path for the user to read after the run) a temporary folder that stays."""
    if kind == "src":
        return Path(tempfile.mkdtemp(prefix="iobound-src-"))
    return private_folder(kind)


@lru_cache(maxsize=None)
def _warn_once(message: str) -> None:
    """Log ``message`` once per process (every build asks for the folder)."""
    log.warning("%s", message)


@lru_cache(maxsize=None)
def _warn_unsafe(path: str) -> None:
    log.warning("cache folder %s is not owned by this user or is writable by others; "
                "its contents are not used and everything is rebuilt in a private folder", path)


def content_key(*parts: str) -> str:
    """sha256 over the parts (strings), each length-prefixed so ("a", "b") != ("ab",).

    >>> content_key("a", "b") != content_key("ab")
    True
    """

    h = hashlib.sha256()
    for part in parts:
        # a lone surrogate has no UTF-8 bytes: hashed as its code point, not an error
        data = check_type("content_key part", part, str).encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def file_digest(path: str | os.PathLike) -> str:
    """sha256 of a file's bytes (hex).

    Examples
    --------
    >>> import tempfile
    >>> empty = Path(tempfile.mkdtemp()) / "empty.bin"; _ = empty.write_bytes(b"")
    >>> file_digest(empty)[:16]   # sha256 of no bytes
    'e3b0c44298fc1c14'
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _digest_path(path: Path) -> Path:
    return path.with_name(path.name + DIGEST_SUFFIX)


def record_digest(path: str | os.PathLike, digest: str | None = None) -> None:
    """Record ``path``'s sha256 (or ``digest``, computed before the file was moved into
    place) beside it, atomically.

    Examples
    --------
    >>> import tempfile
    >>> art = Path(tempfile.mkdtemp()) / "k.so"; _ = art.write_bytes(b"built")
    >>> record_digest(art)
    >>> sorted(p.name for p in art.parent.iterdir())
    ['k.so', 'k.so.sha256']
    >>> (art.parent / "k.so.sha256").read_text() == file_digest(art)
    True
    """
    path = Path(path)
    os.chmod(path, path.stat().st_mode & ~(stat.S_IWGRP | stat.S_IWOTH))  # whatever the umask
    text = digest or file_digest(path)
    # a name of its own: threads of one process (compile_many) may record one path at once
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f"{DIGEST_SUFFIX}.tmp",
                               dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, _digest_path(path))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


#: Large files (the 46 MB precompiled header, checked before every emulator build) found
#: trusted, by path -> the stat signatures of the file and its digest then. Any change
#: (new bytes, a replaced file, owner, mode) changes a signature and the file is hashed
#: again; small files are always hashed (it costs less than a stat).
_TRUSTED_LARGE: dict[str, tuple] = {}
_LARGE = 1 << 20


def _signature(path: Path) -> tuple:
    st = path.lstat()
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode, st.st_uid


def is_trusted(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a regular file we own, writable only by us, whose bytes match
    the sha256 recorded when it was built. A ``path`` that is no path naming a file (None,
    ``""``) is an InvalidInputError.

    Examples
    --------
    A file whose digest was never recorded is not trusted (nor is a missing one):

    >>> import tempfile
    >>> art = Path(tempfile.mkdtemp()) / "k.so"; _ = art.write_bytes(b"built")
    >>> is_trusted(art), is_trusted(art.with_name("missing.so"))
    (False, False)
    >>> is_trusted("")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: path must name a file, got ''
    """
    from iobound.errors import InvalidInputError

    given = check_path("path", path)
    path = Path(given)
    if not path.name:  # Path("") is ".": name what was given
        raise InvalidInputError(f"path must name a file, got {os.fspath(given)!r:.60}")
    digest = _digest_path(path)
    if path.is_symlink() or not path.is_file() or not _owned_and_private(path, follow=False):
        return False
    if not _owned_and_private(digest, follow=False):
        return False
    try:
        signature = (_signature(path), _signature(digest))
        if _TRUSTED_LARGE.get(str(path)) == signature:
            return True
        trusted = digest.read_text().strip() == file_digest(path)
    except (OSError, UnicodeDecodeError):
        return False
    if trusted and signature[0][2] >= _LARGE:
        _TRUSTED_LARGE[str(path)] = signature
    return trusted
