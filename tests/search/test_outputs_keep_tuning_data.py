"""An output option never replaces a tuning database or a run's log (a CLI audit's faults).

``kernel --emit``, ``tune --network-json``, ``tune --export-cache`` and ``history export``
wrote their file over an existing tuning log (and ``--emit`` / ``--network-json`` over a
database): the measurements in it were lost. Each now refuses in one line, exit 2, the file
as it was. A resumed compressed log is refused before the notice of what was taken from it
(two stderr lines before); an SQLite file that is not ours is not called a tuning database;
a ``--network-json`` named as the run's ``--log`` (which a later ``--resume`` reads first)
is refused.
"""

from __future__ import annotations

import gzip
import json
import sqlite3

import pytest

from search.cli.main import main
from search.records import SCHEMA, SCHEMA_VERSION

TINY = ["--layer", "cin=4,hin=8,cout=8,kh=3,pad=1", "--measure", "model", "--no-verify"]


def _log(path):
    path.write_text(json.dumps({"schema": SCHEMA, "version": SCHEMA_VERSION, "kind": "header"})
                    + "\n")
    return path


def _database(path):
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE t (x)")
    return path


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize("kind", ["log", "database"])
@pytest.mark.parametrize("command", ["emit", "network-json", "export-cache"])
def test_an_output_never_replaces_tuning_data(tmp_path, capsys, monkeypatch, kind, command):
    monkeypatch.chdir(tmp_path)
    target = _log(tmp_path / "t.jsonl") if kind == "log" else _database(tmp_path / "t.db")
    before = target.read_bytes()
    argv = {"emit": ["kernel", "--layer", "cin=4,hin=8,cout=8,kh=3,pad=1",
                     "--config", "x=2,y=2,z=2,alpha=2", "--emit", str(target)],
            "network-json": ["tune", "--network", "squeezenet", "--measure", "model",
                             "--budget", "2", "--no-verify", "--network-json", str(target)],
            "export-cache": ["tune", *TINY, "--budget", "2", "--export-cache", str(target)]}
    assert main(argv[command]) == 2
    what = "a tuning log" if kind == "log" else "an SQLite database"
    assert f"is {what}; writing would replace it" in _one_line(capsys)
    assert target.read_bytes() == before


def test_history_export_never_replaces_a_log(tmp_path, capsys):
    db, log = tmp_path / "h.db", _log(tmp_path / "run.jsonl")
    assert main(["tune", *TINY, "--budget", "2", "--history", str(db), "--out-dir",
                 str(tmp_path / "k")]) == 0
    capsys.readouterr()
    before = log.read_bytes()
    assert main(["history", "export", "--db", str(db), str(log)]) == 2
    assert "is a tuning log; writing would replace it" in _one_line(capsys)
    assert log.read_bytes() == before


def test_a_compressed_log_resumed_alone_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["tune", *TINY, "--budget", "2", "--log", "r.jsonl"]) == 0
    packed = tmp_path / "r.jsonl.gz"
    packed.write_bytes(gzip.compress((tmp_path / "r.jsonl").read_bytes()))
    capsys.readouterr()
    assert main(["tune", "--resume", str(packed)]) == 2
    assert "is compressed (gzip): a run cannot append to it" in _one_line(capsys)
    # read into a new log it resumes: nothing is appended to it
    assert main(["tune", "--resume", str(packed), "--log", "new.jsonl", "--budget", "3"]) == 0


def test_an_sqlite_file_of_another_program_is_not_called_ours(tmp_path, capsys):
    other = _database(tmp_path / "other.db")
    assert main(["tune", "--resume", str(other)]) == 2
    line = _one_line(capsys)
    assert "is an SQLite database, not a run's log" in line and "is a tuning database" not in line


def test_network_json_named_as_the_log_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["tune", "--network", "squeezenet", "--measure", "model", "--budget", "2",
                 "--no-verify", "--log", "nn.jsonl", "--network-json", "nn.jsonl"]) == 2
    assert "is also given as" in _one_line(capsys)
    assert not list(tmp_path.glob("nn*"))


def _kt_cache(path, times=(2.5, 3.0)):
    """Someone's Kernel Tuner cache: measurements of another kernel on a T4."""
    cache = {str(a): {"a": a, "time": t} for a, t in zip((1, 2), times)}
    path.write_text(json.dumps({"device_name": "T4", "kernel_name": "k", "problem_size": [1],
                                "tune_params_keys": ["a"], "tune_params": {"a": [1, 2]},
                                "objective": "time", "cache": cache}))
    return path


@pytest.mark.parametrize("command", ["emit", "network-json"])
def test_an_output_never_replaces_a_kernel_tuner_cache(tmp_path, capsys, monkeypatch, command):
    """A CLI audit: ``kernel --emit`` wrote CUDA source over a cache of T4 measurements."""
    monkeypatch.chdir(tmp_path)
    target = _kt_cache(tmp_path / "kt.json")
    before = target.read_bytes()
    argv = {"emit": ["kernel", "--layer", "cin=4,hin=8,cout=8,kh=3,pad=1",
                     "--config", "x=2,y=2,z=2,alpha=2", "--emit", str(target)],
            "network-json": ["tune", "--network", "squeezenet", "--measure", "model",
                             "--budget", "2", "--no-verify", "--network-json", str(target)]}
    assert main(argv[command]) == 2
    assert "is a Kernel Tuner cache; writing would replace it" in _one_line(capsys)
    assert target.read_bytes() == before


def test_an_export_never_replaces_a_cache_it_does_not_hold(tmp_path, capsys):
    """``tune --export-cache`` and ``history export`` over another workload's cache: refused
    in one line, exit 2, before the run measures anything (it was refused only at the run's
    end, exit 1), the cache as it was."""
    foreign = _kt_cache(tmp_path / "kt.json")
    before = foreign.read_bytes()
    db, log = tmp_path / "h.db", tmp_path / "r.jsonl"
    assert main(["tune", *TINY, "--budget", "2", "--history", str(db), "--log", str(log),
                 "--export-cache", str(foreign)]) == 2
    assert ("is a Kernel Tuner cache of another device ('T4'; this run: 'V100-SXM2'): this "
            "run's export would replace its 2 measurements" in _one_line(capsys))
    assert not log.exists() and not db.exists() and foreign.read_bytes() == before
    assert main(["tune", *TINY, "--budget", "2", "--history", str(db)]) == 0
    capsys.readouterr()
    assert main(["history", "export", "--db", str(db), str(foreign)]) == 2
    assert "writing would lose them: give another file" in _one_line(capsys)
    assert foreign.read_bytes() == before


def test_a_replay_and_a_network_check_their_exports_first(tmp_path, capsys, monkeypatch):
    """The same check for a replayed file's export and for each layer's export of a
    network run (``c.<layer>.json``)."""
    monkeypatch.chdir(tmp_path)
    replayed = _kt_cache(tmp_path / "a4000.json")
    replayed.write_text(replayed.read_text().replace('"T4"', '"A4000"'))
    foreign = _kt_cache(tmp_path / "kt.json")
    assert main(["tune", "--measure", f"replay:{replayed}", "--budget", "2",
                 "--export-cache", str(foreign)]) == 2
    assert "of another device ('T4'; this run: 'A4000')" in _one_line(capsys)
    layer = _kt_cache(tmp_path / "c.squeezenet.conv1.json")
    before = layer.read_bytes()
    assert main(["tune", "--network", "squeezenet", "--measure", "model", "--budget", "2",
                 "--no-verify", "--export-cache", "c.json", "--out-dir", "k"]) == 2
    assert "'c.squeezenet.conv1.json' is a Kernel Tuner cache of another" in _one_line(capsys)
    assert layer.read_bytes() == before and not (tmp_path / "k").exists()


def test_an_export_of_the_same_workload_it_cannot_hold_is_refused_at_the_end(tmp_path, capsys):
    """A cache of this very layer and device that the run's export does not hold whole (a
    run of other configurations, not resumed from it) can only be told once the run is over:
    exit 1, the measurements kept in the log, the cache as it was."""
    cache, log = tmp_path / "c.json", tmp_path / "r.jsonl"
    assert main(["tune", *TINY, "--budget", "3", "--export-cache", str(cache)]) == 0
    before = cache.read_bytes()
    capsys.readouterr()
    assert main(["tune", *TINY, "--strategy", "random", "--budget", "3", "--seed", "7",
                 "--log", str(log), "--export-cache", str(cache)]) == 1
    err = capsys.readouterr().err
    assert "this export does not hold" in err and f"kept in {log}" in err
    assert cache.read_bytes() == before


def test_an_export_replaces_its_own_earlier_export(tmp_path, capsys):
    """What the rule must not stop: a resumed run's export over its first part's, and a
    second ``history export`` of a workload that gained records (nothing is lost)."""
    from search.kt_cache import load_cache

    log, cache, db = tmp_path / "r.jsonl", tmp_path / "c.json", tmp_path / "h.db"
    assert main(["tune", *TINY, "--budget", "2", "--log", str(log), "--history", str(db),
                 "--export-cache", str(cache)]) == 0
    assert len(load_cache(cache).entries) == 2
    assert main(["tune", "--resume", str(log), "--budget", "5", "--export-cache", str(cache)]) == 0
    assert len(load_cache(cache).entries) == 5
    exported = tmp_path / "x.json"
    assert main(["history", "export", "--db", str(db), str(exported)]) == 0
    first = len(load_cache(exported).entries)
    assert main(["tune", *TINY, "--budget", "12", "--seed", "3", "--history", str(db)]) == 0
    assert main(["history", "export", "--db", str(db), str(exported)]) == 0
    assert len(load_cache(exported).entries) > first


def test_a_changed_time_counts_as_lost(tmp_path):
    """The same configuration with another time is a measurement the export does not hold."""
    from iobound.errors import InvalidInputError
    from search.kt_cache import KtCache
    from search.kt_cache_write import check_keeps_measurements

    path = _kt_cache(tmp_path / "kt.json")
    check_keeps_measurements(path, KtCache({"a": [1, 2]}, [{"a": 1, "time": 2.5},
                                                          {"a": 2, "time": 3.0}]))
    with pytest.raises(InvalidInputError, match="1 measurement this export does not hold "
                                                r"\(a=2\); writing would lose it"):
        check_keeps_measurements(path, KtCache({"a": [1, 2]}, [{"a": 1, "time": 2.5},
                                                              {"a": 2, "time": 9.0}]))


@pytest.mark.parametrize("there", ["folder", "cache"])
def test_the_best_kernel_file_is_checked_before_the_run(tmp_path, capsys, there):
    """A folder (or someone's cache) where ``--out-dir``'s best-kernel file goes: refused
    before measuring (a folder was found after the budget: exit 1, the run's kernel lost)."""
    out = tmp_path / "k"
    out.mkdir()
    spot = out / "alexnet.conv2_direct_best.cu"
    spot.mkdir() if there == "folder" else _kt_cache(spot)
    assert main(["tune", "--layer", "alexnet.conv2", "--measure", "model", "--budget", "2",
                 "--no-verify", "--out-dir", str(out)]) == 2
    line = _one_line(capsys)
    assert "alexnet.conv2_direct_best.cu" in line
    assert ("is a folder, where the run writes its best kernel" if there == "folder"
            else "is a Kernel Tuner cache; writing would replace it") in line
