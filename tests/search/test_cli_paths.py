"""Output paths are checked before any work starts (search/cli/common.py)."""

import argparse
import json
import os
import re
import stat
import threading

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from iobound import limits
from iobound.errors import InvalidInputError
from search.cli.common import (check_distinct_files, check_output_dir, check_output_file,
                               int_option, json_safe)
from search.cli.main import main
from search.outputs import write_atomic


@pytest.fixture
def places(tmp_path):
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("x")
    return tmp_path


@pytest.mark.parametrize("rel,needle", [
    ("", "empty"), ("folder", "is a folder"), ("missing/x.cu", "does not exist"),
    ("file/x.cu", "is not a folder"),
])
def test_bad_output_file_is_refused(places, rel, needle):
    """A folder, a missing parent, a file as parent or an empty path: one line naming the flag."""
    path = str(places / rel) if rel else ""
    with pytest.raises(InvalidInputError, match=needle) as info:
        check_output_file("--emit", path)
    assert str(info.value).startswith("--emit")


def test_unwritable_place_is_refused_even_for_root():
    """A place no write can reach (/proc) is refused, whatever the permissions say."""
    with pytest.raises(InvalidInputError, match="--log"):
        check_output_file("--log", "/proc/iobound-cannot-be-here")


def test_good_output_file_is_accepted_and_left_alone(places):
    """A new file in an existing folder passes and is not left behind; an existing file
    passes and keeps its contents."""
    assert check_output_file("--log", places / "new.jsonl") == places / "new.jsonl"
    assert not (places / "new.jsonl").exists()
    check_output_file("--log", places / "file")
    assert (places / "file").read_text() == "x"


@pytest.mark.parametrize("rel,needle", [("", "empty"), ("file", "is a file"),
                                        ("missing/d", "does not exist")])
def test_bad_output_dir_is_refused(places, rel, needle):
    """A file where a folder is wanted, a missing parent or an empty path is refused."""
    with pytest.raises(InvalidInputError, match=needle):
        check_output_dir("--out-dir", str(places / rel) if rel else "")


def test_good_output_dir_is_accepted(places):
    """An existing folder or a new one in an existing folder passes (nothing is created)."""
    assert check_output_dir("--out-dir", places / "folder") == places / "folder"
    check_output_dir("--out-dir", places / "new")
    assert not (places / "new").exists()


def test_kernel_emit_is_checked_before_anything_runs(capsys, places):
    """kernel --emit into a folder: exit 2, one line, before the layer is even read."""
    code = main(["kernel", "--layer", "cin=2,hin=6,cout=2,kh=3", "--config", "x=1",
                 "--emit", str(places / "folder")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and "--emit" in err and "folder" in err


def test_int_option_error_names_the_flag_and_limit(capsys):
    """An integer option past its limit is an argparse error naming the flag and the limit."""
    parser = argparse.ArgumentParser(prog="t", exit_on_error=False)
    parser.add_argument("--seed", type=int_option("--seed", limits.SEED))
    with pytest.raises(argparse.ArgumentError, match=f"--seed.*{limits.SEED.high}"):
        parser.parse_args(["--seed", str(1 << 64)])


def test_json_safe_output_is_strict_json():
    """NaN and infinities become null at any depth."""
    assert json_safe({"a": [float("nan"), {"b": float("-inf")}], "c": 1.0}) == \
        {"a": [None, {"b": None}], "c": 1.0}


@pytest.mark.parametrize("flag,value,needle", [
    ("--seed", "-1", "seed=-1 is below the minimum 0"),
    ("--budget", str(1 << 40), "budget=.* is above the limit"),
    ("--patience", "9" * 30, "patience=.* is above the limit"),
    ("--batch-size", str(1 << 13), "batch_size=.* is above the limit"),
])
def test_tune_numbers_are_range_checked_before_the_run(capsys, flag, value, needle):
    """tune's seed, budget, patience and batch size past iobound.limits: exit 2 before any
    output (the settings are built first)."""
    code = main(["tune", "--layer", "cin=2,hin=6,cout=2,kh=3", "--measure", "model", flag, value])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert re.search(needle, err)


@pytest.mark.parametrize("flag,rel,needle", [
    ("--out-dir", "file", "is a file"), ("--export-cache", "folder", "is a folder"),
    ("--log", "missing/run.jsonl", "does not exist"), ("--export-cache", "", "empty"),
    ("--history", "folder", "is a folder"),
])
def test_tune_output_paths_are_checked_before_the_run(capsys, places, flag, rel, needle):
    """A tune output path that cannot be written: exit 2 with nothing printed before it
    (no space built, nothing measured), instead of failing after the whole run."""
    path = str(places / rel) if rel else ""
    code = main(["tune", "--layer", "cin=2,hin=6,cout=2,kh=3", "--measure", "model",
                 "--budget", "2", flag, path])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and flag in err and needle in err


def test_replay_output_paths_are_checked_before_the_run(capsys, places, synth_cache_path):
    """The same for a replayed space."""
    code = main(["tune", "--measure", f"replay:{synth_cache_path}", "--export-cache",
                 str(places / "folder")])
    out, err = capsys.readouterr()
    assert code == 2 and "--export-cache" in err and "replaying" not in out


def test_report_out_dir_is_checked_before_the_selection(capsys, places):
    """report --out-dir that is a file: exit 2 at once, before any layer is evaluated."""
    pytest.importorskip("matplotlib")
    code = main(["report", "--network", "alexnet", "--out-dir", str(places / "file")])
    out, err = capsys.readouterr()
    assert code == 2 and "--out-dir" in err and "is a file" in err and out == ""


# -- one file named by two options ----------------------------------------------------

def _spellings(folder, name):
    """Ways to name ``folder/name``: as is, with ``.`` and ``..`` in it, through a link to
    the folder."""
    link = folder / "link"
    if not link.exists():
        link.symlink_to(folder, target_is_directory=True)
    return [str(folder / name), str(folder / "." / name),
            str(folder / "sub" / ".." / name), str(link / name)]


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flags=st.permutations(["--log", "--export-cache", "--history", "--network-json"]),
       i=st.integers(0, 3), j=st.integers(0, 3), exists=st.booleans())
def test_one_file_named_twice_is_refused_however_spelled(tmp_path, flags, i, j, exists):
    """Two options naming one file (any spelling, existing or not) are refused naming both;
    other files pass."""
    (tmp_path / "sub").mkdir(exist_ok=True)
    if exists:
        (tmp_path / "f").write_text("kept")
    names = _spellings(tmp_path, "f")
    with pytest.raises(InvalidInputError) as info:
        check_distinct_files([(flags[0], names[i]), (flags[2], None), (flags[1], names[j])])
    assert str(info.value).startswith(flags[1]) and flags[0] in str(info.value)
    check_distinct_files([(flags[0], names[i]), (flags[1], str(tmp_path / "g")), (flags[2], "")])
    assert not exists or (tmp_path / "f").read_text() == "kept"


def _tune(tmp_path, *extra):
    return ["tune", "--layer", "cin=2,hin=6,cout=2,kh=3", "--measure", "model", "--budget", "2",
            "--no-verify", "--out-dir", str(tmp_path / "k"), *extra]


@pytest.mark.parametrize("first,second", [
    ("--log", "--export-cache"), ("--log", "--history"), ("--export-cache", "--history"),
])
def test_tune_refuses_one_new_file_for_two_outputs(capsys, tmp_path, first, second):
    """--log x --export-cache x (and the other pairs): refused before the run, and no file
    made (before: the export overwrote the log, or the history database took the log's
    name and the run failed after building the space, leaving the database behind)."""
    path = tmp_path / "x.out"
    code = main(_tune(tmp_path, first, str(path), second, f"{tmp_path}/./x.out"))
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert first in err and second in err and not path.exists()


def test_tune_refuses_to_export_over_the_log_it_resumes(capsys, tmp_path):
    """--resume run.jsonl --export-cache run.jsonl would replace the log by the cache."""
    log = tmp_path / "run.jsonl"
    assert main(_tune(tmp_path, "--log", str(log))) == 0
    before = log.read_bytes()
    capsys.readouterr()
    code = main(_tune(tmp_path, "--resume", str(log), "--export-cache", str(log)))
    out, err = capsys.readouterr()
    assert code == 2 and "--resume" in err and "--export-cache" in err
    assert log.read_bytes() == before


def test_replay_refuses_to_export_over_the_replayed_file(capsys, tmp_path, synth_cache_path):
    """The replayed cache is the user's recorded space: exporting the run's few entries
    over it (here through a link) is refused and the file stays as it was."""
    before = synth_cache_path.read_bytes()
    link = tmp_path / "link.json.gz"
    link.symlink_to(synth_cache_path)
    code = main(["tune", "--measure", f"replay:{synth_cache_path}", "--budget", "3",
                 "--export-cache", str(link)])
    out, err = capsys.readouterr()
    assert code == 2 and "--export-cache" in err and "replay" in err
    assert synth_cache_path.read_bytes() == before


def test_kernel_emit_refuses_the_database_it_reads(capsys, tmp_path):
    """kernel --from-history t.db --emit t.db would write the CUDA source over the database."""
    db = tmp_path / "t.db"
    assert main(_tune(tmp_path, "--device", "a100", "--history", str(db))) == 0
    capsys.readouterr()
    before = db.read_bytes()
    code = main(["kernel", "--layer", "cin=2,hin=6,cout=2,kh=3", "--from-history", str(db),
                 "--emit", os.path.join(str(tmp_path), ".", "t.db")])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "--emit" in err and "--from-history" in err
    assert db.read_bytes() == before


# -- writing whole files to links and devices ----------------------------------------

def test_an_export_through_a_link_keeps_the_link(capsys, tmp_path, synth_cache_path):
    """--export-cache latest.json, a link to runs/a.json: the file it points to is written
    and the link stays (it was replaced by a regular file)."""
    (tmp_path / "runs").mkdir()
    target, link = tmp_path / "runs" / "a.json", tmp_path / "latest.json"
    target.write_text("{}")
    link.symlink_to(target)
    code = main(["tune", "--measure", f"replay:{synth_cache_path}", "--budget", "3",
                 "--export-cache", str(link)])
    assert code == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert '"cache"' in target.read_text()


@pytest.mark.parametrize("data", [b"", b"x" * 100_000])
def test_write_atomic_writes_into_a_pipe_and_leaves_it_a_pipe(tmp_path, data):
    """A path that is no regular file (a pipe here; /dev/null, which root could otherwise
    replace, is one too) is written into, not replaced by a regular file."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()  # a daemon: if the pipe is never opened for writing, it is left blocked
    write_atomic(fifo, data)
    reader.join(10)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and got == [data]
    assert os.listdir(tmp_path) == ["fifo"]


def test_a_file_of_the_wrong_kind_is_named_for_what_it_is(capsys, tmp_path, synth_cache_path):
    """--resume of a tuning database (it was a UTF-8 decode error after the space was built)
    and an empty cache file: one line each, exit 2, nothing printed before."""
    db = tmp_path / "t.db"
    assert main(["history", "import", str(synth_cache_path), "--db", str(db)]) == 0
    (tmp_path / "empty.json").write_text("")
    capsys.readouterr()
    for argv, needle in [
        (["tune", "--layer", "cin=2,hin=6,cout=2,kh=3", "--measure", "model", "--budget", "2",
          "--resume", str(db)], "is an SQLite database, not a run's log"),
        (["tune", "--measure", f"replay:{tmp_path / 'empty.json'}", "--budget", "2"], "is empty"),
        (["history", "import", str(tmp_path / "empty.json"), "--db", str(db)], "is empty"),
    ]:
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == 2 and out == "" and len(err.splitlines()) == 1 and needle in err, argv


T4_RESULTS = {"schema_version": "1.0.0", "results": [
    {"timestamp": "2024-01-01 00:00:00", "configuration": {"a": 1}, "times": {},
     "correctness": 1, "objectives": ["time"], "invalidity": "correct",
     "measurements": [{"name": "time", "value": 1.5, "unit": "ms"}]}]}


@pytest.mark.parametrize("kind, said", [
    ("database", "is an SQLite database, not a run's log"),
    ("cache", "is a Kernel Tuner cache file, not a run's log"),
    ("gzip_cache", "is a Kernel Tuner cache file, not a run's log"),
    ("t4_results", "is a T4 results file, not a run's log"),
    ("t4_metadata", "is a T4 metadata file (the machine and software, no measurements), not a"),
    ("t1", "is a T1 tuning-problem description (parameters and restrictions, no measurements), "),
])
@pytest.mark.parametrize("alone", [True, False])
def test_resume_names_the_kind_of_a_file_that_is_no_log(capsys, tmp_path, synth_cache_path,
                                                          kind, said, alone):
    """Every other file iobound reads, given to --resume (alone, where its header is read
    for the run's options, or with the run's options): one line saying what it is, not a
    JSON or UTF-8 decoding error of its first line."""
    from tests.search.conftest import synth_cache_dict
    path = tmp_path / ("t.db" if kind == "database" else f"{kind}.json")
    if kind == "database":
        assert main(["history", "import", str(synth_cache_path), "--db", str(path)]) == 0
    elif kind == "gzip_cache":  # one line of JSON, gzipped: its first line is a JSON object
        path = synth_cache_path
    else:  # JSON over many lines: the first, "{", is no JSON at all
        path.write_text(json.dumps({
            "cache": synth_cache_dict(), "t4_results": T4_RESULTS,
            "t4_metadata": {"metadata": {"hardware": {}}},
            "t1": {"ConfigurationSpace": {"parameters": []}}}[kind], indent=1))
    capsys.readouterr()
    options = [] if alone else ["--layer", "cin=2,hin=6,cout=2,kh=3", "--measure", "model",
                                "--budget", "2"]
    code = main(["tune", "--resume", str(path), *options])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and said in err, err


LONG_NAME = "x" * 300  # longer than any file name the system takes (255 bytes)
SMALL = "cin=4,cout=8,hin=6,win=6,kh=3,kw=3"


@pytest.mark.parametrize("argv", [
    ["tune", "--layer", SMALL, "--budget", "2", "--measure", "model", "--resume", LONG_NAME],
    ["tune", "--layer", SMALL, "--budget", "2", "--measure", "model", "--log", LONG_NAME],
    ["tune", "--budget", "2", "--measure", "replay:" + LONG_NAME],
    ["history", "import", LONG_NAME, "--db", "h.db"],
    ["select", "--layer", SMALL, "--history", LONG_NAME],
    ["report", "--layer", SMALL, "--out-dir", "rep", "--history", LONG_NAME],
])
def test_a_path_the_system_refuses_is_one_line_and_exit_2(capsys, tmp_path, monkeypatch, argv):
    """A file name longer than the system allows (OSError ENAMETOOLONG from a mere stat)
    is bad input wherever it is given: one line naming the reason, exit 2, no traceback."""
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "File name too long" in err, err
    command = " ".join(argv[:2] if argv[0] == "history" else argv[:1])  # history's action too
    assert err.startswith(f"iobound {command}: error:")
