"""A database path the system refuses to look up (a name past the file system's 255-byte
limit) is said as such by every command that reads a database, as ``history import --db``
and ``select --history`` say it (search/path_kind.py): ``history list/best --db`` and
``kernel --from-history`` answered "no such database" (os.path.isfile is False for it),
the wrong reason. Reference: the system's own answer, os.stat raising ENAMETOOLONG."""

from __future__ import annotations

import errno
import os

import pytest

from search.cli.main import main

LONG = "x" * 300
SMALL = "cin=4,cout=8,hin=6,win=6,kh=3,kw=3"


@pytest.mark.parametrize("argv", [
    ["history", "list", "--db", LONG],
    ["history", "best", "--db", LONG],
    ["kernel", "--layer", SMALL, "--from-history", LONG],
])
def test_a_refused_database_name_is_named_for_what_it_is(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OSError) as exc:
        os.stat(LONG)
    assert exc.value.errno == errno.ENAMETOOLONG  # the system's reason
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "File name too long" in err, err


@pytest.mark.parametrize("argv", [
    ["history", "list", "--db", "{folder}"],
    ["history", "best", "--db", "{folder}"],
    ["kernel", "--layer", SMALL, "--from-history", "{folder}"],
    ["history", "list", "--db", "/dev/null"],
])
def test_a_folder_or_device_is_named_for_what_it_is(argv, capsys, tmp_path, monkeypatch):
    """A folder (or a device) where a database is read is not "no such database": it was
    said so, the wrong reason, before the check asked whether the path was missing."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "held.db").mkdir()
    argv = [a.format(folder="held.db") for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no such" not in err, err
    assert ("folder" if "held.db" in argv else "not a regular file") in err, err
