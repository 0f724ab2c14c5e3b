"""``iobound domain --winograd-e`` at its edges: the documented default 2,3,4 and values that
are not integers, refused in one line naming the option."""

from __future__ import annotations

import json

from search.cli.main import main

WINO = "cin=2,hin=12,cout=4,kh=3,pad=1"


def test_winograd_offers_e_2_3_4_by_default(capsys):
    assert main(["domain", "--layer", WINO, "--algorithm", "winograd", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["winograd_e"] == [2, 3, 4]


def test_a_winograd_e_that_is_not_an_integer_is_one_line(capsys):
    assert main(["domain", "--layer", WINO, "--algorithm", "winograd", "--winograd-e", "2,x"]) == 2
    err = capsys.readouterr().err
    assert "--winograd-e '2,x': give integers >= 2" in err and len(err.strip().splitlines()) == 1


def test_winograd_e_takes_spaces_and_at_most_eight_values(capsys):
    assert main(["domain", "--layer", WINO, "--algorithm", "winograd", "--winograd-e", "2, 3",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["winograd_e"] == [2, 3]
    assert main(["domain", "--layer", WINO, "--algorithm", "winograd",
                 "--winograd-e", "2,3,4,5,6,7,8,9,10"]) == 2
    assert "number of values" in capsys.readouterr().err


def test_a_direct_domain_names_no_winograd_e(capsys):
    assert main(["domain", "--layer", WINO, "--json"]) == 0
    assert "winograd_e" not in json.loads(capsys.readouterr().out)


def test_an_empty_pruned_space_is_a_size_to_report(capsys):
    """A 65x65 kernel on the T4: one unpruned configuration, none after Table 1."""
    assert main(["domain", "--layer", "cin=1,hin=65,cout=1,kh=65", "--device", "t4"]) == 0
    out = capsys.readouterr().out
    assert "pruned size    0 configs" in out and "knobs: none (the pruned space is empty)" in out
    assert main(["domain", "--layer", "cin=1,hin=65,cout=1,kh=65", "--device", "t4",
                 "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["unpruned_size"], got["pruned_size"], got["ratio"]) == (1, 0, 0.0)


def test_a_layer_with_no_configuration_at_all_is_one_line(capsys):
    assert main(["domain", "--layer", "cin=1,hin=200,cout=1,kh=100"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "shared memory and registers per block" in err
