"""``iobound dataflow`` option checks found by mutation testing: each bad combination is
exit 2 with one stderr line naming the option the user typed (the CLI contract in
DESIGN.md), and a nonsensical combination is refused rather than silently dropped."""

import pytest

from search.cli.main import main

SMALL = "cin=16,hin=16,cout=32,kh=3,pad=1"


@pytest.mark.parametrize("extra, needle", [
    (["--tiles", "4,4,8", "--any-tiles"], "--any-tiles"),
    (["--tiles", "4,4,8", "--dividing-tiles"], "--dividing-tiles"),
    (["--winograd-e", "2"], "--winograd-e"),
    (["--algorithm", "direct", "--winograd-e", "3"], "--winograd-e"),
    (["--tiles", "4,4,8,2,1"], "x,y,z or x,y,z,alpha"),
    (["--tiles", "4,4"], "x,y,z or x,y,z,alpha"),
    (["--algorithm", "winograd", "--tiles", "4,4,8,2"], "winograd needs x,y,z"),
    (["--tiles", "4,4,-8"], "--tiles"),
    (["--tiles", "4,4,0"], "--tiles"),
])
def test_conflicting_options_are_one_line_naming_the_option(capsys, extra, needle):
    """--tiles with a tile-search option, and --winograd-e without Winograd, are refused."""
    assert main(["dataflow", "--layer", SMALL, "--fast-memory", "1024", *extra]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and needle in err
    assert "Traceback" not in err


class _Stop(Exception):
    """Raised by the spy once it has seen the call (the evaluation itself is not needed)."""


@pytest.mark.parametrize("extra, expected", [
    (["--algorithm", "winograd", "--winograd-e", "4"], {"algorithm": "winograd", "e": 4}),
    (["--processors", "3"], {"processors": 3}),
    (["--dividing-tiles"], {"divisors": True}),
    (["--any-tiles"], {"divisors": False}),
    (["--order", "weight"], {"order": "weight"}),
    (["--tiles", "4,4,8,2"], {"tiling": ("DirectTiling", 4, 4, 8, 2)}),
    (["--tiles", "4,4,8"], {"tiling": ("DirectTiling", 4, 4, 8, 1)}),
    (["--algorithm", "winograd", "--winograd-e", "4", "--tiles", "4,4,8"],
     {"tiling": ("WinogradTiling", 4, 4, 4, 8)}),
    (["--algorithm", "winograd", "--tiles", "4,4,8"], {"tiling": ("WinogradTiling", 2, 4, 4, 8)}),
    ([], {"algorithm": "direct", "processors": 1, "e": None, "tiling": None, "divisors": False,
          "order": None}),
])
def test_options_reach_evaluate_dataflow(monkeypatch, extra, expected):
    """Each option is passed to :func:`dataflow.evaluate.evaluate_dataflow` as the keyword
    it configures (S converted to words: 4KiB of fp32 is 1024 words); --tiles is the
    tiling of the algorithm, with e from --winograd-e (default 2) and alpha 1 when omitted."""
    import dataclasses

    import dataflow.evaluate

    seen = {}

    def spy(layer, s, **kwargs):
        seen.update(kwargs, s=s, c_in=layer.c_in)
        t = kwargs["tiling"]  # as (class, fields in constructor order): e first for Winograd
        if t is not None:
            seen["tiling"] = (type(t).__name__, *(getattr(t, f.name) for f in dataclasses.fields(t)))
        raise _Stop

    monkeypatch.setattr(dataflow.evaluate, "evaluate_dataflow", spy)
    with pytest.raises(_Stop):
        main(["dataflow", "--layer", SMALL, "--fast-memory", "4KiB", *extra])
    assert seen["s"] == 1024 and seen["c_in"] == 16
    assert {k: seen[k] for k in expected} == expected


@pytest.mark.parametrize("tiles", ["-1,2,3", "-4,4,4,2"])
def test_a_tile_list_that_starts_with_a_minus_is_checked_as_tiles(capsys, tiles):
    """argparse takes ``-1,2,3`` after ``--tiles`` for an option ("expected one
    argument"); the CLI hands it to --tiles, whose check says what is wrong."""
    code = main(["dataflow", "--layer", "alexnet.conv2", "--fast-memory", "1000", "--tiles", tiles])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err == f"iobound dataflow: error: --tiles '{tiles}': give positive integers x,y,z[,alpha]"
