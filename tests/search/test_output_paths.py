"""Output paths checked before a run (search.outputs) against the file system itself.

References: what the file system says after the check (a new file's probe leaves nothing
behind; an existing file keeps its bytes); ``os.link`` making two names of one file; the
documented refusals (a blank path, a NUL, two options naming one file) and acceptances
(a character device such as /dev/null, a blank path in the distinct-files check skipped).
"""

from __future__ import annotations

import os

import pytest

from iobound.errors import InvalidInputError
from search.outputs import check_distinct_files, check_output_file


@pytest.mark.parametrize("path, needle", [("   ", ": the path is empty"),
                                          ("run\0.jsonl", " 'run.x00.jsonl': not a valid path "
                                                           r"\(a NUL character\)")])
def test_a_blank_or_nul_path_is_refused_naming_the_option(path, needle):
    """A path of blanks, or one holding a NUL, is refused naming the option."""
    with pytest.raises(InvalidInputError, match=f"--log{needle}"):
        check_output_file("--log", path)


def test_checking_a_new_file_leaves_nothing_and_an_old_one_unchanged(tmp_path):
    """The writability probe of a new path removes what it created; an existing file
    keeps its bytes; a character device is accepted as it is."""
    new = tmp_path / "new.jsonl"
    check_output_file("--log", str(new))
    assert not new.exists() and os.listdir(tmp_path) == []
    old = tmp_path / "old.jsonl"
    old.write_bytes(b"kept\n")
    check_output_file("--log", str(old))
    assert old.read_bytes() == b"kept\n"
    assert check_output_file("--log", os.devnull).name == "null"


def test_two_names_of_one_file_are_refused_and_blank_paths_skipped(tmp_path):
    """A hard link is the same file under another name: refused for two options; a blank
    path for another option is no file and is skipped."""
    first = tmp_path / "a.json"
    first.write_text("{}")
    os.link(first, tmp_path / "b.json")
    with pytest.raises(InvalidInputError, match="also given as --log"):
        check_distinct_files([("--log", str(first)), ("--export-cache", str(tmp_path / "b.json"))])
    check_distinct_files([("--log", " "), ("--export-cache", " "), ("--history", str(first))])
