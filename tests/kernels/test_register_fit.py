"""The register estimate's constants (kernels.limits.COMPILED_REGISTERS) against ptxas'
counts that benchmarks/register_estimate.py recorded (the committed
``benchmarks/results/register_estimate_<arch>.json``, a sample the constants were not fitted
on: they came from seeds 1 and 2, the files are seed 0)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks.register_estimate import fit_registers
from kernels.limits import COMPILED_REGISTERS

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
FILES = sorted(RESULTS.glob("register_estimate_sm_*.json"))


def _rows(algorithm):
    rows = [r for f in FILES for r in json.loads(f.read_text())["rows"]
            if r["algorithm"] == algorithm and r["status"] == "ok"]
    if not rows:
        pytest.skip(f"no recorded {algorithm} rows in {RESULTS}")
    return rows


@pytest.mark.parametrize("algorithm, slack", [("direct", 4.0), ("winograd", 2.0)])
def test_constants_are_as_good_as_a_fit_to_the_recorded_counts(algorithm, slack):
    """The constants' median error (capped at 255, as the fit's) is within ``slack``
    registers of a least-squares fit made on these very counts, and the model's recorded
    estimate is the constants' (capped by the launch bounds, so never above)."""
    rows = _rows(algorithm)
    a, b, c = COMPILED_REGISTERS[algorithm]
    ours = np.array([min(np.ceil(a + b * r["register_words"] + c * r.get("tile_elements", 0)), 255)
                     for r in rows])
    ptxas = np.array([r["ptxas_registers"] for r in rows])
    refit = fit_registers(algorithm, rows, 255)
    assert np.median(np.abs(ours - ptxas)) <= refit["median_abs_error"] + slack
    for r in rows:
        assert r["estimated_registers"] <= np.ceil(a + b * r["register_words"]
                                                   + c * r.get("tile_elements", 0))
