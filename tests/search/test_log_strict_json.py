"""A tuning log is strict JSON lines: a NaN or an infinity a record carries outside its
time (a measurer's extra data) is written as null, so jq or any strict reader takes it."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from search.log_writer import LogWriter, record_line
from search.measure.base import MeasureRecord
from search.records import read_log


def _strict(line: str):
    def refuse(token):
        raise AssertionError(f"non-JSON token {token} in {line!r}")
    return json.loads(line, parse_constant=refuse)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"),
                                   np.float32("nan"), np.float64("inf")])
def test_a_non_finite_extra_is_logged_as_null(tmp_path, value):
    record = MeasureRecord.ok({"a": 1}, time_ms=1.5, extra={"traffic": value, "v": [value, 2]})
    path = tmp_path / "run.jsonl"
    LogWriter(path, {}).append(0, record)
    lines = path.read_text().splitlines()
    entry = _strict(lines[1])
    assert entry["record"]["extra"] == {"traffic": None, "v": [None, 2]}
    assert entry["record"]["time_ms"] == 1.5
    back = read_log(path).entries[0].record
    assert back.time_ms == 1.5 and back.extra == {"traffic": None, "v": [None, 2]}


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=5),
                       st.one_of(st.floats(), st.integers(-10**6, 10**6), st.text(max_size=5)),
                       max_size=5))
def test_every_record_line_is_strict_json_and_keeps_finite_values(extra):
    line = record_line({"index": 3, "record": {"extra": extra}})
    out = _strict(line)["record"]["extra"]
    for key, value in extra.items():
        if isinstance(value, float) and not math.isfinite(value):
            assert out[key] is None
        else:
            assert out[key] == value


def test_a_finite_record_line_is_unchanged_from_plain_json():
    obj = {"index": 0, "kind": "record", "record": {"extra": {"x": 1.25, "n": np.int64(4)}}}
    assert record_line(obj) == '{"index": 0, "kind": "record", "record": {"extra": {"n": 4, "x": 1.25}}}'


@pytest.mark.parametrize("index, record, reused, named", [
    (1.7, MeasureRecord.ok({"a": 1}, time_ms=1.0), False, "index"),
    (-1, MeasureRecord.ok({"a": 1}, time_ms=1.0), False, "index"),
    (True, MeasureRecord.ok({"a": 1}, time_ms=1.0), False, "index"),
    (0, {"config": {"a": 1}}, False, "record"),
    (0, MeasureRecord.ok({"a": 1}, time_ms=1.0), "yes", "reused"),
])
def test_append_refuses_what_it_would_log_wrongly(tmp_path, index, record, reused, named):
    from iobound.errors import InvalidInputError
    path = tmp_path / "run.jsonl"
    writer = LogWriter(path, {})
    with pytest.raises(InvalidInputError, match=named):
        writer.append(index, record, reused=reused)
    assert len(path.read_text().splitlines()) == 1  # the header only: nothing written
