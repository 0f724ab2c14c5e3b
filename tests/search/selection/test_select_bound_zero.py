"""A layer whose every output lies in the padding has a best lower bound of 0 words (no
input is used: tests/kernels/test_codegen_edge_cases.py). ``kernel --emulate`` and ``tune``
print "no ratio" for it (commit 296d213); ``select`` and ``report`` divided the chosen
kernel's I/O by that 0 (``LayerSelection.io_gap``): a ZeroDivisionError traceback.
Reference: the layer's outputs, computed by hand to be all padding (1x1 image, 1x1 kernel,
stride 2, padding 1: the one input pixel is never under a window)."""

from __future__ import annotations

import json
import math

from search.cli.main import main

LAYER = "cin=2,hin=1,cout=3,kh=1,stride=2,pad=1"


def _every_output_is_padding() -> bool:
    h_in, pad, stride, k = 1, 1, 2, 1
    h_out = (h_in + 2 * pad - k) // stride + 1
    taps = {o * stride - pad + i for o in range(h_out) for i in range(k)}
    return not any(0 <= t < h_in for t in taps)


def test_select_and_report_take_a_bound_of_zero(capsys, tmp_path, monkeypatch):
    assert _every_output_is_padding()
    monkeypatch.chdir(tmp_path)
    assert main(["select", "--layer", LAYER, "--json"]) == 0
    entry = json.loads(capsys.readouterr().out)["layers"][0]
    assert entry["lower_bound"] == 0 and entry["io_words"] > 0
    gap = entry["io_gap"]
    assert gap is None or math.isinf(gap)  # there is no finite ratio to a 0 bound
    assert main(["select", "--layer", LAYER]) == 0  # the human table of the same layer
    assert "0" in capsys.readouterr().out
    assert main(["report", "--layer", LAYER, "--out-dir", "rep"]) == 0
    capsys.readouterr()
    assert (tmp_path / "rep" / "table.md").is_file() and (tmp_path / "rep" / "io.png").is_file()
