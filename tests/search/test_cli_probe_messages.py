"""Messages a CLI probe found misleading: a log that is one unfinished line was called
"empty", and an empty --db / --from-history was "no such database"."""

from __future__ import annotations

import pytest

from search.cli.main import main


def _line(capsys) -> str:
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("content, said", [
    (b"", "is empty (no header)"),
    (b'{"a": [1,2', "holds one unfinished line that is no log header"),
])
def test_a_resumed_file_without_a_header_says_what_it_holds(tmp_path, capsys, content, said):
    log = tmp_path / "r.jsonl"
    log.write_bytes(content)
    assert main(["tune", "--resume", str(log)]) == 2
    assert said in _line(capsys)


@pytest.mark.parametrize("argv", [["history", "list", "--db", ""],
                                  ["history", "best", "--db", " "],
                                  ["kernel", "--layer", "alexnet.conv2", "--from-history", ""]])
def test_an_empty_database_path_is_named_empty(capsys, argv):
    assert main(argv) == 2
    option = argv[-2]
    assert f"error: {option}: the path is empty" in _line(capsys)


@pytest.mark.parametrize("config", ["", " , "])
def test_an_empty_config_is_named_empty(capsys, tmp_path, config):
    """Was "a default thread block needs positive tiles x, y, z"."""
    argv = ["kernel", "--layer", "alexnet.conv2", "--config", config, "--emit", str(tmp_path / "k.cu")]
    assert main(argv) == 2
    assert "the config is empty; give key=value items" in _line(capsys)
    assert not (tmp_path / "k.cu").exists()


def test_domain_names_a_winograd_tile_past_the_largest_served(capsys):
    """``domain --winograd-e 31`` on a 3x3 layer said no configuration fits the template;
    the reason is the tile, as ``bound`` says."""
    assert main(["domain", "--layer", "vgg16.conv1_2", "--algorithm", "winograd",
                 "--winograd-e", "31"]) == 2
    assert "e = 31 with r = 3 gives an input tile of 33; e + r - 1 must be <= 32" in _line(capsys)


@pytest.mark.parametrize("value", ["-1", "-inf", "-48KiB", "-INF"])
def test_a_negative_fast_memory_is_named_negative(capsys, value):
    """``-1`` was "cannot read size", ``-inf`` argparse's "expected one argument"."""
    assert main(["bound", "--layer", "alexnet.conv1", "--fast-memory", value]) == 2
    assert f"size '{value}' is negative" in _line(capsys)


def test_report_names_a_folder_in_its_place_and_keeps_a_cache(tmp_path, capsys):
    """A folder named io.png in --out-dir was "--out-dir '.../io.png' is a folder; give a
    file name" (the option takes no file); a Kernel Tuner cache copied there as
    selection.json was replaced. A report over its own earlier report goes ahead."""
    taken = tmp_path / "a"
    (taken / "io.png").mkdir(parents=True)
    assert main(["report", "--layer", "alexnet.conv2", "--out-dir", str(taken)]) == 2
    assert "cannot write io.png in --out-dir" in _line(capsys)
    kept = tmp_path / "b"
    kept.mkdir()
    cache = kept / "selection.json"
    cache.write_text('{"tune_params": {"a": [1]}, "tune_params_keys": ["a"], '
                     '"cache": {"1": {"a": 1, "time": 2.0}}}')
    before = cache.read_bytes()
    assert main(["report", "--layer", "alexnet.conv2", "--out-dir", str(kept)]) == 2
    assert "selection.json" in _line(capsys) and cache.read_bytes() == before
    again = tmp_path / "c"
    for _ in range(2):
        assert main(["report", "--layer", "alexnet.conv2", "--out-dir", str(again)]) == 0
    capsys.readouterr()
