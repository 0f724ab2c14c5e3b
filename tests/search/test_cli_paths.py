"""Output paths are checked before any work starts (search/cli/common.py)."""

import argparse
import re

import pytest

from iobound import limits
from iobound.errors import InvalidInputError
from search.cli.common import check_output_dir, check_output_file, int_option, json_safe
from search.cli.main import main


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
