"""benchmarks/register_estimate.py: its rows, summary and fit, on one layer and two samples."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from benchmarks import register_estimate as rb
from iobound.devices import get_device
from iobound.errors import InvalidInputError
from kernels.nvcc import find_toolchain

needs_ptxas = pytest.mark.skipif(find_toolchain("sm_80") is None,
                                 reason="needs nvcc (or NVRTC + ptxas) for sm_80: ptxas' counts")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The script on one Winograd layer, two samples: (exit code, JSON, stdout)."""
    out = tmp_path_factory.mktemp("regbench") / "register_estimate.json"
    text = io.StringIO()
    with contextlib.redirect_stdout(text), contextlib.redirect_stderr(io.StringIO()):
        code = rb.main(["--layers", "resnet50.conv2_1b:winograd:4", "--samples", "2",
                        "--out", str(out)])
    return code, json.loads(out.read_text()), text.getvalue()


@needs_ptxas
def test_rows_hold_ptxas_numbers_and_the_model_s_shared_memory(run):
    """Every sampled config compiled: ptxas' registers, spills and shared memory are
    integers in range, and the model's shared memory is ptxas'."""
    code, data, _ = run
    assert code == 0 and data["arch"] == "sm_80" and data["device"] == "A100-SXM4-40GB"
    rows = data["rows"]
    assert len(rows) == 2 and all(r["status"] == "ok" for r in rows)
    for r in rows:
        assert r["algorithm"] == "winograd" and r["e"] == 4 and r["config"]["e"] == 4
        assert isinstance(r["ptxas_registers"], int) and 0 < r["ptxas_registers"] <= 255
        assert isinstance(r["ptxas_shared_bytes"], int) and r["ptxas_shared_bytes"] > 0
        assert r["ptxas_shared_bytes"] == r["model_shared_bytes"]
        assert min(r["spill_stores"], r["spill_loads"], r["stack_bytes"]) >= 0
        assert isinstance(r["estimated_registers"], int)
        assert r["estimated_registers"] > r["register_words"]
        assert r["tile_elements"] == 36  # (4 + 3 - 1)^2
        assert r["calculator_blocks_per_sm"] == rb.calculator_blocks(
            get_device("a100"), r["threads"], r["ptxas_shared_bytes"], r["ptxas_registers"])


@needs_ptxas
def test_summary_has_a_case_row_and_an_algorithm_row_and_prints_a_table(run):
    """One summary for the case and one for its algorithm, with the same (compiled) counts."""
    _, data, stdout = run
    groups = {s["group"]: s for s in data["summary"]}
    assert set(groups) == {"resnet50.conv2_1b winograd e=4", "all winograd"}
    for s in groups.values():
        assert s["configs"] == s["compiled"] == 2 and s["compile_errors"] == 0
        assert s["registers_ratio_min"] <= s["registers_ratio_median"] <= s["registers_ratio_max"]
        assert s["shared_equal_share"] == 1.0
        assert 0.0 <= s["spill_share"] <= 1.0 and 0.0 <= s["blocks_differ_share"] <= 1.0
    assert "ptxas/est: median [min, max]" in stdout and "all winograd" in stdout


def test_fit_recovers_a_line_and_leaves_out_the_capped_configs():
    """ptxas = 50 + 2 * words exactly, except two configs ptxas capped at 255."""
    rows = [{"status": "ok", "register_words": w, "estimated_registers": w + 24,
             "ptxas_registers": min(50 + 2 * w, 255)} for w in (1, 8, 16, 32, 64, 120, 128)]
    fit = rb.fit_registers("direct", rows, 255)
    assert fit["fitted_on"] == 5 and fit["configs"] == 7
    assert fit["a"] == pytest.approx(50) and fit["b"] == pytest.approx(2)
    assert fit["median_abs_error"] == pytest.approx(0, abs=1e-9)
    assert fit["c"] == 0.0
    assert fit["model_median_abs_error"] == 58  # |w + 24 - (50 + 2 w)| at the median w = 32


def test_winograd_fit_takes_the_tile_as_a_second_input():
    """ptxas = 6 + 0.5 * words + 2 * tile elements exactly: a, b and c come back."""
    rows = [{"status": "ok", "register_words": w, "tile_elements": t, "estimated_registers": 0,
             "ptxas_registers": 6 + 0.5 * w + 2 * t}
            for w, t in ((64, 16), (128, 16), (72, 36), (144, 36), (50, 25))]
    fit = rb.fit_registers("winograd", rows, 255)
    assert (fit["a"], fit["b"], fit["c"]) == (pytest.approx(6), pytest.approx(0.5), pytest.approx(2))


@pytest.mark.parametrize("spec", ["resnet50.conv2_1b:winograd", "resnet50.conv2_1b:winograd:1",
                                  "resnet50.conv1:winograd:2", "resnet50.conv2_1b:direct:2",
                                  "resnet50.conv2_1b:gemm"])
def test_a_bad_case_is_refused_before_anything_compiles(spec):
    """No e, e < 2, Winograd on a strided 7x7 layer, an e for direct, an unknown algorithm."""
    with pytest.raises(InvalidInputError, match="case"):
        rb.parse_case(spec)


@pytest.mark.parametrize("device, threads, shared, regs, expected", [
    ("v100", 256, 0, 33, 6),        # 33 registers take 1280 a warp: 48 warps, not 51
    ("a100", 32, 32768, 32, 4),     # 32 KiB + the 1 KiB reserved per block
    ("a100", 1024, 0, 255, 0),      # 1024 threads of 255 registers: no SM holds the block
])
def test_calculator_blocks_follow_the_occupancy_calculator(device, threads, shared, regs, expected):
    assert rb.calculator_blocks(get_device(device), threads, shared, regs) == expected


def test_without_a_compiler_it_says_so_in_one_line_and_exits_2(monkeypatch, capsys, tmp_path):
    """No toolchain for the arch: one line on stderr, exit 2, nothing written."""
    import kernels.nvcc
    from search.cli.script_entry import run_script

    monkeypatch.setattr(kernels.nvcc, "find_toolchain", lambda arch, nvcc=None: None)
    out = tmp_path / "r.json"
    assert run_script(rb.main, ["--samples", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no nvcc") and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_a_case_may_be_a_layer_spec():
    """A channel multiplier or a one-channel dense layer has no preset: a spec names it."""
    case = rb.parse_case("cin=3,hin=56,cout=48,kh=3,pad=1,groups=3")
    assert (case.layer.c_in_per_group, case.layer.c_out_per_group, case.algorithm) == (1, 16, "direct")
    assert case.label == f"{case.layer.short()} direct"
    assert rb.parse_case("cin=8,hin=16,cout=8,kh=3:winograd:2").e == 2


def test_a_kind_s_configs_are_also_scored_by_the_template_s_other_line():
    """Configs whose ptxas counts lie exactly on the direct line (uncapped: 32 threads on
    the V100): error 0 by the direct line, and the depthwise line's own gap."""
    from iobound.devices import get_device
    from kernels.limits import COMPILED_REGISTERS

    (a, b, _), (da, db, _) = COMPILED_REGISTERS["direct"], COMPILED_REGISTERS["depthwise"]
    rows = [{"status": "ok", "register_words": w, "threads": 32, "tile_elements": 0,
             "ptxas_registers": int(np.ceil(a + b * w))} for w in (2, 8, 20)]
    errors = rb.sibling_line_errors("depthwise", rows, get_device("v100"))
    assert list(errors) == ["direct"] and errors["direct"] == 0
    gap = np.median([abs(np.ceil(da + db * w) - np.ceil(a + b * w)) for w in (2, 8, 20)])
    assert rb.sibling_line_errors("direct", rows, get_device("v100")) == {"depthwise": gap}
    assert rb.sibling_line_errors("winograd", rows, get_device("v100")) == {}
