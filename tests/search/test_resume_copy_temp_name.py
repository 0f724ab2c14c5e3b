"""``tune(resume=OLD, log=NEW)`` copies OLD's records into NEW through a temporary file
beside NEW (search/tuner.py ``_open_log``) with a name of its own: a fixed name (``NEW.copy``)
was the resumed log itself when a user named it so, and it was deleted as a stale temporary
file, losing every measurement it held.

Reference: the records of the resumed log, all of them in the new log, and the resumed
log itself untouched.
"""

from __future__ import annotations

from search.measure.base import MeasureRecord, Measurer
from search.records import read_log
from search.space import GridSpace
from search.tuner import tune


class Bowl(Measurer):
    name = "bowl"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=1.0 + (c["a"] - 5) ** 2) for c in configs]


SPACE = GridSpace({"a": list(range(10))})


def test_a_resumed_log_named_like_the_temporary_copy_is_kept(tmp_path):
    old = tmp_path / "run.jsonl.copy"
    tune(SPACE, Bowl(), strategy="grid", budget=4, seed=0, log=str(old))
    before = old.read_bytes()
    res = tune(SPACE, Bowl(), strategy="grid", budget=6, seed=0, resume=str(old),
               log=str(tmp_path / "run.jsonl"))
    assert res.evaluations == 6
    assert old.read_bytes() == before
    new = {e.index for e in read_log(tmp_path / "run.jsonl").entries}
    assert {e.index for e in read_log(old).entries} <= new and len(new) == 6



def test_files_beside_the_new_log_are_kept_and_no_temporary_copy_is_left(tmp_path):
    """Only the copy's own temporary file is removed: a user's ``run.jsonl.copy`` stays."""
    old = tmp_path / "old.jsonl"
    tune(SPACE, Bowl(), strategy="grid", budget=3, seed=0, log=str(old))
    mine = tmp_path / "run.jsonl.copy"
    mine.write_text("a user's file\n")
    tune(SPACE, Bowl(), strategy="grid", budget=5, seed=0, resume=str(old),
         log=str(tmp_path / "run.jsonl"))
    assert mine.read_text() == "a user's file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl", "run.jsonl",
                                                           "run.jsonl.copy"]


def test_a_users_hidden_backup_beside_the_new_log_is_kept(tmp_path):
    """A user's hidden files that look like leftovers (``.NAME.????????.copy``, any 8
    characters) are not the copy's: a killed copy's leftovers carry its own marker."""
    old = tmp_path / "old.jsonl"
    tune(SPACE, Bowl(), strategy="grid", budget=3, seed=0, log=str(old))
    mine = {name: f"the user's {name}\n" for name in
            (".run.jsonl.backup01.copy", ".run.jsonl.20261130.copy", ".run.jsonl.My-Copy1.copy")}
    for name, text in mine.items():
        (tmp_path / name).write_text(text)
    tune(SPACE, Bowl(), strategy="grid", budget=5, seed=0, resume=str(old),
         log=str(tmp_path / "run.jsonl"))
    for name, text in mine.items():
        assert (tmp_path / name).is_file(), f"{name} was deleted"
        assert (tmp_path / name).read_text() == text
