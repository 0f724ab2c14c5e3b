"""docs/ARCHITECTURE.md, "Where each rule lives": the kernels' word (``WORD_BYTES``, fp32)
lives in one place, ``iobound/units.py``. Every other module must take it from there
(a second ``WORD_BYTES = 4`` would not follow a change of the word)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("iobound", "dataflow", "kernels", "search")


def test_the_doc_says_word_bytes_lives_in_iobound_units():
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    assert re.search(r"`WORD_BYTES`.*\|\s*`iobound/units\.py`", doc)


def test_word_bytes_is_defined_only_in_iobound_units():
    bad = []
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            rel = str(f.relative_to(ROOT))
            if rel == "iobound/units.py":
                continue
            for node in ast.walk(ast.parse(f.read_text(), rel)):
                targets = (node.targets if isinstance(node, ast.Assign)
                           else [node.target] if isinstance(node, ast.AnnAssign) else [])
                if any(isinstance(t, ast.Name) and t.id == "WORD_BYTES" for t in targets):
                    bad.append(f"{rel}:{node.lineno}")
    assert not bad, f"WORD_BYTES defined outside iobound/units.py: {bad}"


def test_the_selections_word_is_the_units_word():
    from iobound import units
    from search.selection import select
    assert select.WORD_BYTES == units.WORD_BYTES == units.DTYPE_BYTES["fp32"]
