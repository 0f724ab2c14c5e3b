"""The committed results of the quick, deterministic benchmarks are what the scripts write
now: a change to the bounds, the dataflows, the domain or the history's reading that moves
a number fails here until the result file (and the README's quote of it) is written again.

Each script runs with its default arguments into a temporary folder; its JSON must equal
the committed file but for durations (keys naming seconds) and the folders of the files it
read, and its Markdown byte for byte.
The slow benchmarks (search, transfer, selection quality) are seeded runs of minutes to
hours: their committed runs files are checked by their own tests (``--summarise``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "benchmarks" / "results"

#: script, whether --out names a file (else a folder), the files it writes, its marks
SCRIPTS = [
    ("dataflow_ratio", True, ["dataflow_ratio.json"], []),
    ("paper_table2_pruning", True, ["paper_table2_pruning.json"], []),
    ("history_ceiling", False, ["history_ceiling.json", "history_ceiling.md"],
     [pytest.mark.shared_data]),
    ("source_similarity", False, ["source_similarity.json", "source_similarity.md"],
     [pytest.mark.shared_data]),
]


def comparable(value):
    """``value`` without what differs from machine to machine, at any depth: keys naming
    seconds are left out, an absolute path (the recorded spaces' folder) is its file name.

    >>> comparable({"a": 1, "seconds": 2.5, "rows": [{"build_seconds": 0.1, "b": "/x/y.gz"}]})
    {'a': 1, 'rows': [{'b': 'y.gz'}]}
    """
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if "seconds" not in k}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    if isinstance(value, str) and os.path.isabs(value):
        return Path(value).name
    return value


@pytest.mark.parametrize("script, to_file, written", [
    pytest.param(script, to_file, written, id=script, marks=marks)
    for script, to_file, written, marks in SCRIPTS])
def test_committed_result_is_what_the_script_writes(script, to_file, written, tmp_path):
    out = tmp_path / written[0] if to_file else tmp_path
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / f"{script}.py"),
                           "--out", str(out)], cwd=REPO, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    for name in written:
        new, committed = tmp_path / name, RESULTS / name
        if name.endswith(".json"):
            assert comparable(json.loads(new.read_text())) == comparable(
                json.loads(committed.read_text())), f"{committed} is not what {script} writes now"
        else:
            assert new.read_text() == committed.read_text(), (
                f"{committed} is not what {script} writes now")
