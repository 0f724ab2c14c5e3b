"""Resuming into a new log removes only the temporary copies a killed resume left
(search/tuner.py ``_sibling_temp``), never a user's file beside the new log.

The leftovers are found by the pattern ``.NAME.????????.copy``: any 8 characters, so a
user's hidden backup ``.run.jsonl.backup01.copy`` (not the resumed log) was deleted by
``tune(resume=old.jsonl, log=run.jsonl)``.

Reference: every file the user put in the folder is there afterwards, byte for byte.
"""

from __future__ import annotations

from search.measure.base import MeasureRecord, Measurer
from search.space import GridSpace
from search.tuner import tune


class Bowl(Measurer):
    name = "bowl"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=1.0 + (c["a"] - 5) ** 2) for c in configs]


SPACE = GridSpace({"a": list(range(10))})


def test_a_users_hidden_backup_beside_the_new_log_is_kept(tmp_path):
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
