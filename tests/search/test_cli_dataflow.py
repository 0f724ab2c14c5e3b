"""``iobound dataflow``: JSON keys, the table, given tiles and one-line errors."""

import json

import pytest

from search.cli.main import main

SMALL = "cin=16,hin=16,cout=32,kh=3,pad=1"


def run_json(capsys, *argv):
    assert main(["dataflow", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_has_documented_keys(capsys):
    """The JSON carries the keys the issue names, with S in words."""
    d = run_json(capsys, "--layer", SMALL, "--fast-memory", "4KiB")
    for key in ("tiles", "io_exact", "io_paper_approx", "lower_bound", "ratio_to_bound",
                "footprint_words", "layer", "fast_memory_words", "algorithm", "optimality_condition"):
        assert key in d
    assert d["fast_memory_words"] == 1024 and d["algorithm"] == "direct"
    assert set(d["tiles"]) == {"x", "y", "z", "alpha"}
    assert d["footprint_words"] <= 1024 and d["ratio_to_bound"] >= 1


def test_json_winograd_tiles_have_e(capsys):
    """Winograd output names e and uses r^2 as R."""
    d = run_json(capsys, "--layer", SMALL, "--fast-memory", "2048", "--algorithm", "winograd",
                 "--winograd-e", "2")
    assert d["tiles"]["e"] == 2 and "alpha" not in d["tiles"]
    assert d["optimality_condition"]["reuse"] == 9


def test_given_tiles_are_evaluated(capsys):
    """--tiles is evaluated as given, and the exact I/O matches direct_io."""
    from dataflow.direct import DirectTiling, direct_io
    from iobound.layer_spec import parse_layer_spec

    d = run_json(capsys, "--layer", SMALL, "--fast-memory", "1024", "--tiles", "4,4,8,2")
    assert d["tiles"] == {"x": 4, "y": 4, "z": 8, "alpha": 2} and d["tiles_source"] == "given"
    assert d["io_exact"] == direct_io(parse_layer_spec(SMALL), DirectTiling(4, 4, 8, 2)).total


def test_processors_split_memory(capsys):
    """With N_p = 4 each block gets S/4 words, and the bound is taken there (+2 for the
    in-place multiply-accumulate, proofs/test_multi_block.py)."""
    d = run_json(capsys, "--layer", SMALL, "--fast-memory", "4096", "--processors", "4")
    assert d["block_memory_words"] == 1024 and d["lower_bound_fast_memory_words"] == 1026
    assert d["footprint_words"] <= 1024


def test_table_by_default(capsys):
    """Without --json a table with the ratio and the condition is printed."""
    assert main(["dataflow", "--layer", SMALL, "--fast-memory", "1024"]) == 0
    out = capsys.readouterr().out
    assert "ratio to bound" in out and "x*y=R*z" in out and "tiles (optimal-any)" in out


@pytest.mark.parametrize("argv, message", [
    (["--tiles", "4,4"], "x,y,z"),
    (["--tiles", "32,32,32"], "larger than w_out"),
    (["--tiles", "16,16,32"], "words on chip"),
    (["--winograd-e", "2"], "only meaningful"),
    (["--algorithm", "winograd", "--layer", "cin=4,hin=9,cout=4,kh=3,stride=2"], "stride"),
    (["--fast-memory", "8"], "too small"),
    (["--layer", "cin=16,hin=16,cout=32,kh=3,groups=3"], "groups=3 must divide"),
    (["--layer", "cin=16,hin=16,cout=32,kh=3,groups=0"], "groups=0"),
    (["--layer", "cin=16,hin=16,cout=32,kh=3,groups=x"], "groups='x'"),
    (["--layer", "cin=16,hin=16,cout=32,kh=3,groups=8", "--tiles", "4,4,8"], "one group's"),
    (["--layer", "cin=16,hin=16,cout=32,kh=3,groups=8", "--algorithm", "winograd"], "groups=8"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, message):
    """Bad input prints one stderr line naming the problem and exits with 2."""
    base = {"--layer": SMALL, "--fast-memory": "1024"}
    args = list(argv)
    for k, v in base.items():
        if k not in args:
            args += [k, v]
    assert main(["dataflow", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err


def test_any_tiles_by_default_never_worse(capsys):
    """Tiles of any size are the default (--any-tiles says so explicitly); they search a
    superset of --dividing-tiles, so their I/O is never larger."""
    layer = "cin=64,hin=56,cout=64,kh=3,pad=1"
    div = run_json(capsys, "--layer", layer, "--fast-memory", "48KiB", "--dividing-tiles")
    default = run_json(capsys, "--layer", layer, "--fast-memory", "48KiB")
    anyt = run_json(capsys, "--layer", layer, "--fast-memory", "48KiB", "--any-tiles")
    assert default == anyt and anyt["tiles_source"] == "optimal-any" and div["tiles_source"] == "optimal"
    assert anyt["io_exact"] <= div["io_exact"]


def test_runs_are_reported_for_non_overlapping_windows(capsys):
    """A 1x1 layer gets raster-run tiles when they move less; the table says so; the --order
    choices are every family's orders."""
    from dataflow.families import dataflow_family
    from search.cli.dataflow_cmd import _ORDERS

    assert _ORDERS == dataflow_family("direct").orders + dataflow_family("winograd").orders
    layer = "cin=512,hin=28,cout=128,kh=1"
    d = run_json(capsys, "--layer", layer, "--fast-memory", "48KiB")
    div = run_json(capsys, "--layer", layer, "--fast-memory", "48KiB", "--dividing-tiles")
    assert d["order"] == "output-runs" and d["tiles"] == {"m": 88, "z": 128}
    assert d["io_exact"] < div["io_exact"] and d["ratio_to_bound"] >= 1
    assert main(["dataflow", "--layer", layer, "--fast-memory", "48KiB"]) == 0
    assert "runs of 88 consecutive output positions" in capsys.readouterr().out


@pytest.mark.parametrize("extra, message", [
    (["--order", "output-runs", "--dividing-tiles"], "not rectangles dividing the output"),
    (["--order", "output-runs", "--tiles", "4,4,8"], "needs run tiles"),
    (["--any-tiles", "--dividing-tiles"], "not allowed with"),
    (["--order", "input-runs", "--fast-memory", "8"], "too small for any run block"),
])
def test_run_order_errors_are_one_line(capsys, extra, message):
    """Run orders with dividing or given rectangles, too little memory, and both size options
    exit 2 (argparse's usage line plus one line for the last)."""
    assert main(["dataflow", "--layer", "cin=8,hin=8,cout=8,kh=1", "--fast-memory", "512", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) <= 2 and message in err


def test_run_order_on_overlapping_windows_is_named(capsys):
    """A run order on a 3x3 layer says why runs do not apply."""
    assert main(["dataflow", "--layer", "cin=8,hin=8,cout=8,kh=3", "--fast-memory", "512",
                 "--order", "output-runs"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "windows that do not overlap" in err
    assert "group" not in err  # a dense layer: only what is wrong is named (it said "neither")


def test_json_continuous_optimum_satisfies_condition(capsys):
    """The reported SymPy optimum has x*y = R_df*z."""
    d = run_json(capsys, "--layer", SMALL, "--fast-memory", "4096")
    c = d["continuous_optimum"]
    assert c["x"] * c["y"] == pytest.approx(c["reuse"] * c["z"]) and c["reuse"] == 9


def test_grouped_layer_is_tiled_per_group(capsys):
    """A depthwise preset: tiles of one group (z = 1), I/O above the bound, 'per group' shown."""
    d = run_json(capsys, "--layer", "mobilenet.conv_dw_2", "--fast-memory", "48KiB")
    assert d["layer"]["groups"] == 64 and d["tiles"]["z"] == 1
    assert d["tiles_source"] == "optimal-any per group"
    assert d["io_exact"] >= d["lower_bound"] > 0
    assert main(["dataflow", "--layer", "cin=16,hin=16,cout=32,kh=3,pad=1,groups=4",
                 "--fast-memory", "1024", "--tiles", "4,4,8"]) == 0
    assert "tiles (given per group)" in capsys.readouterr().out
