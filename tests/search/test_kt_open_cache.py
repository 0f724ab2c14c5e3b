"""A Kernel Tuner cache left open (a tuning run interrupted or still going) is read as
Kernel Tuner reads it: every entry written so far, the object closed."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from iobound.errors import InvalidInputError
from search.db import TuningDB
from search.db.importer import import_files
from search.kt_cache import load_cache

TIMES = st.one_of(st.floats(0.01, 100.0), st.sampled_from(["InvalidConfig", "RuntimeFailedConfig"]))


def _open_cache(times, closed: bool) -> str:
    """The file as Kernel Tuner writes it: the header with ``indent=""`` less its closing
    ``}\\n}``, then one ``"key": entry,`` line per measured configuration."""
    head = {"device_name": "GPU K", "kernel_name": "k", "problem_size": [8],
            "tune_params_keys": ["a"], "tune_params": {"a": list(range(len(times)))},
            "objective": "time", "cache": {}}
    text = json.dumps(head, indent="")[:-3]
    for i, t in enumerate(times):
        text += "\n" + json.dumps(str(i)) + ": " + json.dumps({"a": i, "time": t}) + ","
    return text[:-1] + "}\n}" if closed and times else text


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(times=st.lists(TIMES, min_size=1, max_size=6))
def test_an_open_cache_reads_as_the_closed_one(tmp_path, times):
    """Open or closed, the same entries; importing the open one stores every entry."""
    opened, closed = tmp_path / "open.json", tmp_path / "closed.json"
    opened.write_text(_open_cache(times, closed=False))
    closed.write_text(_open_cache(times, closed=True))
    assert load_cache(opened).entries == load_cache(closed).entries
    with TuningDB(":memory:") as db:
        assert import_files(db, [opened])[0].added == len(times)


def test_an_entry_cut_in_the_middle_is_one_error_and_nothing_imported(tmp_path):
    """Closing cannot mend a file cut inside an entry: one error naming it, nothing stored."""
    path = tmp_path / "cut.json"
    path.write_text(_open_cache([1.0, 2.0], closed=False)[:-12])
    with pytest.raises(InvalidInputError, match="cut.json.*not a Kernel Tuner cache"):
        load_cache(path)
    with TuningDB(":memory:") as db:
        with pytest.raises(InvalidInputError):
            import_files(db, [path])
        assert db.workloads() == []
