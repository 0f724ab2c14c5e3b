"""Gaps a mutation pass over the session layer, the CLI and the run's files found: each
test names the change of the code it catches ("Mutant: ..."), which every other test
let through.
"""

from __future__ import annotations

import signal

import pytest
from hypothesis import given, settings, strategies as st

from iobound.errors import InvalidInputError
from search.cli.main import main
from search.interrupts import signals_deferred, signals_raised
from search.log_writer import LogWriter
from search.measure.base import MeasureRecord, Measurer
from search.path_kind import path_kind
from search.records import has_log
from search.resume import check_resume_identity, load_resume
from search.session import TuneSettings, tune_replay
from search.grid_space import GridSpace

LAYER = "cin=2,hin=4,cout=2,kh=3"  # 54 configurations on the V100
#: What resume.py documents must agree (written out here: a field dropped from its tuple
#: must not drop out of the test too).
IDENTITY = ("kind", "layer", "device", "algorithm", "kernel", "problem_size", "pruned",
            "params", "size")


class _Bowl(Measurer):
    name = "bowl"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=1.0) for c in configs]


def test_a_budget_equal_to_the_space_is_no_budget_beyond_it(capsys, tmp_path):
    """--budget exactly the space's size: every configuration is measured, as asked, and
    no notice says the budget is *more* than the space (its message would be false).
    (Mutant: ``settings.budget >= len(space)`` in tune_and_store.)"""
    code = main(["tune", "--layer", LAYER, "--measure", "model", "--budget", "54",
                 "--no-verify", "--out-dir", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0 and "evaluations 54 (ok 54)" in out
    assert "is more than the space's" not in err


def test_a_resume_folder_is_refused_as_a_folder(capsys, tmp_path):
    """``--resume DIR``: one line, exit 2, saying it is a folder (not that the log is
    "missing, empty or cut", which sends the user looking for a lost file).
    (Mutant: the ``os.path.isdir(resume)`` check of check_log_paths dropped.)"""
    code = main(["tune", "--layer", LAYER, "--measure", "model", "--budget", "2",
                 "--no-verify", "--out-dir", str(tmp_path / "k"), "--resume", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert "is a folder" in err and "missing" not in err


def test_resume_takes_the_first_record_of_an_index_and_its_reused_mark(tmp_path):
    """A log holding one index twice (measured, then taken from the database): the
    resume takes the first record ("the first of each index"), and counts the index as
    reused only when that first record is another run's. (Mutant: the reused set filled
    from any record of the index, dropping ``i not in known``; or the last record kept.)"""
    space, path = GridSpace({"a": [1, 2, 3]}), tmp_path / "run.jsonl"
    with LogWriter(path, {"space": space.describe(), "measurer": _Bowl().describe()}) as w:
        w.append(1, MeasureRecord.ok({"a": 2}, time_ms=1.0))
        w.append(1, MeasureRecord.ok({"a": 2}, time_ms=5.0), reused=True)
        w.append(2, MeasureRecord.ok({"a": 3}, time_ms=2.0), reused=True)
        w.append(2, MeasureRecord.ok({"a": 3}, time_ms=7.0))
    reused: set = set()
    known = load_resume(path, space, _Bowl(), reused)
    assert {i: r.time_ms for i, r in known.items()} == {1: 1.0, 2: 2.0}
    assert reused == {2}


@settings(max_examples=30, deadline=None)
@given(key=st.sampled_from(IDENTITY), there=st.integers(0, 3), here=st.integers(0, 3))
def test_every_identity_field_of_the_space_is_compared(key, there, here):
    """A log whose space differs in any identity field (kind, layer, device, algorithm,
    kernel, problem size, pruning, parameters, size) is refused with its name; an equal
    field is accepted. (Mutant: a field, e.g. ``device``, dropped from _SPACE_IDENTITY:
    a log of another GPU whose pruned space has the same size was resumed as this one's.)"""
    header = {"space": {key: f"v{there}"}}
    if there == here:
        check_resume_identity("r.jsonl", header, {key: f"v{here}"})
    else:
        with pytest.raises(InvalidInputError, match=f"another space \\({key} "):
            check_resume_identity("r.jsonl", header, {key: f"v{here}"})


def test_an_older_logs_top_level_problem_size_is_compared():
    """A replay log written before the space recorded its problem size keeps it at the
    header's top level: it is compared all the same. (Mutant: the fallback dropped.)"""
    header = {"space": {"kind": "replay"}, "problem_size": [64, 64]}
    check_resume_identity("r.jsonl", header, {"kind": "replay", "problem_size": [64, 64]})
    with pytest.raises(InvalidInputError, match="problem_size"):
        check_resume_identity("r.jsonl", header, {"kind": "replay", "problem_size": [32, 32]})


def test_a_signal_noted_before_the_loop_stops_it_as_it_starts():
    """A Ctrl-C noted by the run's deferred block before the tuning loop starts (while
    the history is read, say) raises as the loop's ``signals_raised`` block opens: the
    loop does not run its whole budget first. (Mutant: the noted signal not raised.)"""
    ran = []
    with signals_deferred() as deferred:
        deferred.signal = signal.SIGINT  # as the handler notes a Ctrl-C
        with pytest.raises(KeyboardInterrupt):
            with signals_raised():
                ran.append(True)
    assert ran == []


def test_a_path_under_a_file_is_missing_not_refused(tmp_path):
    """``file/child`` (ENOTDIR) is "missing", as ``Path.exists()`` takes it: no log there,
    not bad input. (Mutant: ENOTDIR dropped from path_kind's _MISSING.)"""
    (tmp_path / "f").write_text("x")
    child = str(tmp_path / "f" / "run.jsonl")
    assert path_kind(child, "--log") == "missing"
    assert has_log(child) is False


def test_a_replay_reports_json_puts_the_results_keys_first(synth_cache_path):
    """reports: "``to_dict()`` gives the JSON ... (the tuning result's keys first, then
    the session's)". (Mutant: the session's keys written first.)"""
    rep = tune_replay(str(synth_cache_path), TuneSettings(strategy="random", budget=2))
    result_keys = list(rep.result.to_dict())
    assert list(rep.to_dict())[:len(result_keys)] == result_keys


def test_tune_refuses_a_seed_the_log_cannot_store(tmp_path):
    """``tune()`` refuses a negative seed by name, before anything is measured or logged
    (not numpy's ValueError from the strategy's generator, a traceback in the CLI's
    callers). (Mutant: the seed check of tune_args._check_numbers dropped.)"""
    from search.tuner import tune
    log = tmp_path / "run.jsonl"
    with pytest.raises(InvalidInputError, match="seed"):
        tune(GridSpace({"a": [1, 2, 3]}), _Bowl(), "random", 2, -1, log=str(log))
    assert not log.exists()


def test_the_best_ever_is_the_fastest_of_every_workload_of_the_key():
    """A key whose layer has two workloads (direct and Winograd parameters): ``best``
    without parameter names is the fastest of both. (Mutant: max for min.)"""
    from search.history import History, HistoryKey
    key = HistoryKey(layer="L", device="v100", toolchain="model v1")
    with History(":memory:") as h:
        h.add(key, [MeasureRecord.ok({"x": 1}, time_ms=2.0),
                    MeasureRecord.ok({"x": 1, "e": 2}, time_ms=1.0)])
        assert h.best(key).time_ms == 1.0
        assert h.best(key, ("x",)).time_ms == 2.0


def test_the_librarys_defaults_are_the_clis():
    """``TuneSettings()`` runs the search ``iobound tune`` runs without --strategy and
    --budget (its help: "default 48"), so a script and the CLI agree.
    (Mutant: ``budget: int = 32``.)"""
    from search.cli.zero_shot_args import DEFAULT_BUDGET, DEFAULT_STRATEGY
    assert (TuneSettings().strategy, TuneSettings().budget) == (DEFAULT_STRATEGY, DEFAULT_BUDGET)


def _records(path) -> int:
    import json
    with open(path) as fh:
        return sum(1 for o in map(json.loads, fh) if o.get("kind") == "record")


def test_a_network_json_write_that_fails_leaves_the_old_table_and_says_so(
        tmp_path, capsys, monkeypatch):
    """--network-json is written whole or not at all (write_atomic): a write the system
    refuses leaves the earlier table as it was, and is one line, exit 1 (no result
    written: not bad input), saying the logs keep every layer. (Mutants: the table
    written with a plain ``open``; the OSError not turned into an OutputWriteError.)"""
    import errno

    from search import outputs
    table = tmp_path / "net.json"
    table.write_text("old table\n")
    atomic = outputs.write_atomic

    def refuse_the_table(path, data):
        if str(path) == str(table):
            raise OSError(errno.EROFS, "Read-only file system")
        return atomic(path, data)

    monkeypatch.setattr(outputs, "write_atomic", refuse_the_table)
    code = main(["tune", "--network", "alexnet", "--measure", "model", "--budget", "2",
                 "--no-verify", "--out-dir", str(tmp_path / "k"), "--network-json", str(table),
                 "--log", str(tmp_path / "run.jsonl")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1, err
    assert "could not write --network-json" in err[0] and "kept in its log" in err[0]
    assert table.read_text() == "old table\n"


def test_a_signal_while_a_network_is_copied_into_new_logs_stops_the_run(
        tmp_path, capsys, monkeypatch):
    """``--network --resume old --log new``: a Ctrl-C while the old logs are copied waits
    for the copies, then stops the run (exit 130, resume from the new logs): nothing more
    is measured. (Mutant: the signal noted during the copies dropped, so the run goes on
    to its whole budget after a Ctrl-C.)"""
    import glob
    import os

    from search import log_writer
    base = ["tune", "--network", "alexnet", "--measure", "model", "--strategy", "random",
            "--no-verify", "--out-dir", str(tmp_path / "k")]
    old, new = str(tmp_path / "old.jsonl"), str(tmp_path / "new.jsonl")
    assert main(base + ["--budget", "2", "--log", old]) == 0
    before = sum(_records(p) for p in glob.glob(str(tmp_path / "old.*.jsonl")))
    capsys.readouterr()
    copy = log_writer.copy_log

    def copy_then_signal(*args, **kwargs):
        done = copy(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C as the first layer's log is copied
        return done

    monkeypatch.setattr(log_writer, "copy_log", copy_then_signal)
    code = main(base + ["--budget", "4", "--resume", old, "--log", new])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 130 and f"resume with --resume {new}" in err[-1], err[-1:]
    assert sum(_records(p) for p in glob.glob(str(tmp_path / "new.*.jsonl"))) == before


def test_a_signal_after_the_loop_with_a_failed_write_is_an_interrupt_naming_it(
        tmp_path, synth_cache_path, monkeypatch):
    """A Ctrl-C landing as the loop has returned (before the writes) and an export that
    then fails: the run stops as interrupted (exit 130), saying what could not be written
    and where the measurements are, not as a plain write failure that swallows the Ctrl-C.
    (Mutant: tune_and_store no longer marks the result interrupted for that late signal.)"""
    import errno
    import os

    from search.interrupts import Interrupted
    from search.session import loop, storage
    tune_space = loop.tune_space

    def loop_then_signal(*args, **kwargs):
        out = tune_space(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)  # noted by tune_and_store's deferred block
        return out

    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(loop, "tune_space", loop_then_signal)
    monkeypatch.setattr(storage, "export_cache", disk_full)
    log = str(tmp_path / "run.jsonl")
    with pytest.raises(Interrupted) as caught:
        tune_replay(str(synth_cache_path),
                    TuneSettings(strategy="random", budget=3, log=log,
                                 export_cache=str(tmp_path / "c.json")))
    assert caught.value.measurements == 3 and caught.value.log == log
    assert caught.value.failed and caught.value.failed.startswith("--export-cache")
