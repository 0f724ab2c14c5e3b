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


def test_two_folders_with_conftests_collect_together():
    """``pytest tests/search/selection tests/benchmarks``: both folders' conftest.py files
    are loaded as conftests and never collected as modules named ``conftest`` (the root
    conftest's ``pytest_ignore_collect``), which failed as an import-file mismatch."""
    import subprocess
    import sys
    root = TESTS.parent
    run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                          "-p", "no:cacheprovider", "tests/search/selection", "tests/benchmarks"],
                         cwd=root, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "error" not in run.stdout.splitlines()[-1]
