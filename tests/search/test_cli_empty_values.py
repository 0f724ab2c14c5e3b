"""An empty value is refused in one line naming the option, exit 2: ``--device ""`` and
the like were taken as not given (the default ran silently), ``--winograd-e 2,,3`` passed
over its empty item, and an empty path was read as the current folder or named a folder
(``history import ""``, ``tune --resume ""``, ``history export ... ""``)."""

from __future__ import annotations

import pytest

from search.cli.main import main

LAYER = "cin=8,hin=8,cout=16,kh=3,pad=1"
TUNE = ["tune", "--layer", LAYER, "--measure", "model", "--budget", "2", "--no-verify"]


@pytest.mark.parametrize("argv, says", [
    ([*TUNE, "--device", ""], "argument --device: the device name is empty"),
    ([*TUNE, "--executor", ""], "argument --executor: the executor name is empty"),
    ([*TUNE, "--resume", ""], "argument --resume: the path is empty"),
    (["select", "--layer", LAYER, "--history", ""], "argument --history: the path is empty"),
    (["report", "--layer", LAYER, "--history", ""], "argument --history: the path is empty"),
    (["dataflow", "--layer", LAYER, "--fast-memory", "1024", "--tiles", ""],
     "argument --tiles: the tile list is empty"),
    (["history", "list", "--db", "h.db", "--layer", ""], "argument --layer: the layer name is empty"),
    (["history", "best", "--db", "h.db", "--layer", ""], "argument --layer: the layer name is empty"),
    (["history", "list", "--db", "h.db", "--device", ""], "argument --device: the device name is empty"),
    (["history", "remove", "--db", "h.db", "--layer", ""], "argument --layer: the layer name is empty"),
    (["history", "import", "--db", "h.db", ""], "argument FILE: the path is empty"),
    (["history", "export", "--db", "h.db", ""], "argument FILE: the path is empty"),
    (["domain", "--layer", LAYER, "--algorithm", "winograd", "--winograd-e", "2,,3"],
     "--winograd-e '2,,3': an item is empty"),
])
def test_an_empty_value_is_one_line_and_exit_2(argv, says, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err, err
    assert not (tmp_path / "h.db").exists()


@pytest.mark.parametrize("e", ["0", "1", "2,1"])
def test_a_winograd_e_below_2_says_2(e, capsys):
    """domain's --winograd-e 0 said "below the minimum 1", and 1 is refused too."""
    assert main(["domain", "--layer", LAYER, "--algorithm", "winograd", "--winograd-e", e]) == 2
    assert "give integers >= 2" in capsys.readouterr().err
