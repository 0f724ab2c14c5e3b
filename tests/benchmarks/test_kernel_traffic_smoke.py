"""Smoke test of benchmarks/kernel_traffic.py on one small layer and one budget."""

from __future__ import annotations

import json

from benchmarks import kernel_traffic as kt
from iobound.devices import get_device
from iobound.layer_spec import parse_layer_spec
from kernels.config import check_config, onchip_words
from kernels.verify import expected_io

LAYER = "cin=4,hin=8,cout=8,kh=3,pad=1"


def test_best_config_is_the_least_traffic_valid_config_within_the_budget():
    """No valid candidate within the budget has less exact traffic than the chosen one."""
    layer, device = parse_layer_spec(LAYER), get_device("a100")
    for algorithm in ("direct", "winograd"):
        best = kt.best_config(layer, algorithm, 512, device)
        assert best is not None and onchip_words(layer, best) <= 512
        assert check_config(layer, best, device) == []
        least = expected_io(layer, best).total
        for cfg in kt._candidates(layer):
            if (cfg.algorithm == algorithm and onchip_words(layer, cfg) <= 512
                    and not check_config(layer, cfg, device)):
                assert expected_io(layer, cfg).total >= least


def test_run_writes_rows_with_counted_equal_formula_and_ratio_at_least_one(tmp_path, capsys):
    """The benchmark emulates the best configs: counted = formula, ratio >= 1, a table and JSON."""
    out = tmp_path / "kt.json"
    assert kt.main(["--layers", LAYER, "--budgets", "512", "--out", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert {r["algorithm"] for r in rows} == {"direct", "winograd"}
    for r in rows:
        assert r["traffic_matches"] and r["numerics_ok"]
        assert r["flops_matches"] and r["flops"] == r["model_flops"] > 0
        assert r["counted_traffic"] == r["formula_traffic"] and r["ratio"] >= 1.0
        assert r["onchip_words"] <= r["budget_words"] == 512
    assert "| layer | algorithm |" in capsys.readouterr().out
