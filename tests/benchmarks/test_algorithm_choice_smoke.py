"""Smoke test of benchmarks/algorithm_choice.py on two small layers.

The oracle evaluates every candidate's whole space with the same analytic model the
tuner measures with, so no tuned layer can be faster than it, and the tuner's direct
candidate can be no faster than its chosen algorithm.
"""

from __future__ import annotations

import json

from benchmarks import algorithm_choice as ac
from iobound.layer import ConvLayer


def _layers(name):
    return [ConvLayer(n=1, c_in=8, h_in=12, w_in=12, c_out=16, k_h=3, k_w=3, padding=1, name="a.c1"),
            ConvLayer(n=1, c_in=8, h_in=12, w_in=12, c_out=8, k_h=1, k_w=1, name="a.c2")]


def test_tuned_choices_are_never_faster_than_the_oracle(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("iobound.networks.network_layers", _layers)
    out = tmp_path / "ac.json"
    assert ac.main(["--network", "toy", "--budget", "4", "--seeds", "0", "--out", str(out)]) == 0
    [run] = json.loads(out.read_text())["runs"]
    detail = run["layers_detail"]
    assert set(detail) == {"a.c1", "a.c2"}
    assert detail["a.c2"]["tuned"][0] == "direct"  # 1x1: no Winograd candidate
    for d in detail.values():
        (_, oracle_ms), (_, chosen_ms, direct_ms, evals) = d["oracle"], d["tuned"]
        assert oracle_ms <= chosen_ms * (1 + 1e-9) and chosen_ms <= direct_ms
    assert run["same_algorithm"] == sum(d["oracle"][0] == d["tuned"][0] for d in detail.values())
    assert run["chosen_over_oracle"] >= 1 - 1e-9
    assert "seed 0:" in capsys.readouterr().out
