"""Each field of a tuning-log record line checked as data (search/records.py).

Reference: the layout in the module doc (a header, then ``{"kind": "record", "index":
non-negative 64-bit int, "record": MeasureRecord.to_dict()}`` lines) and JSON's own
types: a bool is not an integer or a number here, NaN/Infinity and integers too large
for a float are not finite times, and a line of another kind is not a record.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from iobound.errors import InvalidInputError
from search.measure.base import MeasureRecord
from search.records import SCHEMA, has_log, read_log
from search.log_writer import LogWriter

HEADER = json.dumps({"schema": SCHEMA, "version": 1, "kind": "header"})
GOOD = {"config": {"a": 1}, "status": "ok", "time_ms": 1.0}


def _log(tmp_path, *lines: str):
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join([HEADER, *lines]) + "\n")
    return path


def _line(index=0, **record) -> str:
    return json.dumps({"kind": "record", "index": index, "record": {**GOOD, **record}})


def test_lines_of_another_kind_are_passed_over(tmp_path):
    """Only ``kind: record`` lines are records; a note, a second header, a line without
    a kind are passed over (whatever else they hold)."""
    path = _log(tmp_path, _line(0), json.dumps({"kind": "note", "index": "x"}),
                json.dumps({"schema": SCHEMA, "kind": "header"}), json.dumps({"index": 5}),
                _line(3))
    assert [e.index for e in read_log(path).entries] == [0, 3]


@pytest.mark.parametrize("index", [True, False, -1, 1 << 63, 1 << 70, 1.0, "0", None])
def test_an_index_that_is_no_64_bit_count_names_the_line(tmp_path, index):
    with pytest.raises(InvalidInputError, match="line 3: 'index' must be a non-negative"):
        read_log(_log(tmp_path, _line(0), _line(index)))


@pytest.mark.parametrize("index", [0, 1, (1 << 63) - 1])
def test_the_64_bit_index_bounds_are_read(tmp_path, index):
    (entry,) = read_log(_log(tmp_path, _line(index))).entries
    assert entry.index == index


@pytest.mark.parametrize("field, value", [
    ("estimate", "yes"), ("estimate", 1), ("estimate", None), ("costs", 2.0), ("error", 3),
    ("extra", [1])])
def test_a_field_of_the_wrong_json_type_names_it(tmp_path, field, value):
    with pytest.raises(InvalidInputError, match=f"line 2: '{field}' must be a"):
        read_log(_log(tmp_path, _line(0, **{field: value})))


@pytest.mark.parametrize("stamp", ["true", "false", "NaN", "Infinity", "-Infinity", "1" + "0" * 400,
                                   '"5"', "null"])
def test_a_timestamp_that_is_no_finite_number_names_the_line(tmp_path, stamp):
    """JSON's true, NaN, Infinity, a 401-digit integer, a string: no timestamp."""
    line = _line(0).replace('"time_ms": 1.0', f'"time_ms": 1.0, "timestamp": {stamp}')
    with pytest.raises(InvalidInputError, match="line 2: 'timestamp' must be a finite number"):
        read_log(_log(tmp_path, line))


@pytest.mark.parametrize("stamp", [0, 1, 1.5e9, -3.0])
def test_a_finite_timestamp_is_kept(tmp_path, stamp):
    (entry,) = read_log(_log(tmp_path, _line(0, timestamp=stamp))).entries
    assert entry.record.timestamp == stamp


def test_sets_and_numpy_scalars_are_written_as_json(tmp_path):
    """A header holding a set and numpy scalars reads back as lists and Python numbers."""
    np = pytest.importorskip("numpy")
    path = tmp_path / "run.jsonl"
    with LogWriter(path, header={"seen": {3}, "n": np.int64(4), "t": (np.float32(0.5),)}) as log:
        log.append(np.int64(2), MeasureRecord.ok({"x": 1}, time_ms=1.0))
    got = read_log(path)
    assert (got.header["seen"], got.header["n"], got.header["t"]) == ([3], 4, [0.5])
    assert [e.index for e in got.entries] == [2]


@pytest.mark.parametrize("status", ["compile_error", "runtime_error", "timeout"])
def test_a_failure_logged_with_a_time_resumes_as_invalid(tmp_path, status):
    """A failure has no time; one logged with a time is read as an invalid record that
    keeps the logged status (never a timing, never an error reading the log)."""
    (entry,) = read_log(_log(tmp_path, _line(0, status=status, time_ms=2.0))).entries
    assert entry.record.status.value == "invalid" and not entry.record.is_ok
    assert entry.record.extra["logged_status"] == status
    (entry,) = read_log(_log(tmp_path, _line(0, status=status, time_ms=None))).entries
    assert entry.record.status.value == status


@pytest.mark.parametrize("content, is_log", [
    (b"", False), (b'{"schema": "iob', False), (HEADER.encode() + b"\n", True),
    (b"\x1f\x8b", True),  # gzip's magic number: a compressed log
    (b"\x1f\x00{", True), (b"\x8b\x1f", True),  # half of it, or reversed: someone's bytes
    (b'{"my": "notes"}', True), (b"x", True),  # a line, not a cut header: not written over
    (b"{" + b" " * (1 << 21), True),  # a first line of more than 1 MiB holds a header
])
def test_has_log_is_a_whole_line_or_gzip_magic(tmp_path, content, is_log):
    path = tmp_path / "run.jsonl"
    path.write_bytes(content)
    assert has_log(str(path)) is is_log


def test_a_file_starting_with_half_the_gzip_magic_is_read_as_plain_text(tmp_path):
    """Only gzip's two-byte magic makes a file compressed: a 0x1f byte alone is a bad
    header line, and a writer appends to such a file rather than refusing it as gzip."""
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"\x1f{}\n")
    with pytest.raises(InvalidInputError, match="bad header line"):
        read_log(path)
    with LogWriter(path) as log:
        log.append(0, MeasureRecord.ok({"x": 1}, time_ms=1.0))
    assert path.read_bytes().startswith(b"\x1f{}\n{")


@pytest.mark.parametrize("content, said", [
    (b"", "is empty"), (b"\n", "bad header line"), (b'{"version": 1}\n', "is not an iobound tuning log"),
    (b'{"schema": "other", "version": 1}\n', "is not an iobound tuning log"), (b"[1]\n", "is not an iobound")])
def test_a_file_without_a_log_header_is_refused(tmp_path, content, said):
    path = tmp_path / "run.jsonl"
    path.write_bytes(content)
    with pytest.raises(InvalidInputError, match=said):
        read_log(path)


def test_a_new_log_in_a_missing_folder_creates_the_folder(tmp_path):
    path = tmp_path / "a" / "b" / "run.jsonl"
    with LogWriter(path, header={"strategy": "random"}) as log:
        log.append(1, MeasureRecord.ok({"x": 1}, time_ms=1.0))
    got = read_log(path)
    assert got.header["strategy"] == "random" and [e.index for e in got.entries] == [1]


@given(st.dictionaries(st.text(min_size=1, max_size=8), st.integers(), max_size=4),
       st.integers(min_value=0, max_value=400))
def test_a_written_header_cut_anywhere_is_a_cut_header(tmp_path_factory, header, cut):
    """Whatever the run's keys, the header line the writer writes, cut anywhere before its
    newline, is a cut header (written over by the next run); whole, it is a log."""
    from search.records import is_cut_header
    path = tmp_path_factory.mktemp("h") / "run.jsonl"
    LogWriter(path, header).close()
    line = path.read_bytes()
    assert line.endswith(b"\n") and read_log(path).header["schema"] == "iobound.tune-log"
    assert is_cut_header(line[:min(cut, len(line) - 1)])


def test_the_writer_alone_does_not_write_over_someones_file(tmp_path):
    path = tmp_path / "notes.json"
    path.write_text('{"my": "notes"}')
    with pytest.raises(InvalidInputError, match="is no run's log; it is not written over"):
        LogWriter(path, {"a": 1})
    assert path.read_text() == '{"my": "notes"}'
