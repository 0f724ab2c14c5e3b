"""The README's command outputs that name the analytic model name the model as it is.

The model measurer labels its records ``analytic model v{MODEL_VERSION} for <device>``
(search.measure.model); ``iobound kernel --from-history`` prints that label of the stored
record. MODEL_VERSION 4 (the shared-transform Winograd kernel) left the README's
``--from-history`` example printing ``analytic model v3``, which its command no longer
prints after the README's first command.
"""

from __future__ import annotations

import re
from pathlib import Path

from kernels.perf_model import MODEL_VERSION

README = Path(__file__).resolve().parents[2] / "README.md"


def _code_lines(text: str):
    inside = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            inside = not inside
            continue
        if inside:
            yield number, line


def test_readme_outputs_name_the_current_analytic_model():
    named = [(n, m.group(1)) for n, line in _code_lines(README.read_text(encoding="utf-8"))
             for m in re.finditer(r"analytic model v(\w+) for ", line)]
    assert named, "the README shows no output of the analytic model's label"
    assert [n for n, v in named if v != MODEL_VERSION] == [], (MODEL_VERSION, named)
