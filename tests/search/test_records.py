"""Tests of the JSON-lines tuning log and the measurement record."""

import json

import pytest
from hypothesis import given, strategies as st

from search.measure.base import STATUSES, MeasureRecord
from search.records import SCHEMA, LogWriter, read_log

values = st.one_of(st.integers(-1000, 1000), st.text(max_size=5), st.booleans())


@given(st.dictionaries(st.text(min_size=1, max_size=4), values, max_size=4),
       st.sampled_from(STATUSES),
       st.lists(st.floats(0.001, 1e3), max_size=4), st.booleans())
def test_record_round_trips_through_json(config, status, costs, estimate):
    """to_dict -> JSON text -> from_dict gives an equal record."""
    if status == "ok":
        rec = MeasureRecord.ok(config, costs=costs, time_ms=None if costs else 1.0, estimate=estimate)
    else:
        rec = MeasureRecord.failed(config, status, "why")
    assert MeasureRecord.from_dict(json.loads(json.dumps(rec.to_dict()))) == rec


def test_failed_record_cannot_have_time():
    """A failure with a time is rejected (no stand-in numbers for failures)."""
    with pytest.raises(ValueError, match="time_ms must be None"):
        MeasureRecord(config={}, status="timeout", time_ms=1.0)


def test_unknown_status_rejected():
    """Statuses outside the list are a ValueError naming the allowed ones."""
    with pytest.raises(ValueError, match="compile_error"):
        MeasureRecord(config={}, status="crashed")


def test_log_header_and_records(tmp_path):
    """The log starts with a versioned header; each record is one line."""
    path = tmp_path / "log.jsonl"
    with LogWriter(path, {"seed": 3}) as log:
        for k in range(3):
            log.append(k, MeasureRecord.ok({"k": k}, time_ms=k + 1.0))
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["schema"] == SCHEMA and len(lines) == 4
    got = read_log(path)
    assert got.header["seed"] == 3 and [e.index for e in got.entries] == [0, 1, 2]


def test_each_record_is_on_disk_before_close(tmp_path):
    """A record is flushed when appended (readable while the writer is open)."""
    path = tmp_path / "log.jsonl"
    log = LogWriter(path, {})
    log.append(7, MeasureRecord.ok({"k": 7}, time_ms=1.0))
    assert [e.index for e in read_log(path).entries] == [7]
    log.close()


def test_cut_short_last_line_is_dropped_and_truncated(tmp_path):
    """A half-written last line is ignored by the reader and removed before appending."""
    path = tmp_path / "log.jsonl"
    with LogWriter(path, {}) as log:
        log.append(0, MeasureRecord.ok({"k": 0}, time_ms=1.0))
    with open(path, "a") as fh:
        fh.write('{"kind": "record", "index": 1, "rec')
    got = read_log(path)
    assert got.truncated and [e.index for e in got.entries] == [0]
    with LogWriter(path) as log:
        log.append(2, MeasureRecord.ok({"k": 2}, time_ms=1.0))
    assert [e.index for e in read_log(path).entries] == [0, 2]


def test_wrong_schema_version_rejected(tmp_path):
    """A log of another schema version is refused with the version named."""
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps({"schema": SCHEMA, "version": 99}) + "\n")
    with pytest.raises(ValueError, match="version 99"):
        read_log(path)
