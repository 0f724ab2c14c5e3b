"""README.md's "Contents" line links every section, in order, by GitHub's anchor of it, and
its Benchmarks table has a row for every benchmark script."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_contents_links_every_section_in_order():
    text = README.read_text()
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    start = text.index("Contents: ")
    contents = text[start:text.index("\n\n", start)]
    links = re.findall(r"\[([^\]]+)\]\(#([^)]+)\)", contents)
    assert [title for title, _ in links] == headings
    assert [anchor for _, anchor in links] == [_anchor(h) for h in headings]


def test_benchmarks_table_names_every_script():
    """Every runnable script under benchmarks/ (one with a ``__main__`` block) has a row in
    the Benchmarks section's table, and every script a row names exists."""
    text = README.read_text()
    section = text[text.index("\n## Benchmarks\n"):text.index("\n## Layout\n")]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    named = {name for row in rows for name in re.findall(r"`([a-z_0-9]+\.py)`", row.split("|")[1])}
    scripts = {p.name for p in (README.parent / "benchmarks").glob("*.py")
               if "__main__" in p.read_text()}
    assert named == scripts
