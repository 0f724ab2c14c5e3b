"""``iobound domain``: JSON keys, sizes equal ConvSpace, text output and one-line errors."""

import json

import pytest

from iobound.layer_spec import parse_layer_spec
from search.cli.main import main
from search.conv_space import ConvSpace

SMALL = "cin=4,hin=8,cout=64,kh=3"


def run_json(capsys, *argv):
    assert main(["domain", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_keys_and_sizes(capsys):
    """The JSON has the issue's keys, equal to ConvSpace's exact sizes."""
    d = run_json(capsys, "--layer", SMALL, "--device", "v100")
    space = ConvSpace(parse_layer_spec(SMALL), "v100")
    assert (d["unpruned_size"], d["pruned_size"]) == (space.unpruned_size, space.pruned_size)
    assert d["ratio"] == pytest.approx(d["pruned_size"] / d["unpruned_size"])
    assert d["params"] == ["x", "y", "z", "alpha", "tx", "ty", "tz"]


def test_json_winograd(capsys):
    """Winograd output lists e and the chosen e values."""
    d = run_json(capsys, "--layer", "cin=4,hin=13,cout=8,kh=3,pad=1", "--algorithm", "winograd",
                 "--winograd-e", "2")
    assert d["params"][0] == "e" and d["values"]["e"] == [2] and d["winograd_e"] == [2]


def test_text_output_names_sizes_and_knobs(capsys):
    """The human output states both sizes, the ratio and every knob's range."""
    assert main(["domain", "--layer", SMALL]) == 0
    out = capsys.readouterr().out
    assert "unpruned size  6,270 configs" in out and "pruned size    4,878 configs" in out
    assert "ratio" in out and all(f"  {p} " in out for p in ("x", "alpha", "tz"))


@pytest.mark.parametrize("argv,needle", [
    (["--layer", "alexnet.conv1", "--algorithm", "winograd"], "stride 1"),
    (["--layer", SMALL, "--device", "nope"], "unknown device"),
    (["--layer", SMALL, "--winograd-e", "2"], "--winograd-e"),
    (["--layer", SMALL, "--algorithm", "winograd", "--winograd-e", "1"], "--winograd-e"),
])
def test_errors_are_one_line_exit_2(capsys, argv, needle):
    """Bad input gives exit code 2 and one stderr line naming the problem."""
    assert main(["domain", *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1
