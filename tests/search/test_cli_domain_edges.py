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
