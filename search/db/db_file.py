"""Whether a path can be a tuning database file, and the error that says why not.

>>> path_fault("", False), side_files_fault("tuning.db")
('the path is empty', '')
"""

from __future__ import annotations

import os
from pathlib import Path

from iobound.errors import InvalidInputError

from ..option_checks import check_flag, check_path

__all__ = ["DatabaseFileError", "path_fault", "side_files_fault", "SIDE_SUFFIX"]


class DatabaseFileError(InvalidInputError):
    """``path`` cannot be opened as a tuning database, for ``reason`` (one line).

    The message is ``database PATH: REASON``; a caller that names the path under its
    own option (``--history PATH: REASON``) uses :attr:`path` and :attr:`reason`.

    >>> str(DatabaseFileError("/tmp", "is a folder, not a database file"))
    "database '/tmp': is a folder, not a database file"
    """

    def __init__(self, path: str, reason: str):
        super().__init__(path, reason)  # both in args: it pickles (executors, Ray)
        self.path, self.reason = path, reason

    def __str__(self) -> str:
        return f"database {self.path!r}: {self.reason}"


def path_fault(path: str, readonly: bool) -> str:
    """Why ``path`` cannot be a database file to open ("" when it can be tried).

    >>> path_fault("", False), path_fault(":memory:", True)[:24]
    ('the path is empty', 'a read-only in-memory da')
    """
    if not isinstance(path, str):  # None, an int (a file descriptor to stat): refused
        path = check_path("path", path)
    check_flag("readonly", readonly)
    if path == ":memory:":
        return ("a read-only in-memory database would be new and empty; give a file"
                if readonly else "")
    if not path.strip():
        return "the path is empty"  # SQLite would open a private temporary database
    if "\0" in path:
        return "the path contains a NUL character"
    p = Path(path)
    try:  # a name longer than NAME_MAX fails each stat with OSError
        if p.is_dir():
            return "is a folder, not a database file"
        if p.exists():
            return _not_sqlite(p) if p.is_file() else "is not a regular file (a database is one)"
        if not p.parent.is_dir():
            return f"the folder {str(p.parent)!r} does not exist"
    except OSError as e:
        return e.strerror or str(e)
    return "no such file" if readonly else side_files_fault(path)


#: The first 16 bytes of every SQLite database file.
SQLITE_MAGIC = b"SQLite format 3\x00"


def _not_sqlite(path: Path) -> str:
    """"not an SQLite database" for a file whose first bytes are others: SQLite takes a file
    it reads as empty for a new database, and a file of ``/proc`` says its size is 0 ("" when
    the file is empty, SQLite's, or unreadable: SQLite says why)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except OSError:
        return ""
    return "not an SQLite database" if head and not SQLITE_MAGIC.startswith(head) else ""


#: The longest suffix of the files SQLite makes beside a database it writes (-wal, -shm too).
SIDE_SUFFIX = "-journal"


def side_files_fault(path: str | os.PathLike) -> str:
    """Why SQLite could not write a database at ``path`` ("" when it can be tried): a
    name the file system takes, but with no room for the ``-journal`` file SQLite makes
    beside it (the database file would be created, empty, and nothing stored in it).

    >>> side_files_fault("d" * 250 + ".db")[:31], side_files_fault("tuning.db")
    ('the file name is too long (253 ', '')
    """
    p = Path(check_path("path", path))
    try:
        name_max = os.pathconf(p.parent if p.parent.is_dir() else ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    size = len(os.fsencode(p.name))
    if size + len(SIDE_SUFFIX) <= name_max:
        return ""
    return (f"the file name is too long ({size} bytes) for the {SIDE_SUFFIX} file SQLite "
            f"makes beside it: at most {name_max - len(SIDE_SUFFIX)} bytes")
