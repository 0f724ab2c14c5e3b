"""No code compares a status with a bare string: Status is an Enum, so such a comparison
would be silently false (``Status.OK != "ok"``)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("iobound", "dataflow", "kernels", "search", "benchmarks")
#: `x.status == "ok"`, `status != 'invalid'`, `.status in ("ok", ...)`, `entry_status(e) == "ok"`
PATTERN = re.compile(r"""status\)?\s*(==|!=|\bin\b|\bnot in\b)\s*[\(\[\{]?\s*["'](ok|compile_error|"""
                     r"""runtime_error|timeout|wrong_result|invalid)["']""")


def test_no_status_is_compared_with_a_string():
    """Every comparison of a status goes through Status (or its .value for JSON dicts)."""
    hits = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if PATTERN.search(line) and '["status"]' not in line and "['status']" not in line:
                    hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not hits, "compare with kernels.status.Status instead:\n" + "\n".join(hits)
