"""What a path given by the user names, with the system's refusals as bad input.

``Path.is_file()`` and friends answer False for a missing path but raise ``OSError`` for
one the system refuses to look up (a name longer than the file system allows, a loop of
links, no permission on a parent): :func:`path_kind` turns those into an
:class:`~iobound.errors.InvalidInputError` naming the path and the reason.

>>> path_kind("/")
'dir'
>>> path_kind("/no/such/file")
'missing'
>>> path_kind("/tmp/" + "n" * 300, "--log")
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: --log '/tmp/nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...': File name too long
"""

from __future__ import annotations

import errno
import os
import stat

from iobound.errors import InvalidInputError

__all__ = ["path_kind", "same_file"]

#: Errors that mean "nothing there" (as Path.exists() takes them), not a refused lookup.
_MISSING = (errno.ENOENT, errno.ENOTDIR)


def path_kind(path: str | os.PathLike, what: str = "path") -> str:
    """``"file"``, ``"dir"``, ``"missing"`` or ``"other"`` (a device, a pipe...) for ``path``
    (links followed); InvalidInputError naming ``what`` when the system refuses the lookup.

    >>> import tempfile
    >>> path_kind(tempfile.mkstemp()[1]), path_kind("/dev/null"), path_kind("/no/such/dir/")
    ('file', 'other', 'missing')
    """
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno in _MISSING:
            return "missing"
        name = os.fspath(path)
        shown = name if len(name) <= 40 else name[:37] + "..."
        raise InvalidInputError(f"{what} {shown!r}: {exc.strerror or exc}") from None
    except ValueError:  # an embedded NUL byte
        raise InvalidInputError(f"{what} {os.fspath(path)[:40]!r}: not a valid path") from None
    if stat.S_ISREG(mode):
        return "file"
    return "dir" if stat.S_ISDIR(mode) else "other"


def same_file(a, b) -> bool:
    """Whether ``a`` and ``b`` name one existing file, however spelt (``./``, links);
    False when either does not exist.

    >>> same_file("/", "/tmp/.."), same_file("/", "/no/such/file")
    (True, False)
    """
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # missing, refused, or a NUL in the name
        return False
