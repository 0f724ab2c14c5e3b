"""``iobound history`` behaviour found unchecked by mutation testing: which actions open
the database read-only (``--help``: list, best and export do, and ``remove --dry-run``
changes nothing), and an import that fails after opening a new database stores nothing
and deletes nothing.
References: the subcommand's ``--help`` text and README.md."""

from __future__ import annotations

import json

import pytest

from iobound.errors import InvalidInputError
from search.cli.main import main


@pytest.fixture
def db_path(capsys, tmp_path, synth_cache_path):
    """A database of the synthetic cache (what the import printed is read away)."""
    db = str(tmp_path / "t.db")
    assert main(["history", "import", str(synth_cache_path), "--db", db]) == 0
    capsys.readouterr()
    return db


@pytest.mark.parametrize("argv, readonly", [
    (["list"], True),
    (["best"], True),
    (["remove", "--source", "synth.json.gz", "--dry-run"], True),
    (["remove", "--source", "synth.json.gz"], False),
])
def test_which_actions_open_the_database_read_only(capsys, monkeypatch, db_path, argv, readonly):
    import search.db.opening

    real, modes = search.db.opening.open_database, []

    def spy(path, option, *, readonly, must_exist=None):
        modes.append(readonly)
        return real(path, option, readonly=readonly, must_exist=must_exist)

    monkeypatch.setattr(search.db.opening, "open_database", spy)
    assert main(["history", argv[0], "--db", db_path, *argv[1:]]) == 0
    assert modes == [readonly]


@pytest.mark.parametrize("exc, code", [(KeyboardInterrupt(), 130),
                                       (InvalidInputError("bad record"), 2)])
def test_a_failed_import_into_a_new_database_stores_nothing(capsys, monkeypatch, tmp_path,
                                                            synth_cache_path, exc, code):
    """README: an import that fails stores nothing; a database file it created is left
    empty, never deleted (see the next test), and SQLite's -wal and -shm files are gone."""
    import search.db.importer
    from search.db import TuningDB

    def fail(db, files):
        raise exc

    monkeypatch.setattr(search.db.importer, "store_files", fail)
    assert main(["history", "import", str(synth_cache_path), "--db", str(tmp_path / "new.db")]) == code
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.db", "synth.json.gz"]
    with TuningDB(str(tmp_path / "new.db"), readonly=True) as t:
        assert t.count() == 0


def test_a_failed_import_never_deletes_what_another_process_stores(capsys, monkeypatch,
                                                                   tmp_path, synth_cache_path):
    """Two processes on a new database: one import fails (a lock it waited for too long, or
    Ctrl-C) after the other stored its records there; they are all kept (the import used to
    delete a database that did not exist when it started)."""
    import sqlite3

    import search.db.importer
    from search.db import Measurement, TuningDB, Workload
    from search.measure.base import MeasureRecord
    db = tmp_path / "tuning.db"

    def other_process_then_lock_timeout(tdb, files):
        with TuningDB(str(db)) as other:
            other.add([Measurement(Workload("k", [8], ("x",)), "devB", "t",
                                   MeasureRecord.ok({"x": x}, time_ms=1.0 + x)) for x in range(5)])
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(search.db.importer, "store_files", other_process_then_lock_timeout)
    assert main(["history", "import", str(synth_cache_path), "--db", str(db)]) == 2
    assert "database is locked" in capsys.readouterr().err
    with TuningDB(str(db), readonly=True) as t:
        assert t.count() == 5


def _split_db(capsys, tmp_path, synth_cache_path) -> str:
    """A database holding workload synth_kernel on "Synthetic GPU" only and other_kernel
    on "Second GPU" only."""
    import json

    from tests.search.conftest import synth_cache_dict

    other = synth_cache_dict() | {"device_name": "Second GPU", "kernel_name": "other_kernel"}
    (tmp_path / "other.json").write_text(json.dumps(other))
    db = str(tmp_path / "t.db")
    assert main(["history", "import", str(synth_cache_path), str(tmp_path / "other.json"),
                 "--db", db]) == 0
    capsys.readouterr()
    return db


@pytest.mark.parametrize("as_json", [True, False])
@pytest.mark.parametrize("command, text", [("list", "no measurement of the workload on the device"),
                                           ("best", "no timed measurement matches")])
def test_a_workload_not_on_the_device_is_exit_1(capsys, tmp_path, synth_cache_path, as_json,
                                                command, text):
    """README exit codes: 1 for no result. Workload A is on device 1 only, B on device 2
    only: --workload A --device 2 selects nothing (both names are known: not bad input)."""
    db = _split_db(capsys, tmp_path, synth_cache_path)
    code = main(["history", command, "--db", db, "--workload", "synth_kernel", "--device",
                 "Second GPU", *(["--json"] if as_json else [])])
    out = capsys.readouterr().out
    assert code == 1
    assert (json.loads(out) == []) if as_json else (text in out)


def _two_workload_db(tmp_path, synth_cache_path, scale=0.9):
    """A database of the synthetic cache and of another kernel on the same device whose
    times are the synthetic ones times ``scale`` (so the fastest interleave)."""
    import json

    from tests.search.conftest import synth_cache_dict

    other = synth_cache_dict()
    other["kernel_name"] = "other_kernel"
    for e in other["cache"].values():
        if not isinstance(e["time"], str):
            e["time"] = round(e["time"] * scale, 6)
            e["times"] = [e["time"]] * 3
    (tmp_path / "other.json").write_text(json.dumps(other))
    db = str(tmp_path / "t.db")
    assert main(["history", "import", str(synth_cache_path), str(tmp_path / "other.json"),
                 "--db", db]) == 0
    times = sorted(e["time"] for c in (synth_cache_dict(), other) for e in c["cache"].values()
                   if not isinstance(e["time"], str))
    return db, times


@pytest.mark.parametrize("k", [1, 3, 7])
def test_best_is_the_k_fastest_over_every_workload(capsys, tmp_path, synth_cache_path, k):
    """`history best -k K` lists the K fastest timed records of all workloads, fastest
    first: the reference sorts every timed entry of both cache files."""
    import json

    db, times = _two_workload_db(tmp_path, synth_cache_path)
    capsys.readouterr()
    assert main(["history", "best", "--db", db, "-k", str(k), "--json"]) == 0
    got = [row["time_ms"] for row in json.loads(capsys.readouterr().out)]
    assert got == pytest.approx(times[:k])


@pytest.mark.parametrize("k", ["0", "-2"])
def test_best_k_below_one_is_one_line_exit_2(capsys, tmp_path, synth_cache_path, k):
    db = str(tmp_path / "t.db")
    assert main(["history", "import", str(synth_cache_path), "--db", db]) == 0
    capsys.readouterr()
    assert main(["history", "best", "--db", db, "-k", k]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and f"-k must be >= 1, got {k}" in err


def test_best_on_a_device_lists_only_that_devices_records(capsys, two_device_db):
    """`history best --device D`: every row is on D (the fixture holds the same cache on
    two devices, so without the filter the other device's records tie in)."""
    import json

    db, _, _ = two_device_db
    capsys.readouterr()
    assert main(["history", "best", "--db", db, "--device", "Second GPU", "-k", "4", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 4 and {r["device"] for r in rows} == {"Second GPU"}


def _toolchain_db(tmp_path) -> str:
    """Workload k on v100: x = 1, 2, 3 by toolchain nvcc-12 (x = 3 an estimate), and
    x = 4, 5 by nvcc-11; the time of x is x ms."""
    from search.db import Measurement, TuningDB, Workload
    from search.measure.base import MeasureRecord

    db = str(tmp_path / "tc.db")
    with TuningDB(db) as t:
        t.add([Measurement(Workload("k", [8], ("x",)), "v100", "nvcc-12" if x <= 3 else "nvcc-11",
                           MeasureRecord.ok({"x": x}, time_ms=float(x), estimate=x == 3),
                           source="s.json") for x in (1, 2, 3, 4, 5)])
    return db


def test_best_json_carries_toolchain_and_estimate(capsys, tmp_path):
    import json

    db = _toolchain_db(tmp_path)
    assert main(["history", "best", "--db", db, "-k", "5", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["config"]["x"], r["toolchain"], r["estimate"], r["time_ms"]) for r in rows] == [
        (x, "nvcc-12" if x <= 3 else "nvcc-11", x == 3, float(x)) for x in (1, 2, 3, 4, 5)]


@pytest.mark.parametrize("toolchain, xs", [("nvcc-11", {4, 5}), ("nvcc-12", {1, 2, 3}),
                                           (None, {1, 2, 3, 4, 5})])
def test_export_toolchain_takes_only_its_measurements(capsys, tmp_path, toolchain, xs):
    import json

    from search.kt_cache import load_cache

    db, out = _toolchain_db(tmp_path), tmp_path / "out.json"
    assert main(["history", "export", "--db", db, str(out), "--json",
                 *(["--toolchain", toolchain] if toolchain else [])]) == 0
    assert json.loads(capsys.readouterr().out)["entries"] == len(xs)
    assert {e["x"] for e in load_cache(out).entries} == xs


def test_importing_the_database_into_itself_is_refused(capsys, db_path):
    """A mistake, never a merge: one line, exit 2."""
    assert main(["history", "import", db_path, "--db", db_path]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1
    assert "is the database imported into" in err


@pytest.mark.parametrize("dry_run", [True, False])
def test_remove_json_selecting_nothing_is_exit_1(capsys, two_device_db, dry_run):
    """README exit codes: 1 for no result, with --json too (the two options are each
    known, but no measurement has both)."""
    import json

    db = two_device_db[0]
    capsys.readouterr()
    code = main(["history", "remove", "--db", db, "--device", "Second GPU", "--source",
                 "synth.json.gz", "--json", *(["--dry-run"] if dry_run else [])])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["removed"] == 0 and out["groups"] == [] and out["dry_run"] == dry_run


def test_dry_run_text_says_what_would_be_left(capsys, two_device_db):
    """The fixture holds the synthetic cache twice (two devices); a dry run of one source
    says the database is unchanged and how many would be left: total minus selected."""
    from tests.search.conftest import synth_cache_dict

    n = len(synth_cache_dict()["cache"])
    db = two_device_db[0]
    capsys.readouterr()
    assert main(["history", "remove", "--db", db, "--source", "synth.json.gz", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"would remove {n} measurements:")
    assert out.rstrip().endswith(f"unchanged ({2 * n} measurements; without --dry-run {n} left)")


def test_remove_names_workloads_by_their_distinct_labels(capsys, tmp_path):
    """Two workloads that differ only in their parameters keep the labels `list` gives
    them ("k [8] (x,y)", "k [8] (x,z)") in what `remove` prints, also once removed."""
    import json

    from tests.search.test_cli_history import _two_param_sets

    db = _two_param_sets(tmp_path)
    capsys.readouterr()
    assert main(["history", "remove", "--db", db, "--device", "d", "--json"]) == 0
    groups = json.loads(capsys.readouterr().out)["groups"]
    assert sorted(g["workload"] for g in groups) == ["k [8] (x,y)", "k [8] (x,z)"]


def test_remove_workload_must_name_one_workload(capsys, tmp_path):
    """--workload of remove names one workload: a text two labels contain is refused with
    both (a typo's substring could name many), and nothing is removed."""
    from tests.search.test_cli_history import _two_param_sets

    db = _two_param_sets(tmp_path)
    capsys.readouterr()
    assert main(["history", "remove", "--db", db, "--workload", "k [8]"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1
    assert "2 workloads matching" in err and "k [8] (x,y)" in err and "k [8] (x,z)" in err
    assert main(["history", "list", "--db", db, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2


def test_export_names_an_unknown_device_before_the_workload(capsys, tmp_path, synth_cache_path):
    """`history export --device X` with X not in a database of several workloads said
    "2 workloads in the database; choose one with --workload": the device is what is wrong."""
    db, _ = _two_workload_db(tmp_path, synth_cache_path)
    capsys.readouterr()
    assert main(["history", "export", "--db", db, "--device", "nonexistent gpu",
                 str(tmp_path / "out.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no device 'nonexistent gpu' in" in err, err
    assert not (tmp_path / "out.json").exists()
