"""README.md's "Contents" line links every section, in order, by GitHub's anchor of it."""

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
