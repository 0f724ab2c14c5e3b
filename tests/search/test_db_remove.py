"""Tests of taking measurements out of the tuning database (search/db/remove.py and
``iobound history remove``)."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter

import pytest
from hypothesis import example, given, settings, strategies as st

from iobound.errors import InvalidInputError
from search.cli.main import main
from search.db import Measurement, TuningDB, Workload
from search.db.remove import Selection, plan, remove
from search.measure.base import MeasureRecord

WORKLOADS = [Workload("k", [8], ("x",)), Workload("k", [16], ("x",)), Workload("j", 1, ("x",))]
DEVICES, TOOLCHAINS, SOURCES = ["a100", "v100", "GPU 3"], ["nvcc", "kt"], ["a.json", "b.json", "tune"]

measurement = st.builds(
    lambda w, d, t, s, x: Measurement(WORKLOADS[w], DEVICES[d], TOOLCHAINS[t],
                                      MeasureRecord.ok({"x": x}, time_ms=1.0 + x), source=SOURCES[s]),
    st.integers(0, 2), st.integers(0, 2), st.integers(0, 1), st.integers(0, 2), st.integers(0, 5))
selection = st.fixed_dictionaries({}, optional={
    "workloads": st.lists(st.sampled_from(WORKLOADS), min_size=1, max_size=2), "device": st.sampled_from(DEVICES),
    "toolchain": st.sampled_from(TOOLCHAINS), "source": st.sampled_from(SOURCES)}).filter(bool)


def _matches(m: Measurement, sel: dict) -> bool:
    return all(m.workload in v if k == "workloads" else getattr(m, k) == v
               for k, v in sel.items())


def _digests(db: TuningDB) -> set[str]:
    return {m.digest() for m in db.measurements()}


@settings(max_examples=60, deadline=None)
@given(st.lists(measurement, max_size=25), selection)
def test_remove_takes_exactly_the_selection_and_import_brings_it_back(items, sel):
    """What remains is what was stored minus what the selection names; the groups count
    it; plan said the same and changed nothing; a workload or device left without
    measurements goes, the others (also one stored without any) stay; adding the removed
    measurements again restores the database."""
    db = TuningDB(":memory:")
    idle = Workload("idle", 0, ("x",))
    db.add(items, tune_params={idle: {"x": [1]}})  # a workload holding no measurement
    before = {m.digest(): m for m in db.measurements()}
    planned = plan(db, Selection(**sel))
    assert set(before) == _digests(db)
    groups = remove(db, Selection(**sel))
    gone = {d for d, m in before.items() if _matches(m, sel)}
    assert groups == planned
    assert sum(g.measurements for g in groups) == len(gone)
    assert _digests(db) == set(before) - gone
    left = db.measurements()
    assert set(db.workloads()) == {m.workload for m in left} | {idle}
    assert set(db.devices()) == {m.device for m in left}
    db.add(before[d] for d in gone)
    assert _digests(db) == set(before)


EVERY_IDENTITY = [Measurement(w, d, t, MeasureRecord.ok({"x": 1}, time_ms=2.0), source=s)
                  for w in WORKLOADS for d in DEVICES for t in TOOLCHAINS for s in SOURCES]


@settings(max_examples=40, deadline=None)
@example(EVERY_IDENTITY[::-1], {"toolchain": "nvcc"})
@given(st.lists(measurement, max_size=25), selection)
def test_plan_groups_are_the_counts_of_each_identity_in_order(items, sel):
    """plan's groups are a brute-force count of the selected measurements per (workload,
    device, toolchain, source), one group each, ordered by the workload's stored key,
    then device, toolchain and source."""
    db = TuningDB(":memory:")
    db.add(items)
    want = Counter((m.workload, m.device, m.toolchain, m.source) for m in db.measurements()
                   if _matches(m, sel))
    order = sorted(want, key=lambda g: (g[0].key(), *g[1:]))
    assert [((g.workload, g.device, g.toolchain, g.source), g.measurements)
            for g in plan(db, Selection(**sel))] == [(g, want[g]) for g in order]


def test_selection_must_name_something_and_a_path_names_its_file():
    with pytest.raises(InvalidInputError, match="name what to remove"):
        Selection()
    with pytest.raises(InvalidInputError, match="empty list of workloads"):
        Selection(workloads=[])
    assert Selection(source="/data/runs/a100.json.gz").source == "a100.json.gz"


def _run(capsys, *argv):
    code = main(["history", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_dry_run_changes_nothing_then_remove_and_reimport(capsys, two_device_db):
    """--dry-run lists the groups and leaves the file as it was; remove takes exactly
    them; importing the file again adds them back."""
    db, first, other = two_device_db
    capsys.readouterr()
    with open(db, "rb") as f:
        before_bytes = f.read()
    code, out, _ = _run(capsys, "remove", "--db", db, "--device", "Second GPU", "--dry-run",
                        "--json")
    dry = json.loads(out)
    assert code == 0 and dry["dry_run"] and dry["removed"] > 0
    assert [g["source"] for g in dry["groups"]] == ["second.json"]
    with open(db, "rb") as f:
        assert f.read() == before_bytes
    code, out, _ = _run(capsys, "remove", "--db", db, "--source", str(other), "--json")
    done = json.loads(out)
    # the dry run's "removed" and "left" are what the removal then takes and leaves
    assert code == 0 and (done["groups"], done["removed"], done["left"]) == (
        dry["groups"], dry["removed"], dry["left"])
    code, out, _ = _run(capsys, "list", "--db", db, "--json")
    assert [r["device"] for r in json.loads(out)] == ["Synthetic GPU"]
    code, out, _ = _run(capsys, "import", str(other), "--db", db, "--json")
    assert code == 0 and json.loads(out)["files"][0]["added"] == dry["removed"]


def test_cli_nothing_matching_all_options_is_exit_1(capsys, two_device_db):
    db, _, _ = two_device_db
    capsys.readouterr()
    code, out, _ = _run(capsys, "remove", "--db", db, "--device", "Second GPU", "--source",
                        "synth.json.gz")
    assert code == 1 and "nothing removed" in out


@pytest.mark.parametrize("argv, needle", [
    ([], "name what to remove"),
    (["--device", "H100"], "no device 'H100'"),
    (["--source", "nope.json"], "no measurement in"),
    (["--toolchain", "hipcc"], "has toolchain 'hipcc'"),
    (["--workload", "no such kernel"], "no workload matching"),
])
def test_cli_bad_selection_is_one_line_exit_2_and_removes_nothing(capsys, two_device_db, argv,
                                                                   needle):
    db, _, _ = two_device_db
    capsys.readouterr()
    count = sqlite3.connect(db).execute("SELECT COUNT(*) FROM measurements").fetchone()[0]
    code, out, err = _run(capsys, "remove", "--db", db, *argv)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1 and out == ""
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM measurements").fetchone()[0] == count


def test_cli_remove_from_a_missing_database_creates_nothing(capsys, tmp_path):
    db = tmp_path / "absent.db"
    code, _, err = _run(capsys, "remove", "--db", str(db), "--device", "x")
    assert code == 2 and "no such database" in err and not db.exists()


def test_remove_from_an_empty_file_writes_nothing_into_it(tmp_path, capsys):
    """A 0-byte --db was made a 40 KiB database while the removal failed."""
    empty = tmp_path / "z0.db"
    empty.write_bytes(b"")
    assert main(["history", "remove", "--db", str(empty), "--source", "tune"]) == 2
    assert "an empty file, no tuning database" in capsys.readouterr().err
    assert empty.stat().st_size == 0


def test_a_selection_of_thousands_of_workloads_removes_exactly_them():
    """An OR per workload nested past SQLite's expression depth near 1,000 workloads
    (OperationalError from the API); a row-value IN takes any number."""
    db = TuningDB(":memory:")
    stored = [Measurement(Workload("k", [i], ("x",)), "a100", "nvcc",
                          MeasureRecord.ok({"x": 1}, time_ms=1.0)) for i in range(4)]
    db.add(stored)
    chosen = tuple(Workload("k", [i], ("x",)) for i in range(1, 3000, 2))  # stores 1 and 3
    assert sum(g.measurements for g in remove(db, Selection(workloads=chosen))) == 2
    assert sorted(m.workload.problem for m in db.measurements()) == [[0], [2]]
