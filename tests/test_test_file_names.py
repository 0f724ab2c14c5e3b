"""No two test modules share a file name: the tests folders are no packages, so pytest
imports each test file by its base name, and a second ``test_x.py`` in another folder is an
import-file mismatch that fails the whole run (only a full run sees it)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_every_test_module_name_is_unique():
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert sorted(n for n, k in names.items() if k > 1) == []
