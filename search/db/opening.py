"""Opening the tuning database a command-line option names: one error line for any path
that cannot be one (missing where it must exist, refused by the system, not a database).
"""

from __future__ import annotations

import os
import sqlite3

from iobound.errors import InvalidInputError

from ..option_checks import check_flag, check_path, check_type
from ..path_kind import path_kind
from .db_file import DatabaseFileError
from .store import TuningDB

__all__ = ["check_new_database_name", "open_database"]


def open_database(path: str | os.PathLike, option: str, *, readonly: bool,
                  must_exist: bool | None = None) -> TuningDB:
    """The tuning database a command-line ``option`` names, or one error line naming
    both: ``InvalidInputError("--db PATH: REASON")`` when it cannot be one (see
    :class:`~.db_file.DatabaseFileError`), or, with ``must_exist`` (by default: when
    ``readonly``), when there is no such file (reading never creates one).

    >>> open_database("/nonexistent/t.db", "--db", readonly=True)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --db /nonexistent/t.db: no such database (iobound history import or iobound tune --history create one)
    """
    check_type("option", option, str)
    readonly = check_flag("readonly", readonly)  # "no" is truthy: refused, not taken as True
    if must_exist is not None:
        must_exist = check_flag("must_exist", must_exist)
    path = check_path(option, path)  # None, an int (a file descriptor to os.stat): refused
    if not str(path).strip():  # was "--db : no such database"
        raise InvalidInputError(f"{option}: the path is empty")
    # only a missing path is "no such": a name the system refuses (too long, a loop of
    # links; path_kind), a folder or a device (TuningDB's path_fault) are said as such
    if (readonly if must_exist is None else must_exist) and path_kind(path, option) == "missing":
        raise InvalidInputError(f"{option} {path}: no such database (iobound history import "
                                f"or iobound tune --history create one)")
    if must_exist and not readonly and _empty_file(path):  # SQLite would make one in it
        raise InvalidInputError(f"{option} {path}: an empty file, no tuning database "
                                f"(iobound history import or iobound tune --history create one)")
    if not readonly:
        check_new_database_name(path, option)
    try:
        return TuningDB(path, readonly=readonly)
    except DatabaseFileError as exc:
        raise InvalidInputError(f"{option} {path}: {exc.reason}") from None
    except sqlite3.Error as exc:
        raise InvalidInputError(f"{option} {path}: cannot open the database: "
                                f"{' '.join(str(exc).split())}") from None


def check_new_database_name(path: str | os.PathLike, option: str) -> None:
    """Refuse to create a database (at a missing path or in an empty file) under the name
    of a Kernel Tuner cache or a tuning log: the option was most likely taken for an output
    or an input of another kind, and an SQLite file named ``cache.json`` misleads later.

    >>> check_new_database_name("/no/such/run.jsonl", "--history")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --history /no/such/run.jsonl: a name for a Kernel Tuner cache or a tuning log, not for a new tuning database (an SQLite file, e.g. tuning.db)
    >>> check_new_database_name("/no/such/tuning.db", "--history")
    """
    check_type("option", option, str)
    path = check_path("path", path)
    data_name = os.fspath(path).lower().endswith((".json", ".json.gz", ".jsonl", ".jsonl.gz"))
    if data_name and (_empty_file(path) or path_kind(path, option) == "missing"):
        raise InvalidInputError(f"{option} {path}: a name for a Kernel Tuner cache or a tuning "
                                f"log, not for a new tuning database (an SQLite file, e.g. "
                                f"tuning.db)")


def _empty_file(path) -> bool:
    try:
        return os.path.isfile(path) and os.path.getsize(path) == 0
    except (OSError, ValueError):
        return False
