"""Tests of the JSON-lines tuning log and the measurement record."""

import json

import pytest
from hypothesis import given, strategies as st

from kernels.status import Status
from search.measure.base import MeasureRecord
from search.records import SCHEMA, read_log
from search.log_writer import LogWriter

values = st.one_of(st.integers(-1000, 1000), st.text(max_size=5), st.booleans())


@given(st.dictionaries(st.text(min_size=1, max_size=4), values, max_size=4),
       st.sampled_from(list(Status)),
       st.lists(st.floats(0.001, 1e3), max_size=4), st.booleans(),
       st.one_of(st.none(), st.floats(0.0, 1e9)))
def test_record_round_trips_through_json(config, status, costs, estimate, surrogate):
    """to_dict -> JSON text -> from_dict gives an equal record; the status is its string."""
    if status is Status.OK:
        rec = MeasureRecord.ok(config, costs=costs, time_ms=None if costs else 1.0,
                               estimate=estimate, surrogate_cost=surrogate)
    else:
        rec = MeasureRecord.failed(config, status, "why")
    text = json.dumps(rec.to_dict())
    assert json.loads(text)["status"] == status.value
    assert MeasureRecord.from_dict(json.loads(text)) == rec


OLD_LOG_LINES = [  # records as logs wrote them before statuses were an enum
    {"config": {"x": 4}, "status": "ok", "costs": [], "time_ms": None, "error": "",
     "estimate": False, "timestamp": 1.0, "extra": {"surrogate_cost": 96.0, "traffic_words": 96}},
    {"config": {"x": 5}, "status": "wrong_result", "costs": [], "time_ms": None,
     "error": "traffic differs", "estimate": False, "timestamp": 2.0, "extra": {}},
    {"config": {"x": 6}, "status": "timeout", "costs": [], "time_ms": None, "error": "",
     "estimate": False, "timestamp": 3.0, "extra": {}},
]


@pytest.mark.parametrize("line", OLD_LOG_LINES)
def test_old_log_records_read_back(line):
    """A record of an old log reads back (its surrogate from extra) and writes the same strings."""
    rec = MeasureRecord.from_dict(line)
    assert rec.status is Status(line["status"])
    assert rec.surrogate_cost == line["extra"].get("surrogate_cost")
    again = rec.to_dict()
    assert {k: again[k] for k in line} == line


def test_surrogate_cost_is_the_cost_of_an_untimed_ok_record():
    """An ok record without a time costs its surrogate; a failure costs inf."""
    assert MeasureRecord.ok({}, surrogate_cost=12.0).cost == 12.0
    assert MeasureRecord.ok({}).cost == float("inf")
    assert MeasureRecord.failed({}, Status.TIMEOUT).cost == float("inf")


def test_failed_record_cannot_have_time():
    """A failure with a time is rejected (no stand-in numbers for failures)."""
    with pytest.raises(ValueError, match="time_ms must be None"):
        MeasureRecord(config={}, status=Status.TIMEOUT, time_ms=1.0)


def test_unknown_status_rejected():
    """A status string outside the vocabulary is a ValueError naming the allowed ones."""
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


def _tune(cache, *args):
    from search.cli.main import main
    return main(["tune", "--measure", f"replay:{cache}", "--strategy", "random", "--seed", "1",
                 *args])


def test_resuming_a_compressed_log_refuses_and_keeps_it(tmp_path, synth_cache_path, capsys):
    """A finished log compressed (``gzip run.jsonl``, which read_log reads) given to
    --resume: one line, exit 2, the file byte for byte as it was. (The writer used to cut
    the gzip bytes at their last newline byte and append plain lines: every logged
    measurement was lost.)"""
    import gzip
    plain, packed = tmp_path / "run.jsonl", tmp_path / "run.jsonl.gz"
    assert _tune(synth_cache_path, "--budget", "5", "--log", str(plain)) == 0
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    before = packed.read_bytes()
    capsys.readouterr()
    assert _tune(synth_cache_path, "--budget", "8", "--resume", str(packed)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is compressed (gzip)" in err[0] and "gunzip" in err[0], err
    assert packed.read_bytes() == before and len(read_log(packed).entries) == 5


def test_a_log_written_at_a_gz_name_resumes(tmp_path, synth_cache_path, capsys):
    """--log run.jsonl.gz (the log is plain text whatever its name): --resume of it
    finishes the budget, measuring nothing twice (it used to be read as gzip: 'cannot
    be read: Not a gzipped file', so the run could never be resumed)."""
    log = tmp_path / "run.jsonl.gz"
    assert _tune(synth_cache_path, "--budget", "5", "--log", str(log)) == 0
    first = [e.index for e in read_log(log).entries]
    capsys.readouterr()
    assert _tune(synth_cache_path, "--budget", "9", "--resume", str(log), "--json") == 0
    out = json.loads(capsys.readouterr().out)
    idx = [e.index for e in read_log(log).entries]
    assert out["resumed"] == 5 and out["evaluations"] == 9
    assert len(idx) == len(set(idx)) == 9 and idx[:5] == first


def test_a_log_killed_while_its_header_was_written_is_started_again(tmp_path, synth_cache_path,
                                                                    capsys):
    """A cut header holds no measurement. It was a dead end: --log refused the file
    ('exists; pass it as --resume') and --resume refused it ('empty (no header)'). Now
    --log writes a new log over it, as over an empty file; --resume names what it is."""
    log = tmp_path / "run.jsonl"
    log.write_bytes(b'{"schema": "iobound.tune-log", "version": 1, "ki')
    assert _tune(synth_cache_path, "--budget", "2", "--resume", str(log)) == 2
    assert "cut before its header was written" in capsys.readouterr().err
    assert _tune(synth_cache_path, "--budget", "4", "--log", str(log)) == 0
    written = read_log(log)
    assert written.header["schema"] == SCHEMA and len(written.entries) == 4
    with LogWriter(tmp_path / "w.jsonl", {"a": 1}):  # the writer alone, the same way
        pass
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b'{"schema": "iob')
    LogWriter(cut, {"a": 1}).close()
    assert read_log(cut).header["a"] == 1 and read_log(cut).entries == ()
