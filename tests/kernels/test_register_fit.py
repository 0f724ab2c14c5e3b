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


def _rows(kind):
    rows = [r for f in FILES for r in json.loads(f.read_text())["rows"]
            if r["kind"] == kind and r["status"] == "ok"]
    if not rows:
        pytest.skip(f"no recorded {kind} rows in {RESULTS}")
    return rows


@pytest.mark.parametrize("kind, slack", [("direct", 4.0), ("depthwise", 2.0), ("winograd", 2.0)])
def test_constants_are_as_good_as_a_fit_to_the_recorded_counts(kind, slack):
    """The constants' median error (capped at 255, as the fit's) is within ``slack``
    registers of a least-squares fit made on these very counts, and the model's recorded
    estimate is the constants' (capped by the launch bounds, so never above)."""
    rows = _rows(kind)
    a, b, c = COMPILED_REGISTERS[kind]
    ours = np.array([min(np.ceil(a + b * r["register_words"] + c * r.get("tile_elements", 0)), 255)
                     for r in rows])
    ptxas = np.array([r["ptxas_registers"] for r in rows])
    refit = fit_registers(kind, rows, 255)
    assert np.median(np.abs(ours - ptxas)) <= refit["median_abs_error"] + slack
    for r in rows:
        assert r["estimated_registers"] <= np.ceil(a + b * r["register_words"]
                                                   + c * r.get("tile_elements", 0))


def test_depthwise_kernels_are_estimated_by_their_own_row():
    """ptxas compiles a kernel of one input channel a group leaner than a direct one of the
    same register words (its channel loop runs once): ``direct``'s constants would be off by
    more than twice the ``depthwise`` row's median error on the recorded depthwise counts."""
    rows = _rows("depthwise")
    ptxas = np.array([r["ptxas_registers"] for r in rows])

    def error(kind):
        a, b, _ = COMPILED_REGISTERS[kind]
        return np.median(np.abs(np.minimum(np.ceil(a + b * np.array(
            [r["register_words"] for r in rows])), 255) - ptxas))

    assert error("direct") > 2 * error("depthwise")
