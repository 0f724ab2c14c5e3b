"""``iobound dataflow --order <x>-runs --tiles m,z``: given run tiles are evaluated (the search
finds and prints run tiles ``m=.. z=..``; a user must be able to evaluate the same ones), their
I/O checked against a brute-force count of the blocks; wrong tile counts are one line, exit 2."""

import itertools
import json

import pytest

from search.cli.main import main

# windows do not overlap (kernel 2 = stride 2), padding clips the border windows
RUNS_LAYER = "n=2,cin=3,hin=7,win=5,cout=5,kh=2,stride=2,pad=1"


def _brute_io(n, c_in, h_in, w_in, c_out, k, mu, pad, m, z, order):
    """Loads + stores of the run dataflow, counted block by block from its definition."""
    h_out, w_out = (h_in + 2 * pad - k) // mu + 1, (w_in + 2 * pad - k) // mu + 1
    flat = [(oh, ow) for oh in range(h_out) for ow in range(w_out)]
    runs = [flat[s:s + m] for s in range(0, len(flat), m)]
    chunks = [range(c, min(c + z, c_out)) for c in range(0, c_out, z)]

    def inputs(run):   # distinct in-bounds inputs the run's windows read, all channels
        return {(ci, oh * mu + i - pad, ow * mu + j - pad) for ci in range(c_in) for oh, ow in run
                for i in range(k) for j in range(k)
                if 0 <= oh * mu + i - pad < h_in and 0 <= ow * mu + j - pad < w_in}

    def weights(cos):
        return len(cos) * c_in * k * k

    out = n * c_out * h_out * w_out
    if order == "output-runs":     # a block per image, run and chunk; nothing kept
        loads = sum(len(inputs(r)) + weights(c) for _ in range(n) for r in runs for c in chunks)
    elif order == "weight-runs":   # a block per chunk keeps its weights, walks images and runs
        loads = sum(weights(c) + n * sum(len(inputs(r)) for r in runs) for c in chunks)
    else:                          # a block per image and run keeps its inputs, walks the chunks
        loads = sum(len(inputs(r)) + sum(weights(c) for c in chunks) for _ in range(n) for r in runs)
    return loads + out


@pytest.mark.parametrize("order", ["output-runs", "weight-runs", "input-runs"])
def test_given_run_tiles_are_evaluated(capsys, order):
    for m, z in itertools.product((1, 3, 7, 12), (1, 2, 5)):
        assert main(["dataflow", "--layer", RUNS_LAYER, "--fast-memory", "1MiB", "--order", order,
                     "--tiles", f"{m},{z}", "--json"]) == 0, capsys.readouterr().err
        d = json.loads(capsys.readouterr().out)
        assert d["tiles"] == {"m": m, "z": z} and d["order"] == order
        assert d["tiles_source"] == "given"
        assert d["io_exact"] == _brute_io(2, 3, 7, 5, 5, 2, 2, 1, m, z, order)


def test_given_run_tiles_match_the_searched_ones(capsys):
    """The tiles the search prints, given back, give the same report."""
    argv = ["dataflow", "--layer", "resnet50.conv3_2a", "--fast-memory", "48KiB", "--json"]
    assert main(argv) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["tiles"] == {"m": 88, "z": 128} and found["order"] == "output-runs"
    assert main(argv + ["--order", "output-runs", "--tiles", "88,128"]) == 0
    given = json.loads(capsys.readouterr().out)
    assert given["tiles_source"] == "given"
    assert {k: v for k, v in given.items() if k != "tiles_source"} == \
        {k: v for k, v in found.items() if k != "tiles_source"}


def test_grouped_layer_takes_per_group_run_tiles(capsys):
    """A grouped 1x1 layer's search prints per-group run tiles; given back they are evaluated."""
    base = ["dataflow", "--layer", "cin=8,hin=8,cout=8,kh=1,groups=2", "--fast-memory", "1024",
            "--order", "output-runs", "--json"]
    assert main(base) == 0
    found = json.loads(capsys.readouterr().out)
    t = found["tiles"]
    assert main(base + ["--tiles", f"{t['m']},{t['z']}"]) == 0, capsys.readouterr().err
    given = json.loads(capsys.readouterr().out)
    assert given["io_exact"] == found["io_exact"] and given["tiles"] == t
    # 2 groups x (inputs once, weights once per run, outputs once)
    assert given["io_exact"] == 2 * (-(-4 // t["z"]) * 4 * 64 + (-(-64 // t["m"])) * 4 * 4 + 4 * 64)


@pytest.mark.parametrize("tiles", ["4,1,2", "4,1,2,1", "4"])
def test_run_order_with_rectangle_tiles_is_one_line(capsys, tiles):
    assert main(["dataflow", "--layer", RUNS_LAYER, "--fast-memory", "1MiB", "--order",
                 "output-runs", "--tiles", tiles]) == 2
    cap = capsys.readouterr()
    assert not cap.out and len(cap.err.splitlines()) == 1
    assert "m,z" in cap.err and "DirectTiling" not in cap.err


def test_api_takes_run_tiles():
    from dataflow.evaluate import evaluate_dataflow
    from dataflow.runs import RunTiling, run_io
    from iobound.layer_spec import parse_layer_spec

    layer = parse_layer_spec(RUNS_LAYER)
    rep = evaluate_dataflow(layer, 4096, tiling=RunTiling(3, 2))   # default: output-runs
    assert rep.order == "output-runs" and rep.io == run_io(layer, RunTiling(3, 2), "output-runs")
    rep = evaluate_dataflow(layer, 4096, tiling=RunTiling(3, 2), order="input-runs")
    assert rep.io.total == _brute_io(2, 3, 7, 5, 5, 2, 2, 1, 3, 2, "input-runs")


@pytest.mark.parametrize("extra", [[], ["--order", "output-runs"], ["--algorithm", "winograd"]])
def test_long_tiles_text_is_not_echoed_whole(capsys, extra):
    """A --tiles of 20,001 numbers is refused in one short line, not echoed in full."""
    tiles = ",".join(["1"] * 20001)
    assert main(["dataflow", "--layer", "cin=2,hin=8,cout=2,kh=3", "--fast-memory", "1024",
                 *extra, "--tiles", tiles]) == 2
    cap = capsys.readouterr()
    assert len(cap.err.splitlines()) == 1 and len(cap.err) < 400
