"""A small compressed tuning log must not unpack to gigabytes before it is refused.

``read_log`` reads logs compressed with gzip (told by their magic number) by
decompressing them whole: a 130 KB file that unpacks to 128 MiB (gzip reaches ~1000:1)
is held in memory twice over, and a 10 MB file unpacks past any machine's memory. The
Kernel Tuner cache reader (``search.kt_json``) refuses more than
``iobound.limits.TUNING_FILE_CHARS`` bytes, gunzipped, before holding them; a log
is a tuning file too and must be refused the same way (one InvalidInputError naming the
file), its decompressed bytes never held whole."""

from __future__ import annotations

import gzip
import json
import tracemalloc

import pytest

from iobound import limits
from iobound.errors import InvalidInputError
from search.records import SCHEMA, SCHEMA_VERSION, read_log


def test_gzip_log_bomb_is_refused_before_it_is_unpacked(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "TUNING_FILE_CHARS", 1 << 20)
    path = tmp_path / "run.jsonl"
    header = json.dumps({"schema": SCHEMA, "version": SCHEMA_VERSION, "kind": "header"})
    member = gzip.compress(b" " * (8 << 20), 9)  # 8 MiB of blanks in ~8 KB
    with open(path, "wb") as fh:
        fh.write(gzip.compress(header.encode() + b"\n"))
        for _ in range(8):  # gzip members, read one after another: 64 MiB
            fh.write(member)
    assert path.stat().st_size < 200_000
    tracemalloc.start()
    try:
        with pytest.raises(InvalidInputError, match="run.jsonl"):
            read_log(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"{peak / 2**20:.0f} MiB held to refuse a 1 MiB log limit"


def test_log_within_the_limit_still_reads(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "TUNING_FILE_CHARS", 1 << 20)
    path = tmp_path / "run.jsonl.gz"
    header = json.dumps({"schema": SCHEMA, "version": SCHEMA_VERSION, "kind": "header"})
    path.write_bytes(gzip.compress(header.encode() + b"\n"))
    assert read_log(path).entries == ()


def test_a_plain_file_past_the_limit_is_refused_by_its_size(tmp_path, monkeypatch):
    """A plain (not gzipped) file larger than the limit is refused before it is read: its
    size says so (a 3 GB file took 21 s to read up to the limit)."""
    from search.file_bytes import read_capped
    monkeypatch.setattr(limits, "TUNING_FILE_CHARS", 64 << 20)
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(1 << 30)   # sparse: 1 GiB of size, no blocks
    tracemalloc.start()
    try:
        with pytest.raises(InvalidInputError, match="big.json is too large"):
            read_capped(big, "big.json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"{peak / 2**20:.0f} MiB read to refuse a file by its size"
