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
from search.grid_space import GridSpace
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


def test_the_new_log_of_a_resumed_run_takes_its_mode_from_the_umask(tmp_path):
    """A resumed run's new log is created as a fresh run's is: 0666 less the umask (the
    temporary copy it is renamed from was made by mkstemp, 0600 whatever the umask)."""
    import os
    old = tmp_path / "old.jsonl"
    before = os.umask(0o022)
    try:
        tune(SPACE, Bowl(), strategy="grid", budget=3, seed=0, log=str(old))
        tune(SPACE, Bowl(), strategy="grid", budget=5, seed=0, resume=str(old),
             log=str(tmp_path / "run.jsonl"))
    finally:
        os.umask(before)
    assert (old.stat().st_mode & 0o777) == 0o644
    assert ((tmp_path / "run.jsonl").stat().st_mode & 0o777) == 0o644


def test_a_copy_another_run_is_still_writing_is_kept_and_a_killed_ones_removed(tmp_path):
    """Two runs resuming into one new log: the second must not delete the first's copy in
    progress (its writer holds the log lock); a killed copy's leftover (no lock) goes."""
    from search.log_writer import COPY_MARK, LogWriter
    old = tmp_path / "old.jsonl"
    tune(SPACE, Bowl(), strategy="grid", budget=3, seed=0, log=str(old))
    live = tmp_path / f".run.jsonl.{COPY_MARK}.0a1b2c3d.copy"
    stale = tmp_path / f".run.jsonl.{COPY_MARK}.9f8e7d6c.copy"
    stale.write_text("")
    with LogWriter(live, {"strategy": "grid"}):  # the first run, still copying
        tune(SPACE, Bowl(), strategy="grid", budget=5, seed=0, resume=str(old),
             log=str(tmp_path / "run.jsonl"))
        assert live.is_file()
    assert not stale.exists()
